"""Uncoded master-worker: worker ``i`` computes partition ``i``; the master waits for all ``n``.

Aggregable (``capabilities.aggregable``): a robust aggregator (``gradcode.aggregators``) may
take the ``n`` partial gradients in place of their sum (``aggregation_inputs``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import ClassVar

import numpy as np

from gradcode.codes.base import (
    AggregationInputs,
    Capabilities,
    LinearCode,
    MessageKey,
    NotDecodableError,
    check_int,
    plain_inputs,
)
from gradcode.codes.completion import CompletionRule


class Uncoded(LinearCode):
    """``n`` workers, ``k = n`` partitions, no straggler tolerated (``s = 0``)."""

    name = "uncoded"
    #: each message is its worker's partial gradient: a robust aggregator can take them
    capabilities: ClassVar[Capabilities] = Capabilities(aggregable=True)

    def __init__(self, n: int) -> None:
        self.n = check_int("n", self.name, n, minimum=1)
        self.k, self.s, self.a, self.m = self.n, 0, 0, 1
        self._init_linear(np.eye(self.n)[:, :, None])

    @classmethod
    def parameter_grid(cls, max_n: int) -> Iterator[dict[str, int]]:
        for n in range(1, max_n + 1):
            yield {"n": n}

    def params(self) -> dict[str, int]:
        return {"n": self.n}

    def partitions(self, worker: int) -> tuple[int, ...]:
        return (worker,)

    def completion_times(self, arrivals: np.ndarray) -> np.ndarray:
        """Everyone is needed: the last arrival."""
        return self._arrivals(arrivals).max(axis=1)

    def completion_rule(self) -> CompletionRule:
        """All ``n`` workers."""
        return CompletionRule.any_of(self.all_message_keys(), self.n)

    def is_decodable(self, keys: Iterable[int]) -> bool:
        return set(range(self.n)) <= set(keys)

    def _solve(self, keys: tuple[int, ...]) -> tuple[tuple[int, ...], np.ndarray]:
        missing = sorted(set(range(self.n)) - set(keys))
        if missing:
            raise NotDecodableError(
                f"uncoded needs every worker; missing {missing}",
                needed=len(missing),
                candidates=missing,
            )
        used = tuple(range(self.n))
        return used, np.ones((1, self.n))

    def aggregation_inputs(
        self, messages: Mapping[MessageKey, np.ndarray], length: int
    ) -> AggregationInputs:
        """The partial gradients in hand, one row each; ``total = n``."""
        return plain_inputs(self, messages, length)

    def aggregation_count(self) -> int:
        return self.n

    def aggregation_corrupted(self, liars: Iterable[int]) -> int:
        """Each liar corrupts its own partial gradient."""
        return len(set(liars))
