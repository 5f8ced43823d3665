"""What every rank knows about its place in the job: ``RankContext`` and ``Links``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mpi4py import MPI

from gradcode.models import Model
from gradcode.runfile.bandwidth import SinglePort
from gradcode.runfile.plan import Plan
from gradcode.train.faults.failures import Failures


@dataclass
class Links:
    """A rank's neighbours.

    ``up_comm``/``up_rank``: where models come from and results go (``None`` for rank 0).
    ``down_comm``: where this rank sends models and receives results; ``children[j]`` is the
    worker (tree: node) at rank ``j + 1`` of ``down_comm``. ``pieces``: where a scattered
    model's pieces travel (``gradcode.train.distribution``), among all ranks: the master at
    rank 0, worker (tree node) ``j`` at ``j + 1``; a flat code's data communicator, a tree's
    own. Control messages (``STOP``, ``DONE``, ``FINISH``) always use ``world`` and rank 0.
    """

    world: MPI.Comm
    up_comm: MPI.Comm | None = None
    up_rank: int = 0
    down_comm: MPI.Comm | None = None
    children: list[int] = field(default_factory=list)
    pieces: MPI.Comm | None = None


@dataclass
class RankContext:
    """Per-rank settings: the plan, the model, this rank's partitions ``parts[p] = (X_p, y_p)``,
    the number of features ``p`` and training rows ``N``, the L2 weight, the poll interval
    and whether the ranks share one clock."""

    world: MPI.Comm
    plan: Plan
    model: Model
    features: int
    rows: int
    l2: float
    parts: dict[int, tuple[Any, Any]]
    poll: float
    #: whether every rank reads one monotonic clock (one kernel), so that a sender's
    #: timestamp and a receiver's can be subtracted (``gradcode.train.node``)
    one_clock: bool = True
    #: what this rank knows of failed ranks (``faults.tolerate``; disabled otherwise)
    failures: Failures | None = None
    #: the worker a spare serves once it replaced a dead one (``gradcode.train.faults.spares``)
    replaces: int | None = None

    @property
    def rank(self) -> int:
        return self.world.Get_rank()

    @property
    def worker(self) -> int:
        """This rank's worker (tree node) index; -1 on rank 0."""
        return self.rank - 1 if self.replaces is None else self.replaces

    @property
    def tolerant(self) -> bool:
        return self.failures is not None and self.failures.enabled

    def port(self) -> SinglePort:
        """A fresh receive port with the run's bandwidth emulation."""
        return SinglePort(self.plan.bandwidth, self.features)


def flat_links(world: MPI.Comm, workers: int) -> Links:
    """Master-worker: every worker's parent is rank 0 (collective over ``world``).

    Models and results travel on a duplicate of ``world``: the master's receives posted for
    any tag would otherwise swallow the control messages (``DONE``) that use ``world``.
    """
    data = world.Dup()
    if world.Get_rank() == 0:
        return Links(world, down_comm=data, children=list(range(workers)), pieces=data)
    return Links(world, up_comm=data, up_rank=0, pieces=data)
