"""Failed ranks: what each rank knows of them, and what a failure means for the run.

A run with ``faults.tolerate`` runs on an MPI that reports a dead process instead of ending the
job (Open MPI with ULFM, ``gradcode.launch.mpilib``); every communicator then returns errors
(``MPI.ERRORS_RETURN``) and an operation that involves a dead rank raises ``MPI.Exception`` of
class ``MPI_ERR_PROC_FAILED`` (a receive posted from it completes in error, a send to it fails,
a probe of it raises). ``Failures`` is one rank's view: ``noticed(error, ...)`` takes such an
exception, learns *which* ranks failed from MPI itself (``MPI_Comm_get_failed`` on
``COMM_WORLD``: the processes this rank knows dead, which the runtime tells every survivor,
not only those that talked to the dead rank) and acknowledges them, so that later operations
on the other ranks go on. ``poll`` asks the same question without an error in hand (the
master looks once per iteration, so it also learns of a dead tree node it never talks to).
Nothing here guesses from a timeout.

Every rank keeps its own view; the master's is the one recorded, per failure (``Failure``):
the rank and worker, its node (host), the iteration in progress, the seconds into the run
(and the monotonic clock, comparable with ``gradcode train inject``'s record of the kill), and
how it was detected.

What a failure does is the code's rule (``alive_decodable``): a flat code decodes from the
others while ``is_decodable`` holds for the message keys of the live workers; a tree code's
``is_decodable`` on the live nodes accounts for lost subtrees. A run whose code cannot
decode without the failed workers (uncoded, a ring, more failures than the code tolerates)
stops with ``CannotContinue``: one line naming the failed workers, the iteration and the
last checkpoint (exit status ``EXIT_CANNOT_CONTINUE``); rerunning the same command with every
worker resumes from that checkpoint.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from mpi4py import MPI

from gradcode.train.protocol import clock

#: the job's exit status when failures leave the code unable to decode (1: a bug, 2: bad input)
EXIT_CANNOT_CONTINUE = 3


def failure_classes() -> tuple[int, ...]:
    """Error classes that mean "a process failed" (ULFM's; absent from MPICH's mpi4py ABI)."""
    names = ("ERR_PROC_FAILED", "ERR_PROC_FAILED_PENDING", "ERR_REVOKED")
    return tuple(int(getattr(MPI, name)) for name in names if hasattr(MPI, name))


def is_failure(error: BaseException) -> bool:
    """Whether ``error`` is MPI's report of a failed process."""
    return isinstance(error, MPI.Exception) and error.Get_error_class() in failure_classes()


@dataclass
class Failure:
    """One failed rank as the detecting rank saw it."""

    rank: int
    worker: int | None  # the code worker the rank served (None: an idle spare)
    node: str | None
    iteration: int | None
    seconds: float  # into the run (the detecting rank's clock since the run began)
    monotonic: float  # time.perf_counter on the detecting rank
    detected_by: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class CannotContinue(RuntimeError):
    """Failures left the code unable to decode: the run stops (one line, resumable)."""

    exit_status = EXIT_CANNOT_CONTINUE

    def __init__(self, failed: Sequence[Failure], iteration: int, reason: str) -> None:
        self.failed, self.iteration, self.reason = list(failed), iteration, reason
        super().__init__(reason)


class Failures:
    """This rank's knowledge of dead ranks of ``world`` (see the module docstring).

    ``enabled`` is False on a run without ``faults.tolerate``: nothing is asked of MPI, and an
    MPI error stays an error. Rank ``r <= workers`` serves worker ``r - 1``; the ranks after
    them are spares, which serve no worker until ``assign`` gives one a dead worker's place.
    """

    def __init__(
        self,
        world: MPI.Comm,
        *,
        enabled: bool,
        workers: int | None = None,
        began: float | None = None,
        hosts: Sequence[str] | None = None,
    ) -> None:
        self.world, self.enabled = world, enabled
        self.began = clock() if began is None else began
        self.hosts = list(hosts) if hosts is not None else None
        size = world.Get_size()
        workers = size - 1 if workers is None else workers
        #: the worker each rank serves (``None``: rank 0, an idle spare)
        self.serves: dict[int, int | None] = {
            rank: rank - 1 if 0 < rank <= workers else None for rank in range(size)
        }
        self.failed: dict[int, Failure] = {}
        self.iteration: int | None = None
        self._fresh: list[Failure] = []
        if enabled:
            world.Set_errhandler(MPI.ERRORS_RETURN)

    # -- learning ---------------------------------------------------------------------------
    def noticed(self, error: BaseException, how: str, comm: MPI.Comm | None = None) -> list[int]:
        """An MPI call raised ``error``: re-raise it unless it reports a failed process; else
        learn which ranks failed (``how``: the call that saw it) and return the new ones.
        ``comm``: the call's communicator if not ``world``, acknowledged too (an operation from
        any source on it raises until its failures are acknowledged there)."""
        if not self.enabled or not is_failure(error):
            raise error
        new = self._learn(f"{how}: {_class_name(error)}")
        if comm is not None and comm != self.world:
            comm.Ack_failed()
        return new

    def poll(self) -> list[int]:
        """Ranks newly known dead without an error in hand (``MPI_Comm_get_failed``)."""
        if not self.enabled:
            return []
        return self._learn("MPI_Comm_get_failed (failure notice from the MPI runtime)")

    def _learn(self, how: str) -> list[int]:
        group, everyone = self.world.Get_failed(), self.world.Get_group()
        try:
            dead = group.Translate_ranks(None, everyone)
        finally:
            group.Free()
            everyone.Free()
        self.world.Ack_failed()  # later ANY_SOURCE operations go on past the known failures
        now, new = clock(), []
        for rank in sorted(int(r) for r in dead):
            if rank in self.failed or rank == MPI.UNDEFINED:
                continue
            record = Failure(
                rank=rank,
                worker=self.serves.get(rank),
                node=self.hosts[rank] if self.hosts is not None else None,
                iteration=self.iteration,
                seconds=now - self.began,
                monotonic=now,
                detected_by=how,
            )
            self.failed[rank] = record
            self._fresh.append(record)
            new.append(rank)
        return new

    # -- reading ----------------------------------------------------------------------------
    def dead(self, rank: int) -> bool:
        return rank in self.failed

    def assign(self, rank: int, worker: int) -> None:
        """Spare ``rank`` serves ``worker`` from now on (its failures are that worker's)."""
        self.serves[rank] = worker

    def workers(self) -> list[int]:
        """Workers that lost a rank (a worker replaced and lost again counts once), sorted."""
        return sorted({f.worker for f in self.failed.values() if f.worker is not None})

    def take_fresh(self) -> list[Failure]:
        """Failures learned since the last call (for the iteration's log record)."""
        fresh, self._fresh = self._fresh, []
        return fresh

    def records(self) -> list[dict[str, Any]]:
        return [self.failed[rank].as_dict() for rank in sorted(self.failed)]


def _class_name(error: BaseException) -> str:
    code = error.Get_error_class() if isinstance(error, MPI.Exception) else None
    for name in ("ERR_PROC_FAILED", "ERR_PROC_FAILED_PENDING", "ERR_REVOKED"):
        if code is not None and getattr(MPI, name, None) == code:
            return "MPI_" + name
    return str(error)


def describe_workers(failures: Sequence[Failure]) -> str:
    """``worker 2 (rank 3, node x)``, joined."""
    parts = []
    for failure in failures:
        where = f", node {failure.node}" if failure.node else ""
        who = "spare" if failure.worker is None else f"worker {failure.worker}"
        parts.append(f"{who} (rank {failure.rank}{where})")
    return ", ".join(parts)
