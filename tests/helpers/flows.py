"""Readiness times for tests of the links model's fair-share schedule."""

from __future__ import annotations

import numpy as np


def ready_times(rng: np.random.Generator, case: int, trials: int, flows: int) -> np.ndarray:
    """``(trials, flows)`` times flows become ready: exponential, rounded to 0.1 in every
    third case (simultaneous starts and ends), a fifth never sent (``inf``) in every fourth."""
    ready = rng.exponential(1.0, (trials, flows))
    if case % 3 == 0:
        ready = np.round(ready, 1)
    if case % 4 == 0:
        ready[rng.random(ready.shape) < 0.2] = np.inf
    return ready
