"""The machine's CPU pressure (Linux PSI, ``/proc/pressure/cpu``): the share of time in which
some runnable task waited for a core (``some``), whoever's task it was, so it also sees a busy
process beside a run that the run's own counters see only as waiting."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

PSI_CPU = Path("/proc/pressure/cpu")


def sample(path: Path = PSI_CPU) -> dict[str, Any] | None:
    """The cumulative stall time (seconds) of ``some`` (and ``full`` where the kernel gives
    it) now, with the real monotonic time; ``None`` without PSI (a kernel without
    CONFIG_PSI, or booted with psi=0)."""
    try:
        lines = path.read_text().splitlines()
    except OSError:
        return None
    found: dict[str, Any] = {"real": time.perf_counter()}
    for line in lines:
        kind, *fields = line.split()
        values = dict(field.split("=", 1) for field in fields)
        if "total" in values:
            found[kind] = int(values["total"]) / 1e6
    return found if "some" in found else None


def between(begin: dict[str, Any] | None, end: dict[str, Any] | None) -> dict[str, Any] | None:
    """The share of the time from ``begin`` to ``end`` in which some task (``some``) or every
    task (``full``, where given) waited for a core; ``None`` without PSI."""
    if begin is None or end is None:
        return None
    seconds = end["real"] - begin["real"]
    if seconds <= 0:
        return None
    shares: dict[str, Any] = {"seconds": seconds}
    for kind in ("some", "full"):
        if kind in begin and kind in end:
            shares[kind] = (end[kind] - begin[kind]) / seconds
    return shares
