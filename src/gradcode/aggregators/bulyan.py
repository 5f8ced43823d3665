"""Bulyan (El Mhamdi, Guerraoui & Rouault, ICML 2018): Krum picks ``theta = n - 2f`` inputs one
after another (each pick leaves the pool), then per coordinate the ``beta = theta - 2f``
picked values closest to their median are averaged."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from gradcode.aggregators.base import (
    Aggregate,
    Aggregator,
    spread,
    squared_distances,
)
from gradcode.aggregators.krum import krum_scores
from gradcode.checks import check_int


class Bulyan(Aggregator):
    """``f`` [1]: Byzantine inputs to withstand; needs ``n >= 4f + 3``.

    Bound (deterministic, per coordinate, ``spread``: the largest distance of an honest input
    from the honest mean there): the ``theta >= 2f + 3`` picked values hold at most ``f``
    Byzantine ones, so their median lies in the honest range; at least one honest picked
    value is left out of the ``beta`` closest to it (``theta - f > beta``), so each value kept
    is within ``2 spread`` of the median: the output is within ``3 ||spread||_2`` of the
    honest mean. Krum's pool shrinks as it picks; its neighbour count ``pool - f - 2`` is
    kept at 1 at least.
    """

    name: ClassVar[str] = "bulyan"

    def __init__(self, f: int = 1) -> None:
        self.f = check_int("f", f"aggregator {self.name}", f)

    def params(self) -> dict[str, Any]:
        return {"f": self.f}

    def refusal(self, n: int) -> str | None:
        if n < 4 * self.f + 3:
            return f"aggregator {self.name} needs n >= 4f + 3 (got n={n}, f={self.f})"
        return None

    def tolerates(self, n: int) -> int:
        return self.f

    def without(self, n: int, refused: int) -> Bulyan:
        return Bulyan(f=self.f - refused)

    def tolerance_rule(self) -> str:
        return f"f={self.f} as configured"

    def error_bound(self, honest: np.ndarray, n: int) -> float:
        return 3.0 * float(np.linalg.norm(spread(honest)))

    def _aggregate(self, inputs: np.ndarray) -> Aggregate:
        n, f = inputs.shape[0], self.f
        theta, beta = n - 2 * f, n - 4 * f
        d2 = squared_distances(inputs)
        pool = list(range(n))
        picked: list[int] = []
        while len(picked) < theta:
            sub = d2[np.ix_(pool, pool)]
            scores = krum_scores(sub, max(len(pool) - f - 2, 1))
            best = pool[int(np.argmin(scores))]  # the first of equal scores
            picked.append(best)
            pool.remove(best)
        chosen = inputs[picked]
        centre = np.median(chosen, axis=0)
        closest = np.argsort(np.abs(chosen - centre), axis=0, kind="stable")[:beta]
        value = np.take_along_axis(chosen, closest, axis=0).mean(axis=0)
        return Aggregate(value, selected=tuple(sorted(picked)))
