"""Running mean and variance over blocks of trials, and the confidence interval.

Blocks are merged with Chan et al.'s pairwise update, always in block order, so the result
depends on the trials only, not on how many blocks were processed together. A trial that never
completes (time ``inf``) makes the mean and the interval ``inf``; ``never`` counts them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import stats


@dataclass
class Moments:
    """Count, mean and sum of squared deviations of the finite values seen so far."""

    count: int = 0
    mean: float = 0.0
    m2: float = 0.0
    never: int = 0

    def add(self, values: np.ndarray) -> None:
        """Merge one block of values, shape ``(size,)``."""
        finite = values[np.isfinite(values)]
        self.never += int(values.size - finite.size)
        size = finite.size
        if size == 0:
            return
        mean = float(finite.mean())
        m2 = float(np.square(finite - mean).sum())
        total = self.count + size
        delta = mean - self.mean
        self.mean += delta * size / total
        self.m2 += m2 + delta * delta * self.count * size / total
        self.count = total

    @property
    def trials(self) -> int:
        return self.count + self.never

    def estimate(self) -> float:
        """The mean over all trials (``inf`` if some never completed)."""
        return math.inf if self.never else self.mean

    def std(self) -> float:
        """Sample standard deviation (``nan`` with fewer than two trials, ``inf`` if any is)."""
        if self.never:
            return math.inf
        return math.sqrt(self.m2 / (self.count - 1)) if self.count > 1 else math.nan

    def interval(self, level: float) -> tuple[float, float]:
        """Two-sided ``level`` confidence interval of the mean (Student t)."""
        if self.never:
            return math.inf, math.inf
        if self.count < 2:
            return math.nan, math.nan
        half = float(stats.t.ppf(0.5 + level / 2, self.count - 1)) * self.std()
        half /= math.sqrt(self.count)
        return self.mean - half, self.mean + half
