"""Ring-AllReduce: every worker holds the model, the workers sum their gradients among
themselves, and every worker applies the same update (no master in the loop).

Workers are ranks ``1..n`` (ring rank ``i`` is worker ``i`` and holds partition ``i``); rank
0 only mirrors the model for logging, metrics and checkpoints: it receives every worker's
timings and, from worker 0, the reduced sum, and applies the same optimizer step, so its model
equals the workers' (same operations on the same numbers) and a resumed job restarts every
worker from rank 0's checkpoint. Two implementations (``scheme.params.implementation``):

- ``mpi``: ``MPI_Iallreduce`` on the workers' communicator (paper 001's RAR baseline calls
  ``MPI_Allreduce``), completed by sleep-polling so that oversubscribed ranks do not spin;
- ``explicit``: the textbook ring, a reduce-scatter then an all-gather, ``2 (n - 1)`` steps;
  at step ``s`` worker ``r`` sends one of ``n`` chunks to ``r + 1`` and receives one from ``r -
  1``. Each step is delayed like any other message: the sender's link delay (``comm`` of the
  straggler model, per full-length vector, scaled by the chunk's size) and the receiver's
  single port (bandwidth emulation), so the ring's ``2 (n - 1) / n`` vectors per worker can be
  compared with the master's ``n`` incoming ones. Each step is timed on the worker, from
  posting its send to the completion of its incoming chunk (``step_time`` in the log: the sum
  over the steps, ``step_time_max``, ``step_bytes``; zeros for ``mpi``): on real links, the
  chunk's transfer plus any wait for the left neighbour to reach the step.

Report layout (``REPORT`` tag, float64): ``RING_FIELDS`` then, from worker 0, the sum.
Rank 0 receives each report into a buffer of the length it expects, as bytes, and checks it
(``gradcode.train.intake.report_refusal``: length, header, a finite sum) before stepping along
it; a refused report stops the run (``DecodingFailed``, exit 4): every worker of a ring steps
along the same sum, so none can be left out. The ring's own chunks, worker to worker, are not
checked: a ring has no master to refuse them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from mpi4py import MPI

from gradcode import dilation
from gradcode.fidelity import work
from gradcode.optim import State
from gradcode.train import protocol
from gradcode.train.distribution import chunk_edges
from gradcode.train.faults.caught import DecodingFailed
from gradcode.train.faults.failures import CannotContinue
from gradcode.train.intake import report_refusal
from gradcode.train.protocol import clock
from gradcode.train.runtime import RankContext
from gradcode.train.session import Session
from gradcode.train.shutdown import await_finish, stop_all
from gradcode.train.transport import SendSet, nap, probe, wait

RING_FIELDS = (
    "iteration",
    "worker",
    "began",  # when the worker started the iteration (host clock)
    "computed",  # when its partial (and injected compute delay) was done
    "reduced",  # when the all-reduce completed on this worker
    "compute",  # measured seconds computing the partial
    "injected_compute",  # injected seconds (start + per partition)
    "injected_comm",  # injected link seconds over all ring steps
    "port_wait",  # seconds spent in the emulated single port over all ring steps
    "step_time",  # explicit ring: measured seconds over all steps, each from posting the
    # step's send to the completion of its incoming chunk
    "step_time_max",  # the longest step
    "step_bytes",  # bytes received over all steps
)
R = len(RING_FIELDS)
RING = {name: index for index, name in enumerate(RING_FIELDS)}
#: at most this many reports in flight before a worker waits for rank 0 to catch up
MAX_PENDING_REPORTS = 16


def ring_comm(world: MPI.Comm) -> MPI.Comm:
    """The workers' communicator (ring rank = world rank - 1); ``COMM_NULL`` on rank 0."""
    rank = world.Get_rank()
    return world.Split(MPI.UNDEFINED if rank == 0 else 1, rank)


def sleep_until(deadline: float) -> None:
    remaining = deadline - clock()
    if remaining > 0:
        dilation.sleep(remaining)


class RingWorker:
    def __init__(self, ctx: RankContext, comm: MPI.Comm, start: int, state: State) -> None:
        self.ctx, self.comm, self.start = ctx, comm, start
        self.optimizer = ctx.plan.optimizer()
        self.state = state
        self.delays = ctx.plan.delay_source()
        self.n = comm.Get_size()
        self.me = comm.Get_rank()
        self.edges = chunk_edges(ctx.features, self.n)
        self.port = ctx.port()
        self.reports = SendSet()
        ring = ctx.plan.topology.ring(ctx.plan.code)
        assert ring is not None  # the ring's ranks run only a ring code
        self.explicit = ring.implementation == "explicit"

    def run(self) -> None:
        ctx = self.ctx
        X, y = ctx.parts[self.me]
        for t in range(self.start, ctx.plan.config.iterations):
            point = self.optimizer.point(self.state)
            start_delay, compute_delay, comm = self.delays.delays(t).of(self.me)
            began = clock()
            sleep_until(began + start_delay)
            tick = clock()
            real = work.begin()
            partial = ctx.model.partial_gradient(X, y, point)
            work.end(real)
            measured = clock() - tick
            sleep_until(clock() + compute_delay)
            computed = clock()
            steps = [0.0, 0.0, 0.0]
            if self.explicit:
                total, link, port_wait = self._explicit(partial, comm, steps)
            else:
                total, link, port_wait = self._mpi(partial), 0.0, 0.0
            reduced = clock()
            gradient = ctx.model.full_gradient(total, point, ctx.rows, ctx.l2)
            self.optimizer.step(self.state, t, gradient)
            fields = [t, self.me, began, computed, reduced, measured]
            fields += [start_delay + compute_delay, link, port_wait, *steps]
            self._report(np.array(fields, dtype=np.float64), total if self.me == 0 else None)
        await_finish(ctx.world, self.reports.idle, ctx.poll)

    def _report(self, fields: np.ndarray, total: np.ndarray | None) -> None:
        buffer = fields if total is None else np.concatenate([fields, total])
        while self.reports.pending() >= MAX_PENDING_REPORTS:
            self.reports.pump()
            nap(None, self.ctx.poll)
        self.reports.send(self.ctx.world, buffer, 0, protocol.REPORT)

    def _mpi(self, partial: np.ndarray) -> np.ndarray:
        total = partial.copy()
        request = self.comm.Iallreduce(MPI.IN_PLACE, [total, MPI.DOUBLE], op=MPI.SUM)
        wait(request, self.ctx.poll)
        return total

    def _explicit(
        self, partial: np.ndarray, comm: float, steps: list[float]
    ) -> tuple[np.ndarray, float, float]:
        """Reduce-scatter then all-gather; returns ``(sum, link seconds, port seconds)`` and
        fills ``steps`` with the measured ``step_time``, ``step_time_max``, ``step_bytes``."""
        n, me, edges = self.n, self.me, self.edges
        buffer = partial.copy()
        if n == 1:
            return buffer, 0.0, 0.0
        scratch = np.empty(max(edges[j + 1] - edges[j] for j in range(n)))
        right, left = (me + 1) % n, (me - 1) % n
        link = waited = 0.0
        # A send is completed only where its chunk is about to change: waiting for it before
        # the next step cost every step a second latency on links (MPICH's send completes
        # when the receiver has the data), 15.4 ms a step instead of 10.7 at 5 ms one way
        # (docs/measurements/fit-loop.md). Reduce-scatter's chunks are overwritten in the
        # all-gather only; the all-gather's are never written after they are sent.
        sends: list[MPI.Request] = []
        for step in range(2 * (n - 1)):
            if step < n - 1:  # reduce-scatter: after n - 1 steps chunk me + 1 is complete
                send, receive = (me - step) % n, (me - step - 1) % n
            else:  # all-gather: pass the complete chunks around
                if step == n - 1:
                    _complete(sends, self.ctx.poll)
                s = step - (n - 1)
                send, receive = (me + 1 - s) % n, (me - s) % n
            size = edges[receive + 1] - edges[receive]
            incoming = scratch[:size]
            request = self.comm.Irecv([incoming, MPI.DOUBLE], source=left, tag=step)
            outgoing = buffer[edges[send] : edges[send + 1]]
            delay = comm * outgoing.size / buffer.size
            sleep_until(clock() + delay)  # the sender's link carries the chunk
            link += delay
            posted = clock()
            sends.append(self.comm.Isend([outgoing, MPI.DOUBLE], dest=right, tag=step))
            wait(request, self.ctx.poll)
            arrived = clock()
            steps[0] += arrived - posted
            steps[1] = max(steps[1], arrived - posted)
            steps[2] += incoming.nbytes
            accepted = self.port.accept_time(arrived, incoming.nbytes)
            sleep_until(accepted)  # the receiver takes one message at a time
            waited += max(0.0, accepted - arrived)
            if step < n - 1:
                buffer[edges[receive] : edges[receive + 1]] += incoming
            else:
                buffer[edges[receive] : edges[receive + 1]] = incoming
        _complete(sends, self.ctx.poll)
        return buffer, link, waited


def _complete(sends: list[MPI.Request], poll: float) -> None:
    """Complete and forget the sends in ``sends`` (sleep-polling, in order)."""
    for request in sends:
        wait(request, poll)
    sends.clear()


class RingCoordinator:
    """Rank 0 of a ring job: mirror the model from the workers' reports, log, checkpoint."""

    def __init__(self, ctx: RankContext, session: Session) -> None:
        self.ctx, self.session = ctx, session
        self.delays = ctx.plan.delay_source()
        self.failures = ctx.failures if ctx.tolerant else None
        #: a worker died or its report was refused: a ring cannot go on (set instead of
        #: raising, for ``run``'s caller)
        self.stopped: CannotContinue | DecodingFailed | None = None

    def run(self) -> dict[str, Any]:
        try:
            return self._run()
        except (CannotContinue, DecodingFailed) as stop:
            self.stopped = stop
            return {}

    def _take(self, t: int, worker: int, status: MPI.Status) -> np.ndarray:
        """Worker ``worker``'s probed report of iteration ``t``, checked; ``DecodingFailed``
        when it is refused (module docstring)."""
        ctx = self.ctx
        buffer = np.empty(R + (ctx.features if worker == 0 else 0))
        request = ctx.world.Irecv(
            [buffer.view(np.uint8), MPI.BYTE], source=worker + 1, tag=status.Get_tag()
        )
        done, truncated = MPI.Status(), False
        while True:
            try:
                if request.Test(done):
                    break
            except MPI.Exception as error:
                if error.Get_error_class() != MPI.ERR_TRUNCATE:
                    raise
                truncated = True
                break
            nap(None, ctx.poll)
        reason = report_refusal(
            done.Get_count(MPI.BYTE),
            buffer,
            truncated=truncated,
            iteration=t,
            worker=worker,
            fields=RING,
        )
        if status.Get_tag() != protocol.REPORT:
            reason = f"tag {status.Get_tag()}, not a report's"
        if reason is not None:
            raise DecodingFailed(
                t,
                f"worker {worker}'s report refused ({reason}): a ring "
                f"({ctx.plan.config.scheme.name}) steps along every worker's",
            )
        return buffer

    def _receive(self, t: int, reports: dict[int, np.ndarray], status: MPI.Status) -> None:
        """Take the reports that arrived; with failures, stop once a worker is dead."""
        ctx, failures = self.ctx, self.failures
        for worker in range(ctx.plan.workers):
            if worker in reports:
                continue
            try:
                if probe(ctx.world, worker + 1, status):
                    reports[worker] = self._take(t, worker, status)
            except MPI.Exception as error:
                if failures is None:
                    raise
                failures.noticed(error, f"waiting for worker {worker}'s report")
        if failures is not None:
            failures.iteration = t
            failures.poll()
            if failures.failed:
                dead = [failures.failed[rank] for rank in sorted(failures.failed)]
                raise CannotContinue(
                    dead, t, f"a ring ({ctx.plan.config.scheme.name}) needs every worker"
                )

    def _run(self) -> dict[str, Any]:
        ctx, session = self.ctx, self.session
        n = ctx.plan.workers
        status = MPI.Status()
        for t in range(session.start, ctx.plan.config.iterations):
            reports: dict[int, np.ndarray] = {}
            while len(reports) < n:
                self._receive(t, reports, status)
                if len(reports) < n:
                    nap(None, ctx.poll)
            point = session.point()
            session.step(t, reports[0][R:].copy(), point)
            began = min(r[RING["began"]] for r in reports.values())
            reduced = max(r[RING["reduced"]] for r in reports.values())
            delays = self.delays.delays(t)
            record = {
                "iteration_time": reduced - began,
                "used": list(range(n)),
                "bytes_received": int(2 * (n - 1) * 8 * ctx.features / n) if n > 1 else 0,
                "messages": [self._describe(r, began) for _, r in sorted(reports.items())],
                "injected": {
                    "start": delays.start,
                    "compute": delays.compute,
                    "comm": delays.comm,
                    "persistent": [],
                },
            }
            session.finish_iteration(t, record)
        everyone = {r: r for r in range(1, n + 1)}
        # a worker that dies after the last iteration is dropped, not an error
        stop_all(ctx.world, ctx.world, everyone, lambda: True, ctx.poll, failures=self.failures)
        return {}

    @staticmethod
    def _describe(report: np.ndarray, began: float) -> dict[str, Any]:
        return {
            "key": int(report[RING["worker"]]),
            "worker": int(report[RING["worker"]]),
            "computed": report[RING["computed"]] - began,
            "arrival": report[RING["reduced"]] - began,
            "compute": report[RING["compute"]],
            "injected_compute": report[RING["injected_compute"]],
            "injected_comm": report[RING["injected_comm"]],
            "port_wait": report[RING["port_wait"]],
            "step_time": report[RING["step_time"]],
            "step_time_max": report[RING["step_time_max"]],
            "step_bytes": int(report[RING["step_bytes"]]),
        }
