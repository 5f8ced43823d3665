"""What one process cost the machine between two moments: its threads' time on a core and
waiting for one (the scheduler's own accounting, ``/proc/<pid>/task/*/schedstat``: nanoseconds
on the CPU, nanoseconds runnable but waiting on a run queue, time slices), its context
switches (voluntary: it slept; involuntary: it was preempted), the runtime's wake-ups
(``gradcode.dilation.wakeups``) and its real computation's real and CPU seconds
(``gradcode.fidelity.work``).

The kernel's waiting time is at least the real one, and can be more: a thread at nice 19
beside four busy loops that got one or two time slices in a 0.2-0.7 s busy loop was counted
1.0-3.1 times the loop's real seconds on a core or waiting, against 0.97-1.06 at nice 0 (20-23
slices; Linux 6.18, 2 cores, 2026-11-30; ``benchmarks/schedstat_wait.py``). A share waiting
near or over 1 says the machine held the thread back, not by how much."""

from __future__ import annotations

import resource
import time
from pathlib import Path
from typing import Any

from gradcode import dilation
from gradcode.fidelity import work

#: the fields of a usage sample that add up between two samples
COUNTERS = ("cpu", "wait", "slices", "voluntary", "involuntary", "wakeups", "work_real", "work_cpu")


def _schedstat(pid: str = "self") -> tuple[float, float, int] | None:
    """Seconds on a core, seconds waiting for one, and time slices, summed over the threads
    of process ``pid``; ``None`` where the kernel keeps no schedstat (no CONFIG_SCHED_INFO)."""
    cpu = wait = 0.0
    slices = 0
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return None
    found = False
    for task in tasks:
        try:
            fields = (task / "schedstat").read_text().split()
        except OSError:
            continue  # a thread that ended between the listing and the read
        found = True
        cpu += int(fields[0]) / 1e9
        wait += int(fields[1]) / 1e9
        slices += int(fields[2])
    return (cpu, wait, slices) if found else None


def sample() -> dict[str, Any]:
    """This process's counters now, with the real (undilated) monotonic time they were read."""
    stat = _schedstat()
    own = resource.getrusage(resource.RUSAGE_SELF)
    found: dict[str, Any] = {
        "real": time.perf_counter(),
        "voluntary": own.ru_nvcsw,
        "involuntary": own.ru_nivcsw,
        "wakeups": dilation.wakeups(),
    }
    found["work_real"], found["work_cpu"] = work.totals()
    if stat is not None:
        found |= {"cpu": stat[0], "wait": stat[1], "slices": stat[2]}
    return found


def between(begin: dict[str, Any], end: dict[str, Any]) -> dict[str, Any]:
    """What the process cost from ``begin`` to ``end`` (two ``sample``\\ s): ``seconds``
    (real) and each counter's increase (``cpu`` and ``wait`` in seconds; a counter the kernel
    did not give is absent)."""
    spent: dict[str, Any] = {"seconds": end["real"] - begin["real"]}
    for name in COUNTERS:
        if name in begin and name in end:
            spent[name] = end[name] - begin[name]
    return spent
