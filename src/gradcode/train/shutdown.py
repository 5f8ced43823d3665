"""Ending a job so that every rank exits, and exits with the right status.

Rank 0 sends ``STOP`` down the channel that carried the models (tree nodes pass it on to their
children), then keeps draining its receives until every rank has answered ``DONE`` (each rank
answers once all of its own sends completed, while it keeps draining its receives too), then
sends ``FINISH`` to every rank. Since every rank drains until ``FINISH`` and
``FINISH`` follows the last ``DONE``, no send anywhere is left waiting for a receive that will
never be posted (rendezvous), and nobody needs ``MPI_Abort``, which would hide a failure
behind the status of whichever rank aborted. Errors take the other path: the failing rank
prints one line and calls ``Abort`` with a non-zero code, which ends every rank.

With ``faults.tolerate`` the dead take no part: rank 0 waits only for the live ranks, sends
``STOP`` on ``world`` to those whose parent died (``orphans``), and ``FINISH`` to the live.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from mpi4py import MPI

from gradcode.train import protocol
from gradcode.train.faults.failures import Failures
from gradcode.train.transport import SendSet, nap, probe, receive_vector


def stop_all(
    world: MPI.Comm,
    stop_comm: MPI.Comm,
    stop_ranks: dict[int, int],
    drain: Callable[[], bool],
    poll: float,
    *,
    failures: Failures | None = None,
    orphans: Callable[[], list[int]] = list,
) -> dict[int, np.ndarray]:
    """Rank 0: the shutdown protocol.

    ``STOP`` goes to the ranks ``stop_ranks`` of ``stop_comm`` (``{rank in stop_comm: world
    rank}``), the channel that carried the models, so it arrives after every model (MPI does
    not overtake on one communicator); tree nodes forward it to their children. ``drain()``
    keeps rank 0's receives and sends moving and returns True once its own sends completed.
    Returns each rank's ``DONE`` report (``[stale discarded, messages sent, ...]``).

    With ``failures`` (``faults.tolerate``) dead ranks are neither waited for nor sent
    anything, and the live ranks ``orphans()`` names (a dead parent cannot pass ``STOP`` on)
    get ``STOP`` on ``world`` instead; a rank that dies during the shutdown is dropped.
    """
    size = world.Get_size()
    empty = np.empty(0)
    sends = SendSet(failures)
    for rank, world_rank in stop_ranks.items():
        if failures is None or not failures.dead(world_rank):
            sends.send(stop_comm, empty, rank, protocol.STOP)
    told: set[int] = set()
    reports: dict[int, np.ndarray] = {}
    status = MPI.Status()
    idle = False
    while True:
        idle = drain()
        if failures is None:
            while world.Iprobe(source=MPI.ANY_SOURCE, tag=protocol.DONE, status=status):
                reports[status.Get_source()] = receive_vector(world, status)
            waiting = size - 1 - len(reports)
        else:
            failures.poll()
            for rank in orphans():
                if rank not in told:
                    told.add(rank)
                    sends.send(world, empty, rank, protocol.STOP)
            waiting = 0
            for rank in range(1, size):
                if rank in reports or failures.dead(rank):
                    continue
                try:
                    if world.Iprobe(source=rank, tag=protocol.DONE, status=status):
                        reports[rank] = receive_vector(world, status)
                        continue
                except MPI.Exception as error:
                    failures.noticed(error, f"waiting for DONE from rank {rank}")
                    continue
                waiting += 1
        sends.pump()
        if waiting == 0 and idle:
            break
        nap(None, poll)
    while not sends.idle():
        nap(None, poll)
    for rank in range(1, size):
        if failures is None or not failures.dead(rank):
            sends.send(world, empty, rank, protocol.FINISH)
    while not sends.idle():
        nap(None, poll)
    return reports


def await_finish(world: MPI.Comm, drain: Callable[[], bool], poll: float) -> None:
    """A rank with nothing else to do: answer ``STOP`` with ``DONE`` once ``drain()`` reports
    its sends completed, and return on ``FINISH``."""
    status = MPI.Status()
    stopping = False
    done_request = None
    report = np.zeros(2)  # lives until the send completes
    while True:
        idle = drain()
        while probe(world, 0, status):
            receive_vector(world, status)
            if status.Get_tag() == protocol.STOP:
                stopping = True
            elif status.Get_tag() == protocol.FINISH:
                if done_request is not None:
                    done_request.Wait()
                return
        if stopping and idle and done_request is None:
            done_request = world.Isend([report, MPI.DOUBLE], dest=0, tag=protocol.DONE)
        nap(None, poll)
