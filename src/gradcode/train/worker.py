"""A worker rank: receive models, compute partial gradients, send coded messages.

The same loop runs every worker of a flat scheme and every node of a tree code (CodedReduce):

- a model for iteration ``t`` arrives from the parent (the master, or the node's tree parent);
  a tree node forwards it to its children at once (with ``scatter`` its pieces come from every
  node instead, and nothing follows the tree down). A newer model makes the current work stale:
  it is abandoned (with ``scatter``, as soon as the newer model's first piece comes), and
  messages queued but not yet sent are dropped;
- the worker computes its partitions one at a time (``partitions(worker)`` order), sleeping the
  injected compute delay after each; between two partitions it looks for a newer model, so
  stale work stops within one partition;
- a flat worker sends every message key as soon as its prefix of partials is done (one message
  for single-message codes, several for GC-MMC); a tree node sends ``encode_node`` once its own
  partials are done and the messages of its children in hand satisfy its rule
  (``children_decodable``; CodedReduce: ``n - s`` children, fewer when its per-parent code
  allows);
- messages leave through an emulated link (``Outbox``), adversaries corrupt theirs, persistent
  stragglers never compute; under ``runtime.collection`` pull a worker (tree node) sends only
  the message's header (the notice) and holds the message until the master (its parent) asks
  for it (``protocol.PULL``; ``gradcode.runfile.collection``); a tree parent asks its children
  for theirs as its rule still needs them (``collector_puller``).

A tree parent keeps ``RelayStats`` of its children's messages (count, bytes, measured transfer
times) and appends them to its ``DONE`` report; the master puts them in ``summary.json``
(``relay_transfers``). Every tree node also keeps its row of every iteration it began
(``gradcode.runlogs.nodelog``: its own work, complete or cut short, and its message's injected
link delay) and appends them too; the master writes them as ``nodes.jsonl``.

Shutdown: on ``STOP`` from the master the worker stops computing, lets its pending sends
complete (receivers keep draining) and answers ``DONE``; it keeps draining its own receives
until ``FINISH``, so no sender anywhere is left blocked in rendezvous.

Failures (``faults.tolerate``, ``gradcode.train.faults.failures``): a dead child's messages never
come, and the node waits for the others as for any straggler (its rule decides whether it can
still send); when the parent dies, the node's outbox drops its messages, no model comes any
more, and the node waits for ``STOP``, which the master then sends it on ``world``. Workers in
``faults.silent`` stop answering from their iteration on, like persistent stragglers.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import cast

import numpy as np
from mpi4py import MPI

from gradcode import dilation
from gradcode.attacks import attack_rng
from gradcode.fidelity import work
from gradcode.runfile.plan import collection_choice
from gradcode.runfile.stragglers import DrawnAhead
from gradcode.runlogs.nodelog import NodeLog
from gradcode.train import protocol
from gradcode.train.distribution import ModelAssembler, distribution_choice, scatter_pieces
from gradcode.train.intake import Intake, Sender
from gradcode.train.protocol import FIELD, H, clock
from gradcode.train.pulling import Pulling, collector_puller
from gradcode.train.reducers.parent import TreeReduction
from gradcode.train.runtime import Links, RankContext
from gradcode.train.transport import (
    Outbox,
    RelayStats,
    Result,
    ResultPort,
    SendSet,
    nap,
    probe,
    receive_vector,
)

#: seconds between looks for a newer model while sleeping through an injected delay
STALE_CHECK = 0.005


@dataclass
class _Job:
    """The work of one iteration on one worker."""

    iteration: int
    model_buffer: np.ndarray  # [t, point...]; also what a tree node forwards
    start: float
    compute_delay: float
    comm_delay: float
    wake: float  # when the next partition may start (after injected delays)
    next_partition: int = 0
    measured: float = 0.0
    injected: float = 0.0
    own_ready: float = 0.0
    #: scatter: the chunk that completed the model, and how long the others had waited for it
    model_last: int = -1
    model_wait: float = 0.0
    model_span: float = 0.0
    children: dict[int, Result] = field(default_factory=dict)
    sent_up: bool = False
    #: ``pull``: messages ready and announced, by key index, until the master asks for them
    held: dict[int, np.ndarray] = field(default_factory=dict)

    @property
    def point(self) -> np.ndarray:
        return self.model_buffer[1:]


class Worker:
    """The loop of one worker rank (see the module docstring)."""

    def __init__(self, ctx: RankContext, links: Links) -> None:
        self.ctx, self.links = ctx, links
        plan = ctx.plan
        self.code = plan.code
        assert self.code is not None
        self.worker = ctx.worker
        self.parts = plan.partitions_of(self.worker)
        self.features = ctx.features
        #: this node's tree, where results go up one (its messages are ``encode_node``'s)
        self.tree = plan.topology.tree(self.code)
        #: a parent's wait for its children and reduction of them, as the root's
        self.reduction = TreeReduction(self.tree, self.worker) if self.tree is not None else None
        self.coded = plan.coded_data  # LCC: the message is the gradient on the coded data
        self.keys: tuple = tuple(self.code.message_keys(self.worker))
        every = self.code.all_message_keys()
        self.key_index = {key: every.index(key) for key in self.keys}
        self.width = self.code.message_length(self.features)
        self.prefix = {key: self._prefix(key) for key in self.keys}
        self.partials = np.empty((len(self.parts), self.features))
        self.persistent = self.worker in plan.config.stragglers.persistent
        faults = plan.config.faults
        self.silent_from = faults.silent_from(self.worker) if faults is not None else None
        self.failures = ctx.failures if ctx.tolerant else None
        #: the parent died: nothing more comes from it, nothing more goes to it
        self.orphan = False
        #: who lies when (``adversaries``); an omniscient attack's messages leave honest and
        #: the master forges them from the honest ones it holds
        #: (``gradcode.train.reducers.forgery``)
        self.attacks = plan.config.adversaries.plan()
        # a spare in a worker's place is another process: the liar was the one it replaces
        liar = self.worker in self.attacks.workers and ctx.replaces is None
        self.attack = self.attacks.attack() if liar else None
        self.delays = DrawnAhead(plan.delay_source())
        self.outbox = Outbox(links.up_comm, links.up_rank, failures=self.failures)
        self.forwards = SendSet(self.failures)
        self.port: ResultPort | None = None
        self.relay = RelayStats()
        self.nodelog = NodeLog(self.worker) if self.tree is not None else None
        scatter = distribution_choice(ctx).way == "scatter"
        pieces = scatter_pieces(ctx.features, plan.workers)
        self.assembler = ModelAssembler(ctx.features, plan.workers, pieces) if scatter else None
        self.pull = collection_choice(plan).way == "pull"
        self.puller: Pulling | None = None
        if links.children:
            sources = list(range(1, len(links.children) + 1))
            # a child's message is checked once, where it is read (``gradcode.train.intake``)
            intake = Intake(self.width, self._child, notices=self.pull)
            self.port = ResultPort(
                links.down_comm, sources, self.width, ctx.port(), self.failures, intake=intake
            )
            if self.pull:
                self.puller = collector_puller(self.code, self.worker)
        self.job: _Job | None = None
        self._told: set[int | None] = set()  # children refused and told of
        self._status = MPI.Status()
        #: a tree's scattered pieces come on a communicator of their own, from any node
        self._pieces = links.pieces if scatter and links.pieces is not links.up_comm else None
        #: where models come from: the parent, or with a flat scatter any worker too (pieces)
        flat_pieces = self.assembler is not None and self._pieces is None
        self._model_source = MPI.ANY_SOURCE if flat_pieces else links.up_rank
        self.latest = -1
        self.stopping = False
        self.done_sent: MPI.Request | None = None
        self.finished = False

    def _child(self, source: int) -> Sender:
        node = self.links.children[source - 1]
        return Sender(node, frozenset([node]))

    def _refusals(self) -> None:
        """Children's messages the intake refused: never used (the node waits for its other
        children as for a straggler), counted in the ``DONE`` report (``RELAY_FIELDS``) and
        told on stderr the first time for each child."""
        assert self.port is not None
        for refusal in self.port.take_refused():
            self.relay.refused += 1
            if refusal.worker not in self._told:
                self._told.add(refusal.worker)
                print(
                    f"gradcode.train: node {self.worker} refused a message of its child "
                    f"{refusal.worker} (iteration {refusal.iteration}): {refusal.reason}",
                    file=sys.stderr,
                    flush=True,
                )

    def _prefix(self, key) -> int:
        if self.tree is not None or self.coded:
            return len(self.parts)
        return int(self.code.message_prefix(key))

    # -- the loop ---------------------------------------------------------------------------
    def run(self) -> None:
        poll = self.ctx.poll
        while not self.finished:
            self._inbox()
            if self.finished:
                break
            now = clock()
            if self.port is not None:
                results = self.port.poll(now)
                self._refusals()
                for result in results:
                    job = self.job
                    current = (
                        job is not None and result.iteration == job.iteration and not job.sent_up
                    )
                    if self.puller is not None and result.data.size == 0:
                        self._notice(result, current)
                        continue
                    self.relay.add(result)
                    if current:
                        cast(_Job, job).children[result.source] = result
                    else:
                        self.port.release(result)
            if self.job is not None and not self.stopping:
                self._advance(clock())
            now = clock()
            self.outbox.pump(now)
            self.forwards.pump()
            if self.stopping and self.done_sent is None and self.outbox.idle():
                if self.forwards.idle():
                    self._send_done()
            interval = poll if self._listening() else STALE_CHECK
            self._draw_ahead()
            if self._quiet(clock()):
                self._await(self._next_event(), interval)
            else:
                nap(self._next_event(), interval)
        if self.port is not None:
            self.port.close()
        if self.done_sent is not None:
            self.done_sent.Wait()

    def _quiet(self, now: float) -> bool:
        """Whether nothing but a message or a timer can give this worker something to do: no
        runnable work, send in flight, child or piece of a model pending. Most of an
        iteration is spent so: sleeping through an injected delay, or waiting for the next
        model once the result is out."""
        # a tree node sends up from the loop itself (``_try_send_up``), not at a timer
        if self.stopping or self.tree is not None or self.failures is not None:
            return False
        if self.assembler is not None and self.assembler.assembling:
            return False
        if self.outbox.in_flight() or self.forwards.pending():
            return False
        job = self.job
        return job is None or job.next_partition == len(self.parts) or job.wake > now

    def _draw_ahead(self) -> None:
        """Once this iteration's messages are out (delivered, none held for a pull, nothing of
        a next model arriving: a large send needs this rank's progress), draw the next
        iteration's delays while waiting for its model (``DrawnAhead``)."""
        job, outbox = self.job, self.outbox
        if job is None or self.stopping or job.held or not outbox.idle():
            return
        if self.assembler is not None and self.assembler.assembling:
            return
        if job.sent_up if self.tree is not None else job.next_partition == len(self.parts):
            self.delays.draw(self.latest + 1)

    def _await(self, deadline: float | None, interval: float) -> None:
        """Nap in steps of ``interval`` until ``deadline`` or until the parent (with scatter,
        any worker) or the master has a message, looking for nothing else.

        On shared cores every idle worker's turns are taken from the ranks that have work;
        without this a worker ran its whole loop every ``STALE_CHECK`` through its delay
        (``benchmarks/fixed_cost.py``, n = 20 on two cores: a worker's CPU per iteration
        1.3-1.9 ms with it, 1.6-2.7 ms without).
        """
        # a wake is the whole cost of waiting: the calls are bound once, as in ``probe``
        # (twice each) but without its call (n = 20 on two cores: 24 us of CPU a wake, 106
        # wakes an iteration, against the bare loop's 17)
        up = None if self.orphan else self.links.up_comm.Iprobe
        pieces = None if self._pieces is None else self._pieces.Iprobe
        control, status, source = self.links.world.Iprobe, self._status, self._model_source
        anyone, any_tag, sleep = MPI.ANY_SOURCE, MPI.ANY_TAG, dilation.sleep
        while True:
            if up is not None and (up(source, any_tag, status) or up(source, any_tag, status)):
                return
            if pieces is not None and (
                pieces(anyone, any_tag, status) or pieces(anyone, any_tag, status)
            ):
                return
            if control(0, any_tag):
                return
            wait = interval if deadline is None else min(interval, deadline - clock())
            if wait <= 0:
                return
            sleep(wait)

    def _listening(self) -> bool:
        """Whether a message could change what happens next (else only timers matter).

        A worker sleeping through an injected delay only needs to notice a newer model, which
        may wait ``STALE_CHECK``; polling every ``poll`` seconds on all ranks would itself eat
        the oversubscribed cores. Once its work is out (or while sends are in flight, whose
        progress needs MPI calls) it listens closely again.
        """
        job = self.job
        if job is None or self.stopping or self.outbox.in_flight():
            return True
        if self.forwards.pending() or (self.assembler is not None and self.assembler.assembling):
            return True  # chunks of the next model are on their way: pass them on promptly
        if job.next_partition < len(self.parts):
            return False  # computing or sleeping through an injected delay
        if self.tree is not None and not job.sent_up:
            return bool(self.links.children)  # an inner node waits for its children
        return self.outbox.next_event() is None  # nothing queued: waiting for the next model

    def _next_event(self) -> float | None:
        events = [self.outbox.next_event()]
        job = self.job
        if job is not None and not self.stopping and job.next_partition < len(self.parts):
            events.append(job.wake)
        if self.port is not None:
            events.append(self.port.next_event())
        known = [e for e in events if e is not None]
        return min(known) if known else None

    def _inbox(self) -> None:
        """Take every message from the parent and the master; keep only the newest model."""
        links, status, source = self.links, self._status, self._model_source
        newest: np.ndarray | None = None
        try:
            while not self.orphan and probe(links.up_comm, source, status):
                vector = receive_vector(links.up_comm, status)
                if status.Get_tag() == protocol.MODEL:
                    newest = vector
                elif status.Get_tag() == protocol.MODEL_CHUNK:
                    model = self._chunk(vector)
                    if model is not None:
                        newest = model
                elif status.Get_tag() == protocol.PULL:
                    self._pulled(int(vector[0]), int(vector[1]))
                elif status.Get_tag() == protocol.STOP:
                    self._stop()
        except MPI.Exception as error:
            if self.failures is None:
                raise
            self.failures.noticed(error, "listening to the parent", links.up_comm)
            # listening to any source (a flat scatter's pieces), the dead one may be a peer
            if source != MPI.ANY_SOURCE or self.failures.dead(0):
                self._orphaned()
        pieces = self._pieces
        if pieces is not None:
            while probe(pieces, MPI.ANY_SOURCE, status):
                model = self._chunk(receive_vector(pieces, status))
                if model is not None:
                    newest = model
        if self.outbox.dead and not self.orphan:
            self._orphaned()
        while probe(links.world, 0, status):
            receive_vector(links.world, status)
            if status.Get_tag() == protocol.FINISH:
                self.finished = True
            elif status.Get_tag() == protocol.STOP and not self.stopping:
                self._stop()  # the master's, when the parent that would pass it on died
        if newest is not None and not self.stopping and int(newest[0]) > self.latest:
            self._begin(newest)
        elif self.assembler is not None and self.assembler.iteration > self.latest:
            self._abandon(clock())

    def _abandon(self, now: float) -> None:
        """Pieces of a newer model are coming (``scatter``): the master has decoded the
        current iteration, so its remaining work is stale. Stop it now rather than when the
        whole model is in: on shared cores, stale partitions slow the forwarding of the new
        model (measured on the emulated cluster, Ye-Abbe (14, 14, 13, 1): every worker but one
        still computing when the next model's pieces came)."""
        assert self.assembler is not None
        coming = self.assembler.iteration
        if self.job is None or self.job.iteration >= coming:
            return
        self.outbox.drop_before(coming, now)
        self._drop_job(now)

    def _drop_job(self, now: float) -> None:
        """End the current job (a newer model came): a tree node logs its row and gives its
        children's results back to the port."""
        if self.job is not None and self.port is not None:
            for result in self.job.children.values():
                self.port.release(result)
        self._log_node(now)
        self.job = None

    def _chunk(self, chunk: np.ndarray) -> np.ndarray | None:
        """A piece of a model (``scatter``): pass a piece of our own chunk on to every other
        worker unless the master covers it; the whole model once this was its last missing
        piece."""
        assert self.assembler is not None
        iteration, index, forward = int(chunk[0]), int(chunk[1]), chunk[2] == 1.0
        mine = index % self.ctx.plan.workers == self.worker
        if forward and mine and iteration > self.latest and not self.stopping:
            for peer in range(self.ctx.plan.workers):
                if peer != self.worker and self._alive(peer + 1):
                    self.forwards.send(self.links.pieces, chunk, peer + 1, protocol.MODEL_CHUNK)
        return self.assembler.take(chunk, self.latest, clock())

    def _notice(self, result: Result, current: bool) -> None:
        """``pull``, at a tree parent: a child announced its message; ask for it if this
        node's rule still needs it (``collector_puller``)."""
        assert self.port is not None and self.puller is not None
        if current and self.puller.wants(self.links.children[result.source - 1]):
            request = np.array([float(result.iteration), result.field("key")])
            self.forwards.send(self.links.down_comm, request, result.source, protocol.PULL)
        self.port.release(result)

    def _pulled(self, iteration: int, key: int) -> None:
        """The master asks for message ``key`` of ``iteration`` (``pull``): send it now, unless
        a newer model made it stale (the master has moved on, and discards it)."""
        job = self.job
        if job is None or job.iteration != iteration or self.stopping:
            return
        buffer = job.held.pop(key, None)
        if buffer is not None:
            tag = protocol.result_tag(iteration)
            self.outbox.schedule(buffer, tag, iteration, ready=clock(), link_seconds=0.0)

    def _alive(self, rank: int) -> bool:
        return self.failures is None or not self.failures.dead(rank)

    def _orphaned(self) -> None:
        """The parent died: drop the work (no one to send it to) and wait for ``STOP``."""
        self.orphan = True
        self.job = None
        self.outbox.dead = True
        self.outbox.drop_before(1 << 62, clock())

    def _stop(self) -> None:
        """``STOP`` came after the last model: drop the work, pass ``STOP`` on to children."""
        self.stopping = True
        self._log_node(clock())
        self.job = None
        self.outbox.drop_before(1 << 62, clock())
        for child_rank in range(1, len(self.links.children) + 1):
            self.forwards.send(self.links.down_comm, np.empty(0), child_rank, protocol.STOP)

    def _begin(self, model: np.ndarray) -> None:
        """Start iteration ``model[0]``: abandon stale work, forward the model (a tree node
        under ``isend``)."""
        iteration = int(model[0])
        self.latest = iteration
        now = clock()
        self.outbox.drop_before(iteration, now)
        self._drop_job(now)
        if self.persistent or (self.silent_from is not None and iteration >= self.silent_from):
            return  # never answers (and, in a tree, takes its subtree down with it)
        if self.port is not None:
            self.port.start(iteration, now)
            if self.puller is not None:
                self.puller.start()
            if self.assembler is None:  # scattered, the children have their own pieces
                for child_rank in range(1, len(self.links.children) + 1):
                    self.forwards.send(self.links.down_comm, model, child_rank, protocol.MODEL)
        start, compute, comm = self.delays.delays(iteration).of(self.worker)
        self.job = _Job(
            iteration=iteration,
            model_buffer=model,
            start=now,
            compute_delay=compute,
            comm_delay=comm,
            wake=now + start,
            injected=start,
        )
        if self.assembler is not None:
            job = self.job
            job.model_last, job.model_wait = self.assembler.last, self.assembler.wait
            job.model_span = self.assembler.span

    # -- work -------------------------------------------------------------------------------
    def _advance(self, now: float) -> None:
        job = self.job
        assert job is not None
        if job.next_partition < len(self.parts):
            if now >= job.wake:
                self._compute_next(job)
            return
        if self.tree is not None and not job.sent_up:
            self._try_send_up(job, now)

    def _log_node(self, now: float) -> None:
        """A tree node's row of ``nodes.jsonl`` for its job, which a newer model or ``STOP``
        ends at ``now``: complete when its own partials were done by then, else censored."""
        job = self.job
        if self.nodelog is None or job is None:
            return
        done = job.next_partition == len(self.parts) and now >= job.own_ready
        self.nodelog.add(
            job.iteration,
            complete=done,
            work=job.measured + job.injected,
            elapsed=(job.own_ready if done else now) - job.start,
            budget=now - job.start,
            injected_comm=job.comm_delay * self.width / self.features,
            width=self.width,
        )

    def _compute_next(self, job: _Job) -> None:
        """Compute one partition, then queue every message whose prefix it completes."""
        index = job.next_partition
        began = clock()
        real = work.begin()
        X, y = self.ctx.parts[self.parts[index]]
        self.partials[index] = self.ctx.model.partial_gradient(X, y, job.point)
        job.next_partition = index + 1
        outgoing = []
        if self.tree is None:
            for key in self.keys:
                if self.prefix[key] == job.next_partition:
                    if self.coded:
                        message = self.partials[0].copy()
                    else:
                        done = self.partials[: job.next_partition]
                        message = self.code.encode_message(key, done)
                    outgoing.append((key, message))
        finished = clock()
        work.end(real)
        job.measured += finished - began
        job.injected += job.compute_delay
        job.wake = finished + job.compute_delay
        job.own_ready = job.wake
        for key, message in outgoing:
            self._queue(job, self.key_index[key], message, ready=job.wake)

    def _try_send_up(self, job: _Job, now: float) -> None:
        """Tree node: send once its own partial is done and its children are decodable."""
        reduction = self.reduction
        assert reduction is not None  # only a tree's nodes send up from the loop
        if now < job.own_ready:
            return
        kids = self.links.children
        if kids and not reduction.ready([kids[s - 1] for s in job.children]):
            return
        began = clock()
        real = work.begin()
        messages = {kids[source - 1]: r.data for source, r in job.children.items()}
        message = reduction.encode(self.partials, messages if kids else None)
        work.end(real)
        job.measured += clock() - began
        for result in job.children.values():
            assert self.port is not None
            self.port.release(result)
        job.children = {}
        job.sent_up = True
        self._queue(job, self.worker, message, ready=clock())

    def _queue(self, job: _Job, key: int, message: np.ndarray, ready: float) -> None:
        buffer = np.empty(H + message.size)
        buffer[H:] = message
        lies = self.attack is not None and self.attacks.active(job.iteration)
        if lies and not self.attack.omniscient:  # type: ignore[union-attr]
            self._corrupt(job.iteration, key, buffer[H:])
        buffer[FIELD["corrupted"]] = 1.0 if lies else 0.0
        link = job.comm_delay * message.size / self.features
        buffer[FIELD["iteration"]] = job.iteration
        buffer[FIELD["key"]] = key
        buffer[FIELD["worker"]] = self.worker
        buffer[FIELD["compute"]] = job.measured
        buffer[FIELD["injected_compute"]] = job.injected
        buffer[FIELD["injected_comm"]] = link
        buffer[FIELD["started"]] = job.start
        buffer[FIELD["model_last"]] = job.model_last
        buffer[FIELD["model_wait"]] = job.model_wait
        buffer[FIELD["model_span"]] = job.model_span
        tag = protocol.result_tag(job.iteration)
        if self.pull:
            # the notice leaves when the message would have: the injected link delay stays
            job.held[key] = buffer
            self.outbox.schedule(buffer[:H].copy(), tag, job.iteration, ready, link)
            return
        self.outbox.schedule(buffer, tag, job.iteration, ready, link)

    def _corrupt(self, iteration: int, key: int, payload: np.ndarray) -> None:
        """The attack's forgery of ``payload``, in place (seeded per message: noise draws what
        it drew before attacks were plug-ins)."""
        assert self.attack is not None
        rng = attack_rng(self.ctx.plan.config.seed, iteration, key)
        payload[:] = self.attack.forge(payload, np.empty((0, payload.size)), rng)

    def _send_done(self) -> None:
        stale = float(self.port.stale) if self.port is not None else 0.0
        nodes = self.nodelog.encode() if self.nodelog is not None else np.empty(0)
        sent = float(self.outbox.sent - self.outbox.notices)  # messages, not pull's notices
        report = np.concatenate([[stale, sent, *self.relay.values()], nodes])
        self._done_buffer = report
        self.done_sent = self.links.world.Isend([report, MPI.DOUBLE], dest=0, tag=protocol.DONE)
