"""Coordinate-wise median (Yin, Chen, Ramchandran & Bartlett, ICML 2018): per coordinate, the
median of the inputs (the mean of the two middle values for an even count)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from gradcode.aggregators.base import Aggregate, Aggregator, spread


class Median(Aggregator):
    """No parameters. Tolerates ``f`` Byzantine inputs among ``n >= 2f + 1``: each coordinate
    of the output lies between the honest inputs' smallest and largest values there, so it is
    within ``||spread||_2`` of the honest mean (``spread``: per coordinate, the largest
    distance of an honest input from the honest mean)."""

    name: ClassVar[str] = "median"

    def tolerates(self, n: int) -> int:
        return max((n - 1) // 2, 0)

    def tolerance_rule(self) -> str:
        return "n >= 2f + 1"

    def error_bound(self, honest: np.ndarray, n: int) -> float:
        return float(np.linalg.norm(spread(honest)))

    def _aggregate(self, inputs: np.ndarray) -> Aggregate:
        return Aggregate(np.median(inputs, axis=0))
