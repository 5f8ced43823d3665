"""SGD that ignores the slowest workers (paper 001's SGD baseline).

Uncoded assignment (worker ``i`` holds partition ``i``); the master sums the messages of the
first ``n - s`` workers and drops the rest, so the result is only an estimate of the gradient
whenever a worker is missing. With ``rescale=True`` the sum is multiplied by ``n / |R|``, which
makes it an unbiased estimate when the missing workers are a uniformly random subset.

Aggregable (``capabilities.aggregable``): a robust aggregator (``gradcode.aggregators``) may
take the ``n - s`` partial gradients in hand in place of their sum; its estimate of their
honest mean times ``n`` is then the gradient (what ``rescale=True`` does for the sum).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import ClassVar

import numpy as np

from gradcode.codes.base import (
    AggregationInputs,
    DecodeResult,
    GradientCode,
    MessageKey,
    NotDecodableError,
    check_int,
    plain_inputs,
    require,
)
from gradcode.codes.capabilities import Capabilities
from gradcode.codes.completion import CompletionRule, order_statistic


class IgnoreStragglers(GradientCode):
    name = "ignore-stragglers"
    exact = False
    #: each message is its worker's partial gradient: a robust aggregator can take them
    capabilities: ClassVar[Capabilities] = Capabilities(aggregable=True)

    def __init__(self, n: int, s: int, rescale: bool = False) -> None:
        self.n = check_int("n", self.name, n, minimum=1)
        self.s = check_int("s", self.name, s)
        require(self.s < self.n, f"{self.name} needs s < n (got n={self.n}, s={self.s})")
        self.k, self.a, self.m = self.n, 0, 1
        self.rescale = bool(rescale)

    @classmethod
    def parameter_grid(cls, max_n: int) -> Iterator[dict[str, object]]:
        for n in range(1, max_n + 1):
            for s in range(n):
                yield {"n": n, "s": s}
        yield {"n": 6, "s": 2, "rescale": True}

    def params(self) -> dict[str, object]:
        return {"n": self.n, "s": self.s, "rescale": self.rescale}

    def partitions(self, worker: int) -> tuple[int, ...]:
        return (worker,)

    def encode(self, worker: int, partials: np.ndarray) -> np.ndarray:
        return np.array(partials[0], dtype=np.float64)

    def completion_times(self, arrivals: np.ndarray) -> np.ndarray:
        """Any ``n - s`` workers decode: the ``(n - s)``-th arrival."""
        return order_statistic(self._arrivals(arrivals), self.n - self.s)

    def completion_rule(self) -> CompletionRule:
        """Any ``n - s`` of the ``n`` workers."""
        return CompletionRule.any_of(self.all_message_keys(), self.n - self.s)

    def is_decodable(self, keys: Iterable[int]) -> bool:
        return len(set(keys)) >= self.n - self.s

    def decode_result(self, messages: Mapping[int, np.ndarray], length: int) -> DecodeResult:
        if len(messages) < self.n - self.s:
            raise NotDecodableError(
                f"{self.name} waits for n - s = {self.n - self.s} workers; got {len(messages)}",
                needed=self.n - self.s - len(messages),
            )
        used = tuple(sorted(messages))
        total = np.sum([messages[key] for key in used], axis=0)
        if self.rescale:
            total *= self.n / len(messages)
        return DecodeResult(total[:length], used)

    def aggregation_inputs(
        self, messages: Mapping[MessageKey, np.ndarray], length: int
    ) -> AggregationInputs:
        """The partial gradients in hand, one row each; ``total = n``."""
        return plain_inputs(self, messages, length)

    def aggregation_count(self) -> int:
        return self.n - self.s

    def aggregation_corrupted(self, liars: Iterable[int]) -> int:
        """Each liar corrupts its own partial gradient."""
        return len(set(liars))
