"""Uncoded master-worker: worker ``i`` computes partition ``i``; the master waits for all ``n``.

The encoding is the ``n x n`` identity, 8 ``n^2`` bytes (800 MB at 10,000 workers), so it is
never stored: ``encoding_matrix`` builds it when asked, and encoding, decoding and the
condition number (1) do without it (measured at ``n = 10,000``: peak memory of a simulation
886 MB with it stored, see docs/measurements/scaling-past-one-machine.md).

Aggregable (``capabilities.aggregable``): a robust aggregator (``gradcode.aggregators``) may
take the ``n`` partial gradients in place of their sum (``aggregation_inputs``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import ClassVar

import numpy as np

from gradcode.codes.base import (
    AggregationInputs,
    MessageKey,
    NotDecodableError,
    check_int,
    plain_inputs,
)
from gradcode.codes.capabilities import Capabilities
from gradcode.codes.completion import CompletionRule
from gradcode.codes.linear import LinearCode
from gradcode.lru import LRUCache


class Uncoded(LinearCode):
    """``n`` workers, ``k = n`` partitions, no straggler tolerated (``s = 0``)."""

    name = "uncoded"
    #: each message is its worker's partial gradient: a robust aggregator can take them
    capabilities: ClassVar[Capabilities] = Capabilities(aggregable=True)

    def __init__(self, n: int) -> None:
        self.n = check_int("n", self.name, n, minimum=1)
        self.k, self.s, self.a, self.m = self.n, 0, 0, 1
        # what LinearCode._init_linear sets, but the identity (module docstring)
        self._key_index = {worker: worker for worker in range(self.n)}
        self._cache: LRUCache[tuple[tuple, np.ndarray, float]] = LRUCache(self.cache_size)
        self._target = np.ones((1, self.n))

    @property
    def _encoding(self) -> np.ndarray:  # type: ignore[override]
        """The identity, built on every access (only ``encoding_matrix`` asks)."""
        return np.eye(self.n)[:, :, None]

    def encode_message(self, key: MessageKey, partials: np.ndarray) -> np.ndarray:
        """Worker ``key``'s one partial gradient, as it is."""
        partials = np.asarray(partials, dtype=np.float64)
        if partials.ndim != 2 or partials.shape[0] < 1:
            raise ValueError(
                f"{self.name}: message {key!r} needs partials of shape (1, l) "
                f"(got {partials.shape})"
            )
        return partials[0].copy()

    def _condition(self, used: tuple) -> float:
        return 1.0  # the identity's

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
