"""The distortion fraction of an aggregable code under an omniscient attacker (ByzShield's
metric, Konstantinidis & Ramamoorthy, MLSys 2021).

An aggregable code (``Capabilities.aggregable``) hands a robust aggregator
``aggregation_count()`` values, of which the workers ``liars`` can corrupt
``aggregation_corrupted(liars)``: ByzShield's and DETOX's votes held by a majority of liars,
the baseline's (``uncoded``) own gradients of the liars. An omniscient attacker that knows the
placement picks the ``q`` workers corrupting the most values; that most is ``c_max^(q)`` and
``c_max^(q) / aggregation_count()`` the *distortion fraction* ``epsilon``. It is computed here
exactly, by trying every ``q``-subset of the ``n`` workers (refused in one line beyond
``limit`` subsets), for any aggregable code, so ByzShield's, DETOX's and the baseline's come
from the same function and are comparable.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

from gradcode.codes.base import GradientCode, check_int, require

#: most ``q``-subsets ``worst_distortion`` tries by default (about 10 s of Python calls)
MAX_PLACEMENTS = 1_000_000


@dataclass(frozen=True)
class Distortion:
    """The worst placement of ``liars`` workers for one code.

    ``distorted``: ``c_max^(q)``, the most values those workers corrupt; ``values``: how many
    values the aggregator takes (``aggregation_count()``); ``worst``: the first placement (in
    lexicographic order) attaining it; ``placements``: how many were tried.
    """

    liars: int
    distorted: int
    values: int
    worst: tuple[int, ...]
    placements: int

    @property
    def fraction(self) -> float:
        """The distortion fraction ``c_max^(q) / f``."""
        return self.distorted / self.values


def worst_distortion(code: GradientCode, liars: int, *, limit: int = MAX_PLACEMENTS) -> Distortion:
    """``c_max^(q)`` of ``code`` for ``q = liars``, over every placement of the liars."""
    q = check_int("liars", code.name, liars)
    require(
        code.capabilities.aggregable,
        f"distortion: {code.name} is not aggregable (it hands an aggregator no values)",
    )
    require(q <= code.n, f"distortion: {code.name} has n={code.n} workers (got q={q} liars)")
    total = math.comb(code.n, q)
    require(
        total <= limit,
        f"distortion: {total} placements of q={q} liars among n={code.n} exceed the limit {limit}",
    )
    best, worst = -1, ()
    for placement in itertools.combinations(range(code.n), q):
        corrupted = code.aggregation_corrupted(placement)
        if corrupted > best:
            best, worst = corrupted, placement
    return Distortion(q, best, code.aggregation_count(), worst, total)
