"""How the model reaches the workers (``runtime.distribution``).

- ``isend``: the master sends the whole model to every worker, one ``Isend`` each: ``n``
  copies through its port. In a tree code every parent sends it on to each of its children
  once it holds all of it (store and forward: one copy per child through every parent's port).
- ``scatter``: the master sends worker ``j`` only chunk ``j`` of the model (``1 / n`` of it),
  and worker ``j`` forwards it to every other worker as soon as it has it; a worker begins the
  iteration once it holds every chunk. A tree code's nodes are the workers here: the pieces
  travel among all of them (``Links.pieces``), not down the tree. Chunks travel in ``pieces``
  (``scatter_pieces``): the master sends every worker its first piece, then every worker its
  second, and so on, and a worker forwards each piece as it comes, so the forwards start after a
  piece, not after a whole chunk, came through the master's port (measured on the emulated
  cluster, n = 8, l = 125,000: the last worker held the model 0.10-0.13 s after it left, against
  one copy's 0.084 s through a worker's link, with whole chunks). About one copy leaves the
  master's port and about one passes each worker's link each way. A straggler forwards all the
  same: its injected delays are naps in which it still polls every few milliseconds. A worker
  that never answers (persistent, silent) would never forward, and one behind a slow link would
  hold everyone back: the master sends *those* chunks to every worker itself (``covered``): the
  first from the start, the second once a worker reported that chunk kept its model waiting
  (``model_last``, ``model_wait``, ``model_span`` in its results' header; in a tree, the
  master's children's), for the next iterations (``gradcode.train.master``). The master's port
  carries ``1 + c`` copies for ``c`` covered chunks, instead of ``n``. With
  ``faults.tolerate`` (flat codes) a dead worker's chunk is covered from the iteration the
  master learns of it, in that iteration too: the master sends its pieces of the model in
  hand to every live worker (a worker takes a piece once, from whoever sent it first), and a
  spare that took a dead worker's place gets whole models (it is not among the ranks the
  workers forward to).
- ``auto`` (the default): ``scatter`` where ``choose`` predicts it faster, else ``isend``.

A piece travels as ``[t, c, forward, values...]`` (``CHUNK_HEADER``) with tag
``protocol.MODEL_CHUNK`` on ``Links.pieces``: piece ``c`` of the ``n P`` contiguous pieces of
the point belongs to worker ``c mod n``'s chunk; ``forward`` is 1 when that worker must pass it
on. Covering, the reports and the log speak of chunks (workers), never of pieces. Pieces of an
older iteration than the newest seen are dropped, and a piece of a newer one abandons the model
being assembled: the newest model wins, as with ``isend``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np

from gradcode.codes.base import GradientCode
from gradcode.runfile.choice import Choice
from gradcode.runfile.config import RunConfig
from gradcode.topology import topology_of
from gradcode.train.runtime import RankContext

#: a chunk's header: iteration, chunk index, whether its worker forwards it
CHUNK_HEADER = 3
#: below this many workers a forward saves too little of the master's port
SCATTER_MIN_WORKERS = 4
#: a chunk that held a worker's model back this long, and ``SLOW_CHUNK_FACTOR`` times as long
#: as all the others took to come, is covered for the next ``COVER_ITERATIONS`` iterations,
#: then tried again (measured on the emulated cluster, n = 8: in the normal course the last
#: chunk comes 10-30 ms after the others; a 10 Mbit/s node's, a second after them)
SLOW_CHUNK_WAIT = 0.05
SLOW_CHUNK_FACTOR = 2.0
COVER_ITERATIONS = 20
#: a chunk goes in pieces of at least this many bytes, at most ``MAX_PIECES`` of them (each
#: piece costs every forwarder ``n - 1`` sends)
PIECE_BYTES = 16 * 1024
MAX_PIECES = 8


def chunk_edges(length: int, parts: int) -> list[int]:
    """Boundaries of ``parts`` contiguous chunks of ``length`` values (sizes differ by <= 1)."""
    return [(length * j) // parts for j in range(parts + 1)]


def scatter_pieces(features: int, workers: int) -> int:
    """How many pieces each worker's chunk of a ``features``-long model travels in."""
    chunk_bytes = 8 * features // max(workers, 1)
    return max(1, min(MAX_PIECES, chunk_bytes // PIECE_BYTES))


def choose(
    requested: str,
    code: GradientCode,
    *,
    features: int,
    master_rate: float | None,
    worker_rate: float | None,
    tolerant: bool,
) -> Choice:
    """``requested`` (``runtime.distribution``) resolved for this run.

    ``auto`` takes ``scatter`` only where the links' rates are known (``network.links``), the
    code's topology can scatter (``Topology.scatter_refusal``: not a ring, whose model goes to
    every worker; not a tree whose failures are tolerated, since a dead node's chunk would have
    to reach the nodes by the tree's own ways) and the model's time falls: the copies' time
    (``Topology.copies_seconds``: ``n B / R_master`` for a flat code) against
    ``B / R_master + (n - 1) B / (n R_worker)`` (``B`` the model's bytes; ``scatter``'s
    forwards share every worker's link), with at least ``SCATTER_MIN_WORKERS`` workers. No
    upper bound: the stall that once capped it at 20 was the emulated cluster's shared ARP
    table (docs/measurements/cluster-scale.md), and scattering measured faster than copies at
    N = 39 (CR: 0.24 against 0.32 s an iteration).
    """
    if requested == "isend":
        return Choice("isend", "runtime.distribution: isend")
    topology = topology_of(code)
    why_not = topology.scatter_refusal(tolerant=tolerant)
    if why_not is not None:
        return Choice("isend", why_not)
    if requested == "scatter":
        return Choice("scatter", "runtime.distribution: scatter")
    if master_rate is None or worker_rate is None:
        return Choice("isend", "auto: no link rates (network.links) to predict from")
    workers = code.n
    if workers < SCATTER_MIN_WORKERS:
        return Choice("isend", f"auto: fewer than {SCATTER_MIN_WORKERS} workers")
    size = 8.0 * (features + 1)
    predicted = {
        "isend": topology.copies_seconds(code, size, master_rate, worker_rate),
        "scatter": size / master_rate + (workers - 1) * size / (workers * worker_rate),
    }
    way = "scatter" if predicted["scatter"] < predicted["isend"] else "isend"
    return Choice(way, "auto: the faster prediction on the links", predicted)


def distribution_choice(ctx: RankContext) -> Choice:
    """``choose`` for this run (every rank derives the same)."""
    config = ctx.plan.config
    links = config.network.links if config.network is not None else None
    return choose(
        config.runtime.distribution,
        ctx.plan.code,
        features=ctx.features,
        master_rate=links.master_rate if links is not None else None,
        worker_rate=links.rate if links is not None else None,
        tolerant=ctx.tolerant,
    )


class ChunkSplitter:
    """The master's side: the pieces of one model, each a buffer of its own (``Isend``s keep
    them alive until they complete)."""

    def __init__(self, features: int, workers: int, pieces: int = 1) -> None:
        self.workers, self.pieces = workers, pieces
        self.edges = chunk_edges(features, workers * pieces)

    def chunks(self, model: np.ndarray, covered: Iterable[int]) -> list[tuple[int, np.ndarray]]:
        """``model`` (``[t, point...]``) as piece messages, in sending order (every worker's
        first piece, then every worker's second, ...), each with the worker whose chunk it is
        part of; a covered chunk's pieces have ``forward`` 0."""
        covered = set(covered)
        point = model[1:]
        out = []
        for c in range(self.workers * self.pieces):
            owner = c % self.workers
            lo, hi = self.edges[c], self.edges[c + 1]
            buffer = np.empty(CHUNK_HEADER + hi - lo)
            buffer[0], buffer[1], buffer[2] = model[0], c, 0.0 if owner in covered else 1.0
            buffer[CHUNK_HEADER:] = point[lo:hi]
            out.append((owner, buffer))
        return out


class Covering:
    """Which chunks the master sends to every worker itself: those of workers that never answer
    (``never(worker, t)``: persistent, silent from ``t``; ``lose``: dead), and for
    ``COVER_ITERATIONS`` those a worker reported slow (``observe``)."""

    def __init__(self, workers: int, never: Callable[[int, int], bool]) -> None:
        self.workers, self.never = workers, never
        self.until: dict[int, int] = {}
        self.dead: set[int] = set()

    def lose(self, worker: int) -> None:
        """``worker`` died (``faults.tolerate``): its chunk is covered from now on, also once a
        spare serves it (the spare takes whole models, ``gradcode.train.master``)."""
        self.dead.add(worker)

    @classmethod
    def of(cls, config: RunConfig, workers: int) -> Covering:
        faults, persistent = config.faults, set(config.stragglers.persistent)

        def never(worker: int, t: int) -> bool:
            silent = faults.silent_from(worker) if faults is not None else None
            return worker in persistent or (silent is not None and silent <= t)

        return cls(workers, never)

    def chunks(self, t: int) -> list[int]:
        """The chunks covered in iteration ``t``."""
        return [
            w
            for w in range(self.workers)
            if w in self.dead or self.never(w, t) or self.until.get(w, -1) > t
        ]

    def observe(self, t: int, reports: Iterable[tuple[int, float, float]]) -> list[int]:
        """Iteration ``t``'s reports ``(model_last, model_wait, model_span)``, one per result:
        the chunks found slow, covered from ``t + 1`` for ``COVER_ITERATIONS`` iterations."""
        slow = sorted(
            {
                last
                for last, wait, span in reports
                if last >= 0 and wait > max(SLOW_CHUNK_WAIT, SLOW_CHUNK_FACTOR * span)
            }
        )
        for chunk in slow:
            self.until[chunk] = t + 1 + COVER_ITERATIONS
        return slow


class ModelAssembler:
    """A worker's side: pieces in, the whole model out once every piece of its iteration is
    in hand (``[t, point...]``, as ``isend`` delivers it)."""

    def __init__(self, features: int, workers: int, pieces: int = 1) -> None:
        self.workers, self.pieces, self.count = workers, pieces, workers * pieces
        self.edges = chunk_edges(features, self.count)
        self.iteration = -1
        self.model = np.empty(1 + features)
        self.have: set[int] = set()
        self._first = 0.0
        self._left: list[int] = []
        self._done: dict[int, float] = {}
        #: of the last model completed: the chunk (its forwarder) that completed it last, how
        #: long after every other chunk was complete (the sender reports both: ``model_last``,
        #: ``model_wait``), and how long the others took, from the first piece until the
        #: latest of them was complete. Chunks, not pieces: a slow forwarder's pieces come
        #: spread out between the others', and only its whole chunk stands out
        self.last, self.wait, self.span = -1, 0.0, 0.0

    @property
    def assembling(self) -> bool:
        """Some pieces of a model are in hand, not all."""
        return 0 < len(self.have) < self.count

    def take(self, chunk: np.ndarray, latest: int, now: float) -> np.ndarray | None:
        """Add piece ``chunk`` (taken at ``now``); the complete model when it was the last one
        missing, else ``None``. Pieces of iterations up to ``latest`` (begun already) or older
        than the one being assembled are dropped."""
        t, j = int(chunk[0]), int(chunk[1])
        if t <= latest or t < self.iteration or (t == self.iteration and j in self.have):
            return None
        if t > self.iteration:
            self.iteration, self.have = t, set()
            self._first, self._left, self._done = now, [self.pieces] * self.workers, {}
            self.model = np.empty_like(self.model)  # the previous one may still be in use
            self.model[0] = t
        lo, hi = self.edges[j], self.edges[j + 1]
        self.model[1 + lo : 1 + hi] = chunk[CHUNK_HEADER:]
        self.have.add(j)
        owner = j % self.workers
        self._left[owner] -= 1
        if self._left[owner] == 0:
            self._done[owner] = now
        if len(self.have) < self.count:
            return None
        self.last = owner
        others = [done for chunk_owner, done in self._done.items() if chunk_owner != owner]
        before = max(others, default=self._first)
        self.wait, self.span = now - before, before - self._first
        return self.model
