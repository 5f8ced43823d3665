"""Group replication: fractional repetition for any number of workers.

Tandon et al.'s fractional repetition code (``frc``) needs ``(s + 1) | n``. Group replication
drops that condition: the ``n`` workers are dealt, in an order drawn from ``seed``, into
``g = floor(n / (s + 1))`` groups whose sizes differ by at most one (each at least ``s + 1``).
The ``k = n`` partitions are cut into ``g`` consecutive blocks of the same sizes, and every
member of group ``j`` holds the whole block ``j`` and sends the plain sum of its partial
gradients (``m = 1``). Since a group has at least ``s + 1`` members, any ``s`` stragglers leave
one in every group, and the gradient is the sum of one message per group: additions only, so
decoding is exact for every ``n`` (``numerically_sound_up_to = None``).

Load: a member of group ``j`` computes ``|group j|`` partitions, ``s + 1`` or ``s + 2`` (more when
``n < 2 (s + 1)``), against ``frc``'s ``s + 1``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np

from gradcode.codes import LinearCode, NotDecodableError
from gradcode.codes.base import check_int, require


class GroupReplication(LinearCode):
    """Fractional repetition with random groups, for any ``n >= s + 1``.

    Parameters
    ----------
    n : int
        Number of workers and of partitions (``k = n``).
    s : int
        Stragglers tolerated, ``0 <= s < n``.
    seed : int
        Seed of the order in which workers are dealt into groups.
    """

    name = "group-replication"
    numerically_sound_up_to = None

    def __init__(self, n: int, s: int, seed: int = 0) -> None:
        self.n = check_int("n", self.name, n, minimum=1)
        self.s = check_int("s", self.name, s)
        self.seed = check_int("seed", self.name, seed)
        require(self.s < self.n, f"{self.name} needs s < n (got n={self.n}, s={self.s})")
        self.k, self.a, self.m = self.n, 0, 1
        count = self.n // (self.s + 1)
        sizes = [self.n // count + (j < self.n % count) for j in range(count)]
        order = np.random.default_rng(self.seed).permutation(self.n)
        bounds = np.cumsum([0, *sizes])
        #: the workers of every group, ``(g,)`` tuples
        self.groups = tuple(
            tuple(sorted(int(w) for w in order[bounds[j] : bounds[j + 1]])) for j in range(count)
        )
        self._group_of = np.empty(self.n, dtype=np.intp)
        self._blocks: list[tuple[int, ...]] = []
        for j, members in enumerate(self.groups):
            self._group_of[list(members)] = j
            self._blocks.append(tuple(range(int(bounds[j]), int(bounds[j + 1]))))
        encoding = np.zeros((self.n, self.k, 1))
        for worker in range(self.n):
            encoding[worker, list(self.partitions(worker)), 0] = 1.0
        self._init_linear(encoding)

    @classmethod
    def parameter_grid(cls, max_n: int) -> Iterator[dict[str, int]]:
        """Every ``(n, s)`` with ``n <= max_n``, for two seeds."""
        for n in range(1, max_n + 1):
            for s in range(n):
                for seed in (0, 1):
                    yield {"n": n, "s": s, "seed": seed}

    def params(self) -> dict[str, int]:
        return {"n": self.n, "s": self.s, "seed": self.seed}

    def partitions(self, worker: int) -> tuple[int, ...]:
        return self._blocks[self._group_of[worker]]

    def is_decodable(self, keys: Iterable[int]) -> bool:
        """At least one responder in every group."""
        return len({int(self._group_of[key]) for key in keys}) == len(self.groups)

    def completion_times(self, arrivals: np.ndarray) -> np.ndarray:
        """The slowest group's fastest member, per trial."""
        arrivals = self._arrivals(arrivals)
        return np.max([arrivals[:, list(g)].min(axis=1) for g in self.groups], axis=0)

    def _solve(self, keys: tuple[int, ...]) -> tuple[tuple[int, ...], np.ndarray]:
        first: dict[int, int] = {}
        for key in sorted(keys):  # the lowest responder of each group is kept
            first.setdefault(int(self._group_of[key]), key)
        empty = [j for j in range(len(self.groups)) if j not in first]
        if empty:
            raise NotDecodableError(
                f"{self.name} needs a responder from every group; groups {empty} have none",
                needed=len(empty),
                candidates=[w for j in empty for w in self.groups[j]],
            )
        return tuple(first[j] for j in range(len(self.groups))), np.ones((1, len(self.groups)))

    def _condition(self, used: tuple) -> float:
        # disjoint 0/1 rows of the used messages: orthogonal, so the system is well posed
        return 1.0
