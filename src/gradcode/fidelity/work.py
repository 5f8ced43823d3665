"""The real computation a rank did (its gradients and encoding): real seconds and the CPU
seconds its process spent meanwhile, added up over the run. Their ratio says how much the
machine stretched that work: about 1 where a rank had a core to itself, more where it shared
one (issue 48, point 4: what part of a run's time the machine explains)."""

from __future__ import annotations

import time

_totals = [0.0, 0.0]  # real seconds, CPU seconds


def begin() -> tuple[float, float]:
    """The real and CPU clocks now (real: undilated, since CPU time cannot be dilated)."""
    return time.perf_counter(), time.process_time()


def end(began: tuple[float, float]) -> None:
    """Add the work since ``began`` (``begin``'s value) to this process's totals."""
    _totals[0] += time.perf_counter() - began[0]
    _totals[1] += time.process_time() - began[1]


def totals() -> tuple[float, float]:
    """Real and CPU seconds of work so far in this process."""
    return _totals[0], _totals[1]
