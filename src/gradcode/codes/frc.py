"""Fractional repetition code: Tandon, Lei, Dimakis, Karampatziakis, "Gradient Coding" (ICML 2017).

Their Section 3 (fractional repetition scheme), for ``(s + 1) | n`` and ``k = n``:

- the ``n`` workers are split into ``n / (s + 1)`` groups of ``s + 1`` consecutive workers, group
  ``g = i // (s + 1)`` for worker ``i``;
- the partitions are split the same way into ``n / (s + 1)`` blocks of ``s + 1`` consecutive
  partitions, and every worker of group ``g`` holds the whole block ``g``;
- a worker sends the plain sum of its ``s + 1`` partial gradients (``m = 1``).

Encoding tensor ``E`` (shape ``(n, n, 1)``) is the 0/1 block-diagonal matrix of the groups.

Decoding is combinatorial: the gradient is the sum of one message per group, so the master can
decode as soon as every group has at least one responder. That is weaker than "any ``n - s``
workers" (which it implies: ``s`` stragglers cannot empty a group of ``s + 1``), and
``is_decodable`` reports the weaker rule because a runtime may stop waiting as soon as it holds.
No arithmetic other than additions happens anywhere, so the scheme is exact for every ``n``
(measured maximum relative error 3.2e-16 over every ``(n, s)`` with ``n <= 50``, 40 random
straggler patterns each; ``numerically_sound_up_to = None``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np

from gradcode.codes.base import NotDecodableError, check_int, require
from gradcode.codes.completion import CompletionRule
from gradcode.codes.linear import LinearCode


class FractionalRepetition(LinearCode):
    """Tandon et al.'s fractional repetition code.

    Parameters
    ----------
    n : int
        Number of workers (and partitions, ``k = n``).
    s : int
        Stragglers tolerated; needs ``(s + 1) | n``. Every worker holds ``s + 1`` partitions.
    """

    name = "frc"
    numerically_sound_up_to = None

    def __init__(self, n: int, s: int) -> None:
        self.n = check_int("n", self.name, n, minimum=1)
        self.s = check_int("s", self.name, s)
        require(
            self.n % (self.s + 1) == 0,
            f"{self.name} needs (s + 1) | n (got n={self.n}, s={self.s})",
        )
        self.k, self.a, self.m = self.n, 0, 1
        #: number of groups (= number of partition blocks), ``n / (s + 1)``
        self.groups = self.n // (self.s + 1)
        group_of = np.arange(self.n) // (self.s + 1)
        encoding = (group_of[:, None] == group_of[None, :]).astype(np.float64)
        self._init_linear(encoding[:, :, None])

    @classmethod
    def parameter_grid(cls, max_n: int) -> Iterator[dict[str, int]]:
        """Every ``(n, s)`` with ``(s + 1) | n`` and ``n <= max_n``."""
        for n in range(1, max_n + 1):
            for s in range(n):
                if n % (s + 1) == 0:
                    yield {"n": n, "s": s}

    def params(self) -> dict[str, int]:
        return {"n": self.n, "s": self.s}

    def group(self, worker: int) -> int:
        """The group of ``worker`` (its index in the block partition of the workers)."""
        return worker // (self.s + 1)

    def group_workers(self, group: int) -> tuple[int, ...]:
        """Workers of ``group``; they all hold the partitions of the same index range."""
        return tuple(range(group * (self.s + 1), (group + 1) * (self.s + 1)))

    def partitions(self, worker: int) -> tuple[int, ...]:
        return self.group_workers(self.group(worker))

    def _covered(self, keys: Iterable[int]) -> set[int]:
        width = self.s + 1
        return {
            key // width for key in keys if isinstance(key, int | np.integer) and 0 <= key < self.n
        }

    def completion_times(self, arrivals: np.ndarray) -> np.ndarray:
        """One responder per group: the slowest group's fastest worker."""
        arrivals = self._arrivals(arrivals)
        return arrivals.reshape(len(arrivals), self.groups, self.s + 1).min(axis=2).max(axis=1)

    def completion_rule(self) -> CompletionRule:
        """One of each group of ``s + 1`` workers."""
        groups = tuple(self.group_workers(g) for g in range(self.groups))
        return CompletionRule(groups, (1,) * self.groups)

    def is_decodable(self, keys: Iterable[int]) -> bool:
        """At least one responder in every group."""
        return len(self._covered(keys)) == self.groups

    def _solve(self, keys: tuple[int, ...]) -> tuple[tuple[int, ...], np.ndarray]:
        first: dict[int, int] = {}
        for key in sorted(keys):  # the lowest responder of each group is kept
            first.setdefault(self.group(key), key)
        if len(first) < self.groups:
            empty = [g for g in range(self.groups) if g not in first]
            raise NotDecodableError(
                f"{self.name} needs a responder from every group of s + 1 = {self.s + 1} "
                f"workers; groups {empty} have none",
                needed=len(empty),
                candidates=[w for g in empty for w in self.group_workers(g)],
            )
        used = tuple(first[g] for g in range(self.groups))
        return used, np.ones((1, self.groups))

    def _condition(self, used: tuple) -> float:
        # the used rows are disjoint indicator vectors of equal size: orthogonal, equal norms
        return 1.0
