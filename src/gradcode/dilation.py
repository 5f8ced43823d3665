"""Time dilation: one factor ``K`` that slows everything a run waits for, so that what it
cannot slow (the host's own costs: scheduling, polling, MPI's progress, a rank's bookkeeping)
shrinks ``K`` times against what it measures (Gupta et al., NSDI 2006, "To infinity and
beyond: time-warped network emulation").

Under a factor ``K`` every rank of a run reads ``clock()``, the monotonic clock divided by
``K`` (virtual seconds), and sleeps through ``sleep()``, which waits ``K`` times the virtual
seconds asked. Everything the runtime times, waits for or reports is in virtual seconds, so one
factor scales all of it at once: injected computation and emulated link sleeps (the deadlines
they wait for), polling and naps, time-outs, the distribution's slow-chunk rules, and every time
in ``log.jsonl`` and ``summary.json``. The emulated cluster divides its links' rates and
multiplies their latencies by the same ``K`` (``gradcode cluster up --dilation K``), so a
transfer takes the virtual time it would take on the undilated links. Real computation (a
model's gradients, decoding, aggregation) runs at the machine's speed whatever ``K``: in virtual
seconds it looks ``K`` times faster than it was, which a run's fidelity record reports as its
undilated share.

The factor is a process-wide setting, set once by a rank before it times anything
(``dilate``); ``wakeups`` counts the runtime's sleeps, the wake-ups it costs the machine.
"""

from __future__ import annotations

import math
import time

#: the largest factor accepted: at K = 1000 a second of a run is a quarter of an hour
MAX_FACTOR = 1000.0

_factor = 1.0
_wakeups = 0


def check_factor(value: object, what: str) -> float:
    """``value`` as a dilation factor (a number from 1 to ``MAX_FACTOR``); ``ValueError``
    naming ``what`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{what}: a dilation factor is a number >= 1, got {value!r}")
    factor = float(value)
    if not math.isfinite(factor) or not 1.0 <= factor <= MAX_FACTOR:
        raise ValueError(
            f"{what}: a dilation factor is a number from 1 to {MAX_FACTOR:g}, got {value!r}"
        )
    return factor


def dilate(factor: float) -> None:
    """Set this process's factor (checked: ``check_factor``)."""
    global _factor
    _factor = check_factor(factor, "dilation")


def factor() -> float:
    """This process's dilation factor (1: none)."""
    return _factor


def clock() -> float:
    """Virtual seconds: ``time.perf_counter`` (one monotonic clock per host on Linux) divided
    by the factor."""
    return time.perf_counter() / _factor


def sleep(seconds: float) -> None:
    """Wait ``seconds`` virtual seconds (the factor times as many real ones); one wake-up."""
    global _wakeups
    _wakeups += 1
    if seconds > 0:
        time.sleep(seconds * _factor)


def wakeups() -> int:
    """How many times this process slept through ``sleep`` so far."""
    return _wakeups
