"""Non-blocking point-to-point plumbing shared by the master, the workers and the tree nodes.

Facts about MPICH (the ``mpich`` wheel) this module is built around:

- large sends use the rendezvous protocol: a send completes only once the receiver posted a
  matching receive. A worker whose late result finds no posted receive would block forever, so
  a ``ResultPort`` keeps exactly one receive posted per source at all times and re-posts it as
  soon as it completes (stale or not);
- ``Waitany`` has no timeout and blocking calls busy-poll: with more ranks than cores a rank
  waiting inside MPI steals the CPU of the rank it waits for. Every wait here is a
  ``Test``/``Iprobe`` followed by a short ``time.sleep`` (``nap``);
- each call into MPICH's progress engine completes about one incoming message: 20 results
  arriving together took 20 polls (23 ms at a 1 ms poll) when each poll called ``Testsome``
  once, and 1.4 ms when it calls it until nothing more completes, as ``ResultPort.poll`` does.

With ``faults.tolerate`` (``gradcode.train.faults.failures``) a peer may die: a receive posted from
it, a send to it or a probe of it raises ``MPI_ERR_PROC_FAILED``. The port then tests its
receives one by one (a ``Testsome`` that fails part-way leaves mpi4py's request handles stale
and may swallow a result that completed beside the failure) and stops listening to the dead
source; an ``Outbox`` whose destination died drops what it holds and sends nothing more; a
``SendSet`` forgets sends to dead ranks. Each tells its ``Failures``, which learns from MPI
which ranks failed.

A sender may also be Byzantine (``gradcode.train.intake``): receives are posted as bytes, so a
length that is not a whole number of float64 never reaches MPICH's unpacking (it aborted the
receiver on such a message), a message longer than the posted buffer completes in error
(``MPI_ERR_TRUNCATE``, on its own or as ``MPI_ERR_IN_STATUS`` of a ``Testsome``), and each is
refused by the port's ``Intake`` where it is taken, with every other check of the layout, before
anything uses it.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

import numpy as np
from mpi4py import MPI

from gradcode.dilation import sleep
from gradcode.runfile.bandwidth import SinglePort
from gradcode.train import protocol
from gradcode.train.faults.failures import Failures
from gradcode.train.intake import Intake, Refusal
from gradcode.train.protocol import FIELD, H, clock


def nap(deadline: float | None, poll: float) -> None:
    """Sleep until ``deadline`` but at most ``poll`` seconds (``None``: ``poll``)."""
    wait = poll if deadline is None else min(poll, deadline - clock())
    if wait > 0:
        sleep(wait)


@dataclass
class Result:
    """A result message taken off the wire. ``data`` is a view into ``buffer``, valid until
    ``ResultPort.release``; times are on this rank's clock."""

    source: int
    iteration: int
    key: int
    header: np.ndarray
    data: np.ndarray
    buffer: np.ndarray
    nbytes: int
    arrived: float
    accepted: float
    #: when MPI reported the receive complete (just after the ``Testsome`` that completed
    #: it; ``arrived`` is the poll's ``now``, taken before): the end of a measured transfer
    completed: float = 0.0

    def field(self, name: str) -> float:
        return float(self.header[FIELD[name]])


class ResultPort:
    """Receives results from ``sources`` of ``comm``: one posted ``Irecv`` per source, always.

    ``poll(now)`` returns the results of the current iteration that the (emulated) single
    port has finished receiving; results of older iterations are counted in ``stale`` and
    their buffers reused at once, and those of a later one kept until ``start`` begins it.
    With an ``intake``, a result it refuses is never queued: ``take_refused`` hands the
    refusals to the owner.
    """

    def __init__(
        self,
        comm: MPI.Comm,
        sources: list[int],
        width: int,
        port: SinglePort,
        failures: Failures | None = None,
        intake: Intake | None = None,
    ) -> None:
        self.comm, self.sources, self.width, self.port = comm, list(sources), width, port
        self.intake = intake
        #: refusals not yet taken by the owner (``take_refused``)
        self.refused: list[Refusal] = []
        #: seconds spent in ``intake.check`` since the current iteration began
        self.intake_time = 0.0
        self.failures = failures if failures is not None and failures.enabled else None
        #: indices of sources that died (their receive completed in error): never re-posted
        self.lost: set[int] = set()
        self.iteration = -1
        self.stale = 0
        self.received = 0
        #: per source, the iteration and completion time (``clock``) of its first message,
        #: current or stale (when a spare first answered, ``gradcode.train.faults.spares``)
        self.first_heard: dict[int, tuple[int, float]] = {}
        self._pool: list[np.ndarray] = []
        self._buffers = [self._new_buffer() for _ in self.sources]
        self._requests = [self._post(i) for i in range(len(self.sources))]
        self._queue: deque[Result] = deque()
        #: results of iterations not begun yet, in arrival order (``start`` takes them)
        self._early: list[Result] = []
        self._statuses = [MPI.Status() for _ in self.sources]

    def _new_buffer(self) -> np.ndarray:
        return self._pool.pop() if self._pool else np.empty(H + self.width)

    def _post(self, index: int) -> MPI.Request:
        buffer = self._buffers[index]
        try:
            # as bytes: a sender's length need not be whole float64 (``intake``)
            return self.comm.Irecv(
                [buffer.view(np.uint8), MPI.BYTE], source=self.sources[index], tag=MPI.ANY_TAG
            )
        except MPI.Exception as error:
            self._lose(index, error, "posting a receive")
            return MPI.REQUEST_NULL

    def _lose(self, index: int, error: MPI.Exception, what: str) -> None:
        if self.failures is None:
            raise error
        self.failures.noticed(error, f"{what} from rank {self.sources[index]} of its channel")
        self.lost.add(index)

    def start(self, iteration: int, now: float) -> None:
        """Begin ``iteration``: results still queued for an older one are dropped, and those
        that came for it early (``_early``) are received now."""
        self.iteration = iteration
        self.intake_time = 0.0
        while self._queue:
            self.release(self._queue.popleft())
            self.stale += 1
        self.port.reset(now)
        early, self._early = self._early, []
        for result in early:
            if result.iteration > iteration:
                self._early.append(result)
            elif result.iteration < iteration:
                self.release(result)
                self.stale += 1
            else:
                self._receive(result, now)

    def poll(self, now: float) -> list[Result]:
        """Take completed receives; return the current iteration's results received by now."""
        if self.failures is not None:
            self._poll_each(now)
        else:
            self._poll_some(now)
        ready = []
        while self._queue and self._queue[0].accepted <= now:
            ready.append(self._queue.popleft())
        return ready

    def wait(self, until: float | None, poll: float) -> None:
        """Nap in steps of ``poll`` until a receive completes or ``until`` (``None``: until a
        receive completes), testing the posted receives and nothing else between naps.

        A master spends most of an iteration here once its sends are out, waking every
        ``poll`` on cores the workers share: one ``Testsome`` a wake instead of its whole loop
        (n = 20 on two cores: the master's loop cost 26 us of CPU a wake, 5.4 ms an
        iteration, of which ``Testsome`` itself is 2.3 us). With ``failures`` the port tests
        one receive at a time (``poll``), so this only naps once.
        """
        if self.failures is not None:
            nap(until, poll)
            return
        statuses = self._statuses
        while True:
            done = self._testsome()
            if done:
                now = clock()
                for j, index in enumerate(done):
                    self._take(index, statuses[j], now, now)
                return
            wait = poll if until is None else min(poll, until - clock())
            if wait <= 0:
                return
            sleep(wait)

    def _poll_some(self, now: float) -> None:
        # MPICH's progress engine completes about one incoming message per call: keep calling
        # while calls complete something (measured: 20 results took 20 sleeps, now one)
        for _ in range(4 * len(self._requests) + 1):
            done = self._testsome()
            if not done:
                break
            completed = clock()
            # statuses are compacted: statuses[j] describes requests[done[j]]
            for j, index in enumerate(done):
                self._take(index, self._statuses[j], now, completed)

    def _testsome(self) -> list[int]:
        """``Testsome`` over the posted receives: the indices completed (``statuses[j]``
        describes ``done[j]``). A receive that completed in error (a message longer than its
        buffer) makes MPICH return ``MPI_ERR_IN_STATUS`` without the indices; mpi4py has freed
        the completed requests by then, and MPICH fills the statuses in index order."""
        try:
            return list(MPI.Request.Testsome(self._requests, self._statuses) or [])
        except MPI.Exception as error:
            if error.Get_error_class() not in (MPI.ERR_IN_STATUS, MPI.ERR_TRUNCATE):
                raise
            return [i for i, r in enumerate(self._requests) if r == MPI.REQUEST_NULL]

    def _poll_each(self, now: float) -> None:
        """``_poll_some`` one request at a time, so a dead source's error names it."""
        progress = True
        while progress:
            progress = False
            for index, request in enumerate(self._requests):
                if index in self.lost:
                    continue
                try:
                    done = request.Test(self._statuses[index])
                except MPI.Exception as error:
                    self._requests[index] = MPI.REQUEST_NULL
                    if error.Get_error_class() == MPI.ERR_TRUNCATE:  # a liar, not a death
                        self._take(index, self._statuses[index], now, clock())
                        progress = True
                        continue
                    self._lose(index, error, "a receive")
                    continue
                if done:
                    self._take(index, self._statuses[index], now, clock())
                    progress = True

    def _take(self, index: int, status: MPI.Status, now: float, completed: float) -> None:
        buffer = self._buffers[index]
        nbytes = status.Get_count(MPI.BYTE)
        tag = status.Get_tag()
        if self.intake is not None:
            truncated = MPI.Get_error_class(status.Get_error()) == MPI.ERR_TRUNCATE
            status.Set_error(MPI.SUCCESS)  # statuses are reused: a success may not reset it
            checked = clock()
            refusal = self.intake.check(
                self.sources[index], tag, nbytes, buffer, self.iteration, truncated=truncated
            )
            self.intake_time += clock() - checked
            if refusal is not None:
                self.refused.append(refusal)
                self._requests[index] = self._post(index)  # the buffer is reused as it is
                return
        count = nbytes // 8
        iteration = int(buffer[0]) if count >= H else -1
        self.first_heard.setdefault(self.sources[index], (iteration, completed))
        current = protocol.tag_iteration_matches(tag, self.iteration) and (
            iteration == self.iteration
        )
        # a tree child that assembled a scattered model before its parent did may answer
        # before the parent began: its result waits for ``start``
        early = iteration > self.iteration and tag == protocol.result_tag(iteration)
        if not (current or early):
            self.stale += 1  # a late result of an earlier iteration: never used
        else:
            result = Result(
                source=self.sources[index],
                iteration=iteration,
                key=int(buffer[FIELD["key"]]),
                header=buffer[:H],
                data=buffer[H:count],
                buffer=buffer,
                nbytes=nbytes,
                arrived=now,
                accepted=now,
                completed=completed,
            )
            if current:
                self._receive(result, now)
            else:
                self._early.append(result)
            self._buffers[index] = self._new_buffer()
        # re-post at once: a sender in rendezvous must always find a receive
        self._requests[index] = self._post(index)

    def _receive(self, result: Result, now: float) -> None:
        """Queue a result of the current iteration, received through the port from ``now``."""
        self.received += 1
        # the port charges the message, not our header
        result.accepted = self.port.accept_time(now, result.nbytes - 8 * H)
        self._queue.append(result)

    def take_refused(self) -> list[Refusal]:
        """The refusals since the last call (``intake``), oldest first."""
        refused, self.refused = self.refused, []
        return refused

    def alive_sources(self) -> list[int]:
        """Sources whose receive is still posted (all but the dead)."""
        return [source for i, source in enumerate(self.sources) if i not in self.lost]

    def next_event(self) -> float | None:
        """When the next queued result will have been received (``None``: nothing queued)."""
        return self._queue[0].accepted if self._queue else None

    def release(self, result: Result) -> None:
        """Give ``result``'s buffer back (its ``data`` view becomes invalid)."""
        self._pool.append(result.buffer)

    def close(self) -> None:
        """Cancel the posted receives (every sender has finished)."""
        live = [r for i, r in enumerate(self._requests) if i not in self.lost]
        for request in live:
            request.Cancel()
        if self.failures is None:
            MPI.Request.Waitall(live)
            return
        for request in live:  # a source that died since the last poll completes in error
            try:
                request.Wait()
            except MPI.Exception as error:
                self.failures.noticed(error, "cancelling a receive")


#: what a tree parent tells the master about its children's messages, in its ``DONE`` report
#: after ``[stale, sent]``: how many it received, their bytes, and the sum and maximum of
#: their measured transfer times (sender's ``sent`` to ``completed`` on the parent), and how
#: many its ``Intake`` refused (``gradcode.train.intake``)
RELAY_FIELDS = ("messages", "bytes", "transfer_sum", "transfer_max", "refused")


@dataclass
class RelayStats:
    """A parent's running ``RELAY_FIELDS``."""

    messages: int = 0
    bytes: int = 0
    transfer_sum: float = 0.0
    transfer_max: float = 0.0
    refused: int = 0

    def add(self, result: Result) -> None:
        transfer = result.completed - result.field("sent")
        self.messages += 1
        self.bytes += result.nbytes
        self.transfer_sum += transfer
        self.transfer_max = max(self.transfer_max, transfer)

    def values(self) -> list[float]:
        return [
            float(self.messages),
            float(self.bytes),
            self.transfer_sum,
            self.transfer_max,
            float(self.refused),
        ]


@dataclass
class _Queued:
    departure: float
    buffer: np.ndarray
    tag: int
    iteration: int


@dataclass
class Outbox:
    """Sends to one destination through an emulated link: messages leave in order, each
    ``link_seconds`` after the previous one left (or after it was ready, if later)."""

    comm: MPI.Comm
    dest: int
    link_free: float = 0.0
    sent: int = 0
    #: of ``sent``, header-only sends (``runtime.collection`` pull's notices)
    notices: int = 0
    failures: Failures | None = None
    #: the destination died: everything queued was dropped and nothing more is sent
    dead: bool = False
    _queue: deque[_Queued] = field(default_factory=deque)
    _pending: list[tuple[MPI.Request, np.ndarray]] = field(default_factory=list)

    def schedule(
        self, buffer: np.ndarray, tag: int, iteration: int, ready: float, link_seconds: float
    ) -> float:
        """Queue ``buffer`` to leave at ``max(ready, link free) + link_seconds``; returns that."""
        if self.dead:
            return ready
        departure = max(ready, self.link_free) + link_seconds
        self.link_free = departure
        self._queue.append(_Queued(departure, buffer, tag, iteration))
        return departure

    def pump(self, now: float) -> None:
        """Send what is due; forget sends that completed."""
        try:
            while self._queue and self._queue[0].departure <= now:
                item = self._queue.popleft()
                item.buffer[FIELD["sent"]] = clock()
                request = self.comm.Isend([item.buffer, MPI.DOUBLE], dest=self.dest, tag=item.tag)
                self._pending.append((request, item.buffer))
                self.sent += 1
                self.notices += int(item.buffer.size == H)
            if self._pending:
                self._pending = [(r, b) for r, b in self._pending if not r.Test()]
        except MPI.Exception as error:
            if self.failures is None or not self.failures.enabled:
                raise
            self.failures.noticed(error, f"a send to rank {self.dest} of its channel")
            self.dead = True
            self._queue.clear()
            self._pending = []

    def drop_before(self, iteration: int, now: float) -> None:
        """Skip queued messages of iterations before ``iteration`` (stale work is not sent)."""
        if not self._queue:
            return
        kept = deque(item for item in self._queue if item.iteration >= iteration)
        if len(kept) != len(self._queue):
            self._queue = kept
            self.link_free = min(self.link_free, now) if not kept else self.link_free

    def next_event(self) -> float | None:
        return self._queue[0].departure if self._queue else None

    def in_flight(self) -> bool:
        """Whether sends have started but not completed."""
        return bool(self._pending)

    def idle(self) -> bool:
        """Nothing queued and every send completed."""
        return not self._queue and not self._pending


class SendSet:
    """Fire-and-forget ``Isend``s whose buffers must live until they complete (models).

    With ``failures``, a send to a rank that died is forgotten (and reported to it)."""

    def __init__(self, failures: Failures | None = None) -> None:
        self._pending: list[tuple[MPI.Request, np.ndarray]] = []
        self.failures = failures if failures is not None and failures.enabled else None

    def send(self, comm: MPI.Comm, buffer: np.ndarray, dest: int, tag: int) -> None:
        try:
            request = comm.Isend([buffer, MPI.DOUBLE], dest=dest, tag=tag)
        except MPI.Exception as error:
            if self.failures is None:
                raise
            self.failures.noticed(error, f"a send to rank {dest} of its channel")
            return
        self._pending.append((request, buffer))

    def pump(self) -> None:
        if not self._pending:
            return
        if self.failures is None:
            # a ``Test`` per send, not one ``Testall``: each call drives MPICH's progress,
            # which sends in flight need (scattered pieces on the emulated cluster)
            self._pending = [(r, b) for r, b in self._pending if not r.Test()]
            return
        kept = []
        for request, buffer in self._pending:
            try:
                if not request.Test():
                    kept.append((request, buffer))
            except MPI.Exception as error:
                self.failures.noticed(error, "a send")
        self._pending = kept

    def pending(self) -> int:
        return len(self._pending)

    def idle(self) -> bool:
        self.pump()
        return not self._pending


def probe(comm: MPI.Comm, source: int, status: MPI.Status) -> bool:
    """``Iprobe`` for any tag from ``source``; fills ``status``.

    Twice when the first finds nothing: MPICH's ``Iprobe`` looks for the message before it
    drives the progress engine that brings it in, so a message that arrived during a nap is
    seen only by the second call. Measured (``mpich`` wheel, 5 ranks, 16 bytes, naps of
    0.5 ms): one call a nap, 0.89 ms from send to seen (median); two, 0.33 ms.
    """
    return bool(
        comm.Iprobe(source=source, tag=MPI.ANY_TAG, status=status)
        or comm.Iprobe(source=source, tag=MPI.ANY_TAG, status=status)
    )


def receive_vector(comm: MPI.Comm, status: MPI.Status, poll: float = 1e-4) -> np.ndarray:
    """Receive the probed float64 message described by ``status`` (sleep-polling: a large
    message may need the sender's progress, and a blocking ``Recv`` would spin meanwhile)."""
    buffer = np.empty(status.Get_count(MPI.DOUBLE))
    request = comm.Irecv([buffer, MPI.DOUBLE], source=status.Get_source(), tag=status.Get_tag())
    wait(request, poll)
    return buffer


def quiet_barrier(comm: MPI.Comm, poll: float) -> None:
    """A barrier that sleeps instead of spinning (ranks waiting for rank 0 to load data)."""
    wait(comm.Ibarrier(), poll)


def wait(request: MPI.Request, poll: float) -> None:
    """Complete ``request`` without busy-polling inside MPI."""
    while not request.Test():
        sleep(poll)
