"""Whether the cluster's link delayer lives, and what it holds now, read from outside it.

The delayer is recorded in the state file (its pid) by ``gradcode.cluster.latency.delay``,
which starts, changes and stops it; a run only asks whether it still runs (a delayer that died
lets packets through undelayed) and which latencies it holds.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from gradcode.livecluster.files import delayer_config_path, delayer_status_path, read_json

#: how the delayer is recognised among processes (its module, in its command line)
MODULE = "gradcode.cluster.latency.delayer"
#: its module before the cluster had rooms: the delayer of a cluster brought up by an older
#: checkout is still found, so ``status``, ``latency`` and ``down`` work across the move
FORMER_MODULES = ("gradcode.cluster.delayer",)


def stat_fields(pid: int) -> list[str]:
    """``/proc/PID/stat``'s fields from the state (field 3) on: the command name before them
    may hold spaces and parentheses."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()


def delayer_entry(resources: Iterable[dict[str, Any]]) -> dict[str, Any] | None:
    """The delayer's entry among the state file's resources (``None``: no latency asked)."""
    return next((e for e in resources if e["kind"] == "delayer"), None)


def running(pid: int | None) -> bool:
    """Whether ``pid`` is a live delayer (not some later process that got its number)."""
    if not pid:
        return False
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        state = stat_fields(pid)[0]
    except (OSError, IndexError):
        return False
    return state != "Z" and any(name.encode() in cmdline for name in (MODULE, *FORMER_MODULES))


def read_status() -> dict[str, Any] | None:
    return read_json(delayer_status_path())


def queues_held() -> dict[str, list[int]] | None:
    """Each queue's (latency, jitter) in nanoseconds as the delayer's setting says now (queue
    numbers as strings), ``None`` when it cannot be read."""
    config = read_json(delayer_config_path())
    try:
        return None if config is None else config["queues"]
    except KeyError:
        return None
