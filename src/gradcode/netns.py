"""Which kernel and which network namespace this process runs in: the kernel's ``boot_id``
(ranks on one machine share it, and so one monotonic clock) and the inode of
``/proc/self/ns/net`` (ranks of one emulated node share it; an inode is unique only on its
own machine). Read by the runtime's placement record and by the fidelity record's TCP
counters, which belong to a namespace, not to a process."""

from __future__ import annotations

import os
from pathlib import Path

NAMESPACE = Path("/proc/self/ns/net")
BOOT_ID = Path("/proc/sys/kernel/random/boot_id")


def namespace_inode() -> int | None:
    """The inode of this process's network namespace; ``None`` where it cannot be read."""
    try:
        return os.stat(NAMESPACE).st_ino
    except OSError:
        return None


def boot_id() -> str | None:
    """This kernel's boot id; ``None`` where it cannot be read."""
    try:
        return BOOT_ID.read_text().strip()
    except OSError:
        return None
