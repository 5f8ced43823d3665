"""Ring-AllReduce (paper 001, Section II-B) as a scheme the timing models can simulate.

The data set is split evenly over ``n`` workers (no redundancy, no straggler tolerance). Each
worker cuts its partial gradient into ``n`` segments; in ``n - 1`` reduce-scatter rounds and
``n - 1`` all-gather rounds every worker sends one segment to its successor on the ring and
receives one from its predecessor. Under paper 001's communication model a segment (``1 / n``
of a full vector) takes ``tc / n``.

Timing (``completion``). A worker sends its round-1 segment once it has computed (at ``T_i``);
its round-``r`` segment needs the segment its predecessor sent in round ``r - 1`` and its own
port, so ``S_i^r = max(S_i^(r-1), S_(i-1)^(r-1)) + c`` with ``S_i^1 = T_i + c``. By induction
``S_i^r = r c + max(T_(i-r+1), ..., T_i)`` (indices mod ``n``), and after ``2 (n - 1) >= n``
rounds the window covers the whole ring: every worker holds the gradient at
``max_i T_i + 2 (n - 1) tc / n``. The tests check this closed form against the round-by-round
recursion. Every worker receives ``2 (n - 1)`` segments.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from gradcode.codes.base import check_int


class RingAllReduce:
    """Ring-AllReduce over ``n`` workers: ``k = n`` partitions, one per worker, ``m = n``.

    Not a gradient code (there is no master and nothing to decode); it offers the attributes
    the simulator reads: ``n`` workers, ``k`` partitions, ``loads()``, ``m`` (a segment is
    ``1 / n`` of the gradient) and ``message_length``.
    """

    name: ClassVar[str] = "ring-allreduce"

    def __init__(self, n: int) -> None:
        self.n = check_int("n", self.name, n, minimum=2)
        self.k = self.n
        self.m = self.n
        self.s = 0

    def params(self) -> dict[str, Any]:
        return {"n": self.n}

    def loads(self) -> np.ndarray:
        """One partition per worker, shape ``(n,)``."""
        return np.ones(self.n, dtype=np.int64)

    def message_length(self, length: int) -> int:
        """Length of one segment for a gradient of length ``length``."""
        return -(-length // self.n)

    def rounds(self) -> int:
        """Transfers per worker: ``n - 1`` reduce-scatter plus ``n - 1`` all-gather."""
        return 2 * (self.n - 1)

    def completion(self, compute: np.ndarray, tc: float) -> np.ndarray:
        """When every worker holds the gradient, ``(trials,)``; ``compute`` is ``(trials, n)``."""
        return compute.max(axis=1) + self.rounds() * tc / self.n

    def messages(self) -> int:
        """Segments received by all workers together."""
        return self.n * self.rounds()

    def __repr__(self) -> str:
        return f"RingAllReduce(n={self.n})"
