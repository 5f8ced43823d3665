"""Geometric median (the point minimising the sum of Euclidean distances to the inputs; RFA,
Pillutla, Kakade & Harchaoui, 2022; Chen, Su & Xu, 2017), by Weiszfeld's iteration.

Weiszfeld: ``z <- sum_i w_i x_i / sum_i w_i`` with ``w_i = 1 / max(||x_i - z||, nu)``,
started at the coordinate-wise median. ``nu`` (the smoothing of RFA) keeps a weight finite
when ``z`` lands on an input: ``1e-12`` times the inputs' mean distance to the start. It
stops when a step moves ``z`` by at most ``tol`` times the inputs' mean distance to ``z``
(scale-free: gradients shrink as training converges), or after ``max_iter`` steps.

When it does not converge within ``max_iter``, the last iterate is returned and the
aggregation's ``info`` says ``converged: false`` (the MPI log records it per iteration): each
step does not increase the (smoothed) sum of distances, so that iterate is no worse than the
coordinate-wise median it started from, only not the minimiser to ``tol``.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from gradcode.aggregators.base import Aggregate, Aggregator
from gradcode.checks import check_int, check_number
from gradcode.errors import ParameterError


class GeometricMedian(Aggregator):
    """``tol`` in ``(0, 1)`` [1e-7]; ``max_iter`` >= 1 [200]. Tolerates ``f`` Byzantine inputs
    among ``n >= 2f + 1`` (breakdown point 1/2).

    Bound: with ``r`` the largest distance of an honest input from the honest mean ``mu``
    and ``h = n - f`` honest inputs, the geometric median ``y`` satisfies ``||y - mu|| <= 2 h r
    / (h - f)`` (compare the sums of distances at ``y`` and at ``mu``: ``(h - f) ||y - mu|| -
    2 h r <= 0``). That holds for the minimiser; Weiszfeld's iterate is within its stopping
    rule of it (the tests allow 1e-6 relative).
    """

    name: ClassVar[str] = "geometric-median"

    def __init__(self, tol: float = 1e-7, max_iter: int = 200) -> None:
        self.tol = check_number("tol", f"aggregator {self.name}", tol, within=(0.0, 1.0))
        if self.tol == 0.0:  # Weiszfeld only reaches the minimiser in the limit
            raise ParameterError(f"aggregator {self.name} needs tol in (0, 1) (got tol={tol!r})")
        self.max_iter = check_int("max_iter", f"aggregator {self.name}", max_iter, minimum=1)

    def params(self) -> dict[str, Any]:
        return {"tol": self.tol, "max_iter": self.max_iter}

    def tolerates(self, n: int) -> int:
        return max((n - 1) // 2, 0)

    def tolerance_rule(self) -> str:
        return "n >= 2f + 1"

    def error_bound(self, honest: np.ndarray, n: int) -> float:
        h = honest.shape[0]
        f = n - h
        mu = honest.mean(axis=0)
        r = float(np.linalg.norm(honest - mu, axis=1).max())
        return 2.0 * h * r / (h - f)

    def _aggregate(self, inputs: np.ndarray) -> Aggregate:
        z = np.median(inputs, axis=0)
        start = float(np.linalg.norm(inputs - z, axis=1).mean())
        nu = 1e-12 * start if start > 0 else 1e-300
        converged, steps = False, 0
        for steps in range(1, self.max_iter + 1):  # noqa: B007 - steps is reported below
            distances = np.linalg.norm(inputs - z, axis=1)
            scale = float(distances.mean())
            if scale == 0.0:  # every input equals z
                converged = True
                break
            weights = 1.0 / np.maximum(distances, nu)
            moved = weights @ inputs / weights.sum()
            step = float(np.linalg.norm(moved - z))
            z = moved
            if step <= self.tol * scale:
                converged = True
                break
        return Aggregate(z, info={"iterations": steps, "converged": converged})
