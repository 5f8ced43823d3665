"""Where the emulated cluster keeps its state on this machine, and reading it back.

The folder lives under ``/run``, which a reboot clears together with everything the state
file lists. ``gradcode.cluster.state`` writes the state file (each resource before it is
made) and ``gradcode.cluster.latency`` the delayer's files; a run only reads them.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

#: the variables that move the two folders below (tests set them for the runs they start)
RUN_DIR_ENV, NETNS_DIR_ENV = "GRADCODE_CLUSTER_RUN_DIR", "GRADCODE_CLUSTER_NETNS_DIR"
#: the cluster's runtime folder: state file, hostnames' UTS mounts, launcher, pid files
RUN_DIR = Path(os.environ.get(RUN_DIR_ENV, "/run/gradcode-cluster"))
#: where a run looks for each node's network namespace: where ``ip netns add`` mounts it (the
#: cluster's machinery always makes them there); another folder only for tests, whose runs
#: count as on a node through a link to their own namespace there
NETNS_DIR = Path(os.environ.get(NETNS_DIR_ENV, "/run/netns"))


def state_path() -> Path:
    return RUN_DIR / "state.json"


def delayer_config_path() -> Path:
    """The latency and jitter the delayer is to hold per queue (``gradcode cluster latency``
    rewrites it without touching the state file)."""
    return RUN_DIR / "delayer.json"


def delayer_status_path() -> Path:
    """What the delayer says of itself, rewritten every second while it lives."""
    return RUN_DIR / "delayer-status.json"


def in_namespace_of(names: Iterable[str]) -> bool:
    """Whether this process runs in the network namespace of one of the nodes ``names`` (as
    ``ip netns identify`` tells: the same namespace inode), not beside the cluster on the
    host: a run there is not on the cluster's links, whatever cluster is up."""
    try:
        mine = os.stat("/proc/self/ns/net")
    except OSError:
        return False
    for name in names:
        try:
            theirs = os.stat(NETNS_DIR / name)
        except OSError:
            continue
        if (theirs.st_dev, theirs.st_ino) == (mine.st_dev, mine.st_ino):
            return True
    return False


def read_state() -> dict[str, Any] | None:
    """The state file's document, or ``None`` when no cluster was brought up."""
    try:
        return json.loads(state_path().read_text())
    except FileNotFoundError:
        return None


def read_json(path: Path) -> dict[str, Any] | None:
    """A file another process rewrites (atomically) as it lives: ``None`` when it is missing
    or not (yet) JSON."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None
