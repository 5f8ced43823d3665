"""Ending a job so that every rank exits, and exits with the right status.

Rank 0 sends ``STOP`` down the channel that carried the models (tree nodes pass it on to their
children), then keeps draining its receives until every rank has answered ``DONE`` (each rank
answers once all of its own sends completed, while it keeps draining its receives too), then
sends ``FINISH`` to every rank. Since every rank drains until ``FINISH`` and
``FINISH`` follows the last ``DONE``, no send anywhere is left waiting for a receive that will
never be posted (rendezvous), and nobody needs ``MPI_Abort``, which would hide a failure
behind the status of whichever rank aborted. Errors take the other path: the failing rank
prints one line and calls ``Abort`` with a non-zero code, which ends every rank.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from mpi4py import MPI

from gradcode.train import protocol
from gradcode.train.transport import nap, probe, receive_vector


def stop_all(
    world: MPI.Comm,
    stop_comm: MPI.Comm,
    stop_ranks: list[int],
    drain: Callable[[], bool],
    poll: float,
) -> dict[int, np.ndarray]:
    """Rank 0: the shutdown protocol.

    ``STOP`` goes to ``stop_ranks`` of ``stop_comm``, the channel that carried the models, so
    it arrives after every model (MPI does not overtake on one communicator); tree nodes
    forward it to their children. ``drain()`` keeps rank 0's receives and sends moving and
    returns True once its own sends completed. Returns each rank's ``DONE`` report
    (``[stale discarded, messages sent]``).
    """
    size = world.Get_size()
    empty = np.empty(0)
    requests = [stop_comm.Isend([empty, MPI.DOUBLE], dest=r, tag=protocol.STOP) for r in stop_ranks]
    reports: dict[int, np.ndarray] = {}
    status = MPI.Status()
    idle = False
    while len(reports) < size - 1 or not idle:
        idle = drain()
        while world.Iprobe(source=MPI.ANY_SOURCE, tag=protocol.DONE, status=status):
            reports[status.Get_source()] = receive_vector(world, status)
        nap(None, poll)
    MPI.Request.Waitall(requests)
    finish = [world.Isend([empty, MPI.DOUBLE], dest=r, tag=protocol.FINISH) for r in range(1, size)]
    while not MPI.Request.Testall(finish):
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
