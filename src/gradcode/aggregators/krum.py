"""Multi-Krum (Blanchard, El Mhamdi, Guerraoui & Stainer, NeurIPS 2017): each input's score is
the sum of its squared distances to its ``n - f - 2`` nearest other inputs; the ``m`` inputs
of lowest score are averaged (``m = 1``: Krum)."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from gradcode.aggregators.base import (
    Aggregate,
    Aggregator,
    diameter,
    squared_distances,
)
from gradcode.checks import check_int


def krum_scores(d2: np.ndarray, neighbours: int) -> np.ndarray:
    """Each row's sum of squared distances to its ``neighbours`` nearest other rows."""
    n = d2.shape[0]
    others = np.where(np.eye(n, dtype=bool), np.inf, d2)
    if neighbours <= 0:
        return np.zeros(n)
    nearest = np.partition(others, neighbours - 1, axis=1)[:, :neighbours]
    return nearest.sum(axis=1)


class MultiKrum(Aggregator):
    """``f`` [1]: Byzantine inputs to withstand; ``m`` [1]: inputs averaged. Needs ``n >= 2f +
    3`` and ``m <= n - f``.

    Bound (deterministic, with ``D`` the honest inputs' diameter): an honest input scores at
    most ``(n - f - 2) D^2``, and so does every selected one (``m <= n - f`` honest inputs
    exist); a selected input's ``n - f - 2`` nearest include an honest one (``n >= 2f + 3``),
    so it is within ``sqrt(n - f - 2) D`` of it: the output is within ``(1 + sqrt(n - f - 2))
    D`` of the honest mean. Ties in the score go to the lower index.
    """

    name: ClassVar[str] = "multi-krum"

    def __init__(self, f: int = 1, m: int = 1) -> None:
        self.f = check_int("f", f"aggregator {self.name}", f)
        self.m = check_int("m", f"aggregator {self.name}", m, minimum=1)

    def params(self) -> dict[str, Any]:
        return {"f": self.f, "m": self.m}

    def refusal(self, n: int) -> str | None:
        if n < 2 * self.f + 3:
            return f"aggregator {self.name} needs n >= 2f + 3 (got n={n}, f={self.f})"
        if self.m > n - self.f:
            return f"aggregator {self.name} needs m <= n - f (got m={self.m}, n={n}, f={self.f})"
        return None

    def tolerates(self, n: int) -> int:
        return self.f

    def without(self, n: int, refused: int) -> MultiKrum:
        return MultiKrum(f=self.f - refused, m=self.m)

    def tolerance_rule(self) -> str:
        return f"f={self.f} as configured"

    def error_bound(self, honest: np.ndarray, n: int) -> float:
        return (1.0 + math.sqrt(n - self.f - 2)) * diameter(honest)

    def _aggregate(self, inputs: np.ndarray) -> Aggregate:
        n = inputs.shape[0]
        scores = krum_scores(squared_distances(inputs), n - self.f - 2)
        chosen = np.argsort(scores, kind="stable")[: self.m]
        selected = tuple(sorted(int(i) for i in chosen))
        return Aggregate(inputs[list(selected)].mean(axis=0), selected=selected)
