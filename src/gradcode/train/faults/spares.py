"""Spares: idle ranks that take a dead worker's place, so the run tolerates ``s`` failures again.

A run with ``faults.spares: k`` (``faults.tolerate``, a master-worker code) starts ``k`` ranks
after the workers (world ranks ``n + 1 .. n + k``) that hold no data and wait. When the master
learns that the rank serving worker ``w`` died (``gradcode.train.faults.failures``), it takes the
next live spare, records in its ``Failures`` that the spare serves ``w`` from now on
(``Failures.assign``: a later death of the spare is ``w``'s again), and sends the spare
``ASSIGN``: ``w`` and ``w``'s partitions from the data rank 0 holds (pickle protocol 5, the
arrays sent out of band, ``mpi4py.util.pkl5``). The spare
loads them, answers ``READY`` and runs the ordinary worker loop as ``w``
(``RankContext.replaces``): same partitions, same message keys, same injected delays, so the
decoded gradients, and the model, are what they would have been had ``w`` never died. The
master sends it the current model at once (it may still answer the iteration in progress)
and every model after; its results come on its own channel, named by their message key like
any worker's.

A worker dropped as a caught liar (``adversaries.caught: drop``, ``gradcode.train.faults.caught``)
is replaced the same way (``replace_dropped``, ``reason`` "dropped as a liar"); its rank stays
alive and idle until the end, and the spare in its place is honest.

Until a spare is assigned the dead worker is a permanent straggler, as without spares; once
assigned, the master counts ``w`` alive again when it asks whether the code still decodes
(the spare answers like a slow worker until its data is in), so a later failure of another
worker is tolerated as if none had happened. No spare left: the dead worker stays lost.

Recorded per replacement (``summary.json``'s ``replacements``, and in the log record of the
iteration that made it): the worker, the dead rank, the spare's rank, the iteration, and on
the master's clock the seconds into the run of the detection, the assignment, ``READY`` (the
time to recover: ``ready - detected``) and the first result of the spare that reached the
master (used in a decoding or, when its group's other member was faster, late).

Why master-worker only: a tree node's children and parent, and a ring's neighbours, talk to
the dead rank directly; they would all have to learn a new peer (``gradcode.runfile.plan``
refuses ``spares`` for them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np
from mpi4py import MPI
from mpi4py.util import pkl5

from gradcode.train import protocol
from gradcode.train.faults.failures import Failures
from gradcode.train.protocol import clock
from gradcode.train.runtime import Links, RankContext
from gradcode.train.shutdown import await_finish
from gradcode.train.transport import nap, probe
from gradcode.train.worker import Worker


@dataclass
class Replacement:
    """One dead worker's place taken by a spare (seconds into the run, master's clock)."""

    worker: int
    failed_rank: int
    spare_rank: int
    iteration: int
    detected: float
    assigned: float
    ready: float | None = None
    first_result: float | None = None
    first_result_iteration: int | None = None
    #: why the worker's rank left: it died, or it was dropped as a caught liar
    #: (``adversaries.caught: drop``, ``gradcode.train.faults.caught``)
    reason: str = "failed"

    def as_dict(self) -> dict[str, Any]:
        record = asdict(self)
        record["recovery"] = None if self.ready is None else self.ready - self.detected
        return record


class Replacements:
    """The master's spares: which rank serves each worker, and the replacements made.

    ``share(worker)`` returns the worker's data as ``gradcode.train.shares`` gives it
    (``{partition: (X_p, y_p)}``). Every ``ASSIGN`` send lives here until it completes (``pump``).
    """

    def __init__(
        self,
        world: MPI.Comm,
        failures: Failures,
        workers: int,
        spares: int,
        share: Callable[[int], dict[int, Any]],
        began: float,
    ) -> None:
        self.world, self.failures, self.share, self.began = world, failures, share, began
        self.pool = list(range(workers + 1, workers + 1 + spares))
        #: the rank serving each worker
        self.rank_of = {worker: worker + 1 for worker in range(workers)}
        self.made: list[Replacement] = []
        self._fresh: list[Replacement] = []
        self._sends: list[Any] = []
        # pickle protocol 5 with the arrays out of band: no pickled copy of the partitions
        self._oob = pkl5.Intracomm(world)

    def replace_dead(self, iteration: int) -> list[Replacement]:
        """Give every worker whose rank died a live spare (while any is left)."""
        made = []
        for worker, rank in sorted(self.rank_of.items()):
            if not self.failures.dead(rank):
                continue
            record = self._assign(worker, rank, iteration, self.failures.failed[rank].seconds)
            if record is None:
                break
            made.append(record)
        return made

    def replace_dropped(self, worker: int, rank: int, iteration: int) -> Replacement | None:
        """Give ``worker``, whose rank ``rank`` was dropped as a caught liar in ``iteration``,
        a live spare (``None``: none is left). The spare serves it honestly: the liar is the
        process (``gradcode.train.worker``)."""
        return self._assign(worker, rank, iteration, clock() - self.began, "dropped as a liar")

    def _assign(
        self, worker: int, rank: int, iteration: int, detected: float, reason: str = "failed"
    ) -> Replacement | None:
        """The next live spare takes ``worker``'s place from rank ``rank`` (``None``: none
        left): ``ASSIGN`` with the worker's partitions on its way."""
        spare = self._take_spare()
        if spare is None:
            return None
        self.failures.assign(spare, worker)
        self.rank_of[worker] = spare
        payload = {"worker": worker, "parts": self.share(worker)}
        try:
            self._sends.append(self._oob.isend(payload, dest=spare, tag=protocol.ASSIGN))
        except MPI.Exception as error:
            self.failures.noticed(error, f"assigning worker {worker} to spare rank {spare}")
        record = Replacement(
            worker=worker,
            failed_rank=rank,
            spare_rank=spare,
            iteration=iteration,
            detected=detected,
            assigned=clock() - self.began,
            reason=reason,
        )
        self.made.append(record)
        self._fresh.append(record)
        return record

    def _take_spare(self) -> int | None:
        while self.pool:
            spare = self.pool.pop(0)
            if not self.failures.dead(spare):
                return spare
        return None

    def poll(self, first_heard: dict[int, tuple[int, float]]) -> None:
        """Note every assigned spare's ``READY`` and its first result (``first_heard``: per
        source rank, the iteration and ``clock`` time of its first message, used or late:
        ``ResultPort.first_heard``); move the ``ASSIGN`` sends on."""
        for record in self.made:
            heard = first_heard.get(record.spare_rank)
            if heard is not None and record.first_result is None:
                record.first_result_iteration = heard[0]
                record.first_result = heard[1] - self.began
            if record.ready is not None or self.failures.dead(record.spare_rank):
                continue
            try:
                if self.world.Iprobe(source=record.spare_rank, tag=protocol.READY):
                    self.world.Recv([np.empty(0), MPI.DOUBLE], record.spare_rank, protocol.READY)
                    record.ready = clock() - self.began
            except MPI.Exception as error:
                self.failures.noticed(error, f"waiting for READY from rank {record.spare_rank}")
        self.pump()

    def pump(self) -> bool:
        """Test the ``ASSIGN`` sends; True once all completed (or their spare died)."""
        kept = []
        for request in self._sends:
            try:
                done, _ = request.test()  # a pkl5 request: the header and every buffer
                if not done:
                    kept.append(request)
            except MPI.Exception as error:
                self.failures.noticed(error, "an ASSIGN send")
        self._sends = kept
        return not kept

    def replaced(self, worker: int) -> bool:
        """Whether ``worker`` is served by a live spare now."""
        rank = self.rank_of[worker]
        return rank != worker + 1 and not self.failures.dead(rank)

    def serving(self) -> list[dict[str, int]]:
        """The workers a spare serves now, and its rank."""
        return [
            {"worker": worker, "rank": rank}
            for worker, rank in sorted(self.rank_of.items())
            if rank != worker + 1
        ]

    def idle(self) -> list[int]:
        """Live spares never assigned (they get ``STOP`` on ``world`` at the end)."""
        return [rank for rank in self.pool if not self.failures.dead(rank)]

    def take_fresh(self) -> list[dict[str, Any]]:
        fresh, self._fresh = self._fresh, []
        return [record.as_dict() for record in fresh]

    def records(self) -> list[dict[str, Any]]:
        return [record.as_dict() for record in self.made]


def run_spare(ctx: RankContext, links: Links) -> None:
    """A spare rank: wait for ``ASSIGN`` (then serve that worker) or for the end of the run."""
    world, status = ctx.world, MPI.Status()
    while True:
        if probe(world, 0, status):
            if status.Get_tag() != protocol.ASSIGN:  # STOP: the run ended without needing us
                await_finish(world, lambda: True, ctx.poll)
                return
            payload = pkl5.Intracomm(world).recv(source=0, tag=protocol.ASSIGN)
            world.Send([np.empty(0), MPI.DOUBLE], dest=0, tag=protocol.READY)
            serving = replace(ctx, parts=payload["parts"], replaces=int(payload["worker"]))
            Worker(serving, links).run()
            return
        nap(None, ctx.poll)
