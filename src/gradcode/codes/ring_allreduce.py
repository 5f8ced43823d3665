"""Ring-AllReduce (paper 001, Section II-B): the uncoded collective, as a ``ring`` code.

The data set is split evenly over ``n`` workers (no redundancy, no straggler tolerance,
``k = n``, ``s = 0``). There is no master: each worker cuts its partial gradient into ``n``
segments (``m = n``); in ``n - 1`` reduce-scatter rounds and ``n - 1`` all-gather rounds every
worker sends one segment to its successor on the ring and receives one from its predecessor.
The capabilities say ``topology="ring"``, so the MPI runtime runs the ring (``gradcode.train``'s
ring ranks, ``implementation`` ``explicit`` or ``mpi``: MPI's own ``Allreduce``) and the
timing models its schedule, below.

Flat view, for the verification harness: worker ``i`` sends its ``n`` segments as messages
``(i, j)`` (``message_length`` is a segment, ``ceil(l / n)``); ``decode`` adds segment ``j`` of
every worker to form segment ``j`` of the gradient, which needs every message.

Timing under paper 001's communication model (``completion``): a segment (``1 / n`` of a full
vector) takes ``tc / n``. A worker sends its round-1 segment once it has computed (at
``T_i``); its round-``r`` segment needs the segment its predecessor sent in round ``r - 1`` and
its own port, so ``S_i^r = max(S_i^(r-1), S_(i-1)^(r-1)) + c`` with ``S_i^1 = T_i + c``. By
induction ``S_i^r = r c + max(T_(i-r+1), ..., T_i)`` (indices mod ``n``), and after
``2 (n - 1) >= n`` rounds the window covers the whole ring: every worker holds the gradient at
``max_i T_i + 2 (n - 1) tc / n``. The tests check this closed form against the round-by-round
recursion. Every worker receives ``2 (n - 1)`` segments.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, ClassVar

import numpy as np

from gradcode.codes.base import (
    DecodeResult,
    GradientCode,
    MessageKey,
    NotDecodableError,
    check_int,
    require,
)
from gradcode.codes.capabilities import Capabilities
from gradcode.codes.combine import message_vectors, split_chunks

IMPLEMENTATIONS = ("explicit", "mpi")


class RingAllReduce(GradientCode):
    """Ring-AllReduce over ``n`` workers: ``k = n`` partitions, one per worker, ``m = n``.

    Parameters
    ----------
    n : int
        Workers on the ring.
    implementation : {"explicit", "mpi"}
        How the MPI runtime reduces: the textbook ring step by step, or MPI's ``Allreduce``.
    """

    name: ClassVar[str] = "ring-allreduce"
    capabilities: ClassVar[Capabilities] = Capabilities(topology="ring")

    def __init__(self, n: int, implementation: str = "explicit") -> None:
        self.n = check_int("n", self.name, n, minimum=1)
        require(
            implementation in IMPLEMENTATIONS,
            f"{self.name} needs implementation in {IMPLEMENTATIONS} "
            f"(got implementation={implementation!r})",
        )
        self.implementation = implementation
        self.k = self.m = self.n
        self.s = self.a = 0

    @classmethod
    def parameter_grid(cls, max_n: int) -> Iterator[dict[str, Any]]:
        for n in range(1, max_n + 1):
            yield {"n": n}

    def params(self) -> dict[str, Any]:
        """``n``, and ``implementation`` where it is not the default (a runtime choice that
        does not change the scheme's timing or results)."""
        params: dict[str, Any] = {"n": self.n}
        if self.implementation != "explicit":
            params["implementation"] = self.implementation
        return params

    # -- assignment and messages ------------------------------------------------------------
    def partitions(self, worker: int) -> tuple[int, ...]:
        return (worker,)

    def message_keys(self, worker: int) -> tuple[MessageKey, ...]:
        return tuple((worker, j) for j in range(self.n))

    def message_prefix(self, key: MessageKey) -> int:
        return 1

    def encode_message(self, key: MessageKey, partials: np.ndarray) -> np.ndarray:
        """Segment ``j`` of worker ``i``'s partial gradient, for ``key = (i, j)``."""
        _, segment = key  # type: ignore[misc]
        return split_chunks(np.asarray(partials, dtype=np.float64)[:1], self.m)[0, segment]

    def encode(self, worker: int, partials: np.ndarray) -> np.ndarray:
        return self.encode_message(self.message_keys(worker)[-1], partials)

    # -- decoding ---------------------------------------------------------------------------
    def is_decodable(self, keys: Iterable[MessageKey]) -> bool:
        return len(set(keys)) >= self.n * self.n

    def completion_times(self, arrivals: np.ndarray) -> np.ndarray:
        """Every segment of every worker: the last arrival."""
        return self._arrivals(arrivals).max(axis=1)

    def decode_result(self, messages: Mapping[MessageKey, np.ndarray], length: int) -> DecodeResult:
        missing = [key for key in self.all_message_keys() if key not in messages]
        if missing:
            raise NotDecodableError(
                f"{self.name} needs every segment of every worker; {len(missing)} missing",
                needed=len(missing),
                candidates=missing,
            )
        width = self.message_length(length)
        out = np.zeros((self.m, width))
        for segment in range(self.m):
            keys = [(worker, segment) for worker in range(self.n)]
            for vector in message_vectors(self.name, messages, keys, width):
                out[segment] += vector
        return DecodeResult(out.reshape(-1)[:length], self.all_message_keys(), 1.0)

    # -- the ring's schedule ----------------------------------------------------------------
    def rounds(self) -> int:
        """Transfers per worker: ``n - 1`` reduce-scatter plus ``n - 1`` all-gather."""
        return 2 * (self.n - 1)

    def completion(self, compute: np.ndarray, tc: float) -> np.ndarray:
        """When every worker holds the gradient, ``(trials,)``; ``compute`` is ``(trials, n)``."""
        return compute.max(axis=1) + self.rounds() * tc / self.n

    def messages(self) -> int:
        """Segments received by all workers together."""
        return self.n * self.rounds()
