"""Shared by the benchmark scripts: the median wall-clock time of a call."""

import statistics
import time
from collections.abc import Callable


def median_time(function: Callable[[], object], repeats: int) -> float:
    """Median over ``repeats`` calls of ``function()``, seconds (robust to a noisy machine)."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)
