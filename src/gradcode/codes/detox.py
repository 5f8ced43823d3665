"""DETOX (Rajput, Wang, Charles & Papailiopoulos, "DETOX: A Redundancy-based Framework for
Faster and More Robust Gradient Aggregation", NeurIPS 2019): groups of ``r`` replicas (``r``
odd), a majority vote inside each group, then a robust aggregator over the groups' votes.

It is a code plus an aggregator choice. The code is DRACO's repetition layout with ``s = 0``
and ``a = (r - 1) / 2`` (``gradcode.codes.draco_repetition``): ``n / r`` groups of ``r``
consecutive workers hold the same ``r`` partitions and send their plain sum. The vote is where
exactness is guaranteed: with at most ``a`` liars anywhere no group's majority can be
theirs, so ``decode_result`` (DRACO's vote) returns the exact gradient and names the liars;
the code declares ``corrects_adversaries`` for that, and ``gradcode codes verify detox
--attack`` checks it on every placement of up to ``a`` liars. Beyond ``a`` liars the vote
detects what DRACO's does (``gradcode.codes.draco_repetition``: a group without a majority,
more than ``a`` outvoted in all) and cannot detect a group whose majority, ``(r + 1) / 2``,
lies with one value: it outvotes the honest members, who are named instead.

Beyond ``a`` liars the vote guarantees nothing, which is DETOX's point: the run file's
``aggregator`` takes the groups' votes (``aggregation_inputs``: a value sent by a majority,
``(r + 1) / 2``, of a group's members; groups without one are left out) and estimates their
honest mean; ``total = n / r`` votes make the gradient. A vote is corrupted only where a
group holds ``(r + 1) / 2`` liars (``aggregation_corrupted``), so the run tolerates as many
liars as leave at most ``tolerates(n / r)`` such groups. Under an aggregator nobody is named:
a group whose majority lies outvotes its honest members, and the vote cannot tell.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import ClassVar

import numpy as np

from gradcode.codes.base import AggregationInputs, MessageKey, check_int, require
from gradcode.codes.capabilities import Capabilities
from gradcode.codes.distortion import Votes
from gradcode.codes.draco_repetition import DracoRepetition


class Detox(DracoRepetition):
    """``n`` workers in groups of ``r`` replicas (``r`` odd, ``r | n``); the vote corrects
    ``a = (r - 1) / 2`` liars exactly, an aggregator over the votes tolerates more."""

    name = "detox"
    capabilities: ClassVar[Capabilities] = Capabilities(corrects_adversaries=True, aggregable=True)

    def __init__(self, n: int, r: int = 3) -> None:
        r = check_int("r", self.name, r, minimum=1)
        n = check_int("n", self.name, n, minimum=1)
        require(r % 2 == 1, f"{self.name} needs an odd r (got r={r})")
        require(n % r == 0, f"{self.name} needs r | n (got n={n}, r={r})")
        super().__init__(n, a=(r - 1) // 2, s=0)

    @classmethod
    def parameter_grid(cls, max_n: int) -> Iterator[dict[str, int]]:
        """Every ``(n, r)`` with ``r`` in 1, 3, 5 dividing ``n``."""
        for n in range(1, max_n + 1):
            for r in (1, 3, 5):
                if n % r == 0:
                    yield {"n": n, "r": r}

    def params(self) -> dict[str, int]:
        return {"n": self.n, "r": self.r}

    # -- robust aggregation ------------------------------------------------------------------
    def aggregation_inputs(
        self, messages: Mapping[MessageKey, np.ndarray], length: int
    ) -> AggregationInputs:
        """One vote per group with a majority of its ``r`` members agreeing."""
        return self.majority_inputs(messages, length, self.groups)

    def aggregation_count(self) -> int:
        return self.groups

    def votes(self) -> Votes:
        """Each group's vote: its ``r`` members (the ``t``-th members of the groups form a
        parallel class), ``a + 1`` of them lying make it theirs."""
        holders = np.zeros((self.n, self.groups), dtype=bool)
        holders[np.arange(self.n), np.arange(self.n) // self.r] = True
        classes = tuple(tuple(range(t, self.n, self.r)) for t in range(self.r))
        return Votes(holders, classes, self.a + 1)

    def aggregation_corrupted(self, liars: Iterable[int]) -> int:
        """Groups with a majority of liars (their vote can be the liars')."""
        counts = np.bincount([w // self.r for w in set(liars)], minlength=self.groups)
        return int((counts >= self.a + 1).sum())
