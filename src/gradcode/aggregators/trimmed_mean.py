"""Coordinate-wise trimmed mean (Yin, Chen, Ramchandran & Bartlett, ICML 2018): per
coordinate, drop the ``b = floor(beta n)`` largest and ``b`` smallest values and average the
rest."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from gradcode.aggregators.base import Aggregate, Aggregator, spread
from gradcode.checks import check_number


class TrimmedMean(Aggregator):
    """``beta`` in ``[0, 0.5)`` [0.1]: the fraction trimmed at each end. Tolerates ``b =
    floor(beta n)`` Byzantine inputs: a Byzantine value that survives the trimming has at
    least ``b + 1 - f >= 1`` honest values beyond it on each side, so every coordinate of the
    output lies in the honest inputs' range there (within ``||spread||_2`` of their mean)."""

    name: ClassVar[str] = "trimmed-mean"

    def __init__(self, beta: float = 0.1) -> None:
        self.beta = check_number("beta", f"aggregator {self.name}", beta, within=(0.0, 0.5))
        #: values dropped at each end whatever the count (``without``), ``None``: ``beta n``
        self._trim: int | None = None

    def params(self) -> dict[str, Any]:
        return {"beta": self.beta}

    def trimmed(self, n: int) -> int:
        """``b``: values dropped at each end of a coordinate among ``n``."""
        if self._trim is not None:
            return self._trim
        # the small tolerance keeps beta n = 2 from flooring to 1 after round-off (0.2 * 10)
        return math.floor(self.beta * n + 1e-9)

    def without(self, n: int, refused: int) -> TrimmedMean:
        """Once ``refused`` of ``n`` inputs are out (they took ``refused`` of the ``b``
        Byzantine ones it tolerates), the rest trimmed by ``b - refused`` at each end: the
        same guarantee."""
        rest = TrimmedMean(self.beta)
        rest._trim = self.trimmed(n) - refused
        return rest

    def tolerates(self, n: int) -> int:
        return self.trimmed(n)

    def tolerance_rule(self) -> str:
        return f"f <= floor(beta n), beta={self.beta:g}"

    def error_bound(self, honest: np.ndarray, n: int) -> float:
        return float(np.linalg.norm(spread(honest)))

    def _aggregate(self, inputs: np.ndarray) -> Aggregate:
        n = inputs.shape[0]
        b = self.trimmed(n)
        ordered = np.sort(inputs, axis=0)
        return Aggregate(ordered[b : n - b].mean(axis=0), info={"trimmed": b})
