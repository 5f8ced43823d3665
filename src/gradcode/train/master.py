"""The master (rank 0) of a master-worker scheme or of a tree code (CodedReduce).

Iteration ``t``: send ``[t, point]`` to every child (the workers; in a tree the layer-1 nodes,
which forward it down), then take results as they arrive and reduce *as soon as the results
in hand suffice*: after every new result the reducer is asked (``Reducer.decodable``: the
code's own rule, ``is_decodable``, or a tree root's ``children_decodable`` about its
children), so FRC stops at one result per group, binary at the first complete class, GC-MMC at
the first decodable set of partial messages, and threshold codes at ``n - s``. Results of
other iterations are recognised by tag and header and discarded (``ResultPort``); every worker
always has a receive posted.

The reduction is one object chosen once from the plan (``gradcode.train.reducers``): the
code's decoder, a tree's reduction, or a robust aggregator, each with what it logs; an
omniscient attack is emulated there (``gradcode.train.reducers.forgery``). The master hands it
what arrived and takes the update or the reason there is none. The record it writes per
iteration is described in ``gradcode.train.record``; under ``runtime.collection: pull`` its
notices and pulls are ``gradcode.train.pulling``'s; who serves each child and who is lost,
``gradcode.train.faults.roster``'s.

Refused messages (``gradcode.train.intake``): every result is checked once where the port
reads it; a refused one is never used, and its key is corrected (a zero message in its place
that the decoder corrects, within ``a``), kept out of the aggregation, or erased, by the
reducer's rules; ``DecodingFailed`` when it cannot do without it
(``gradcode.train.refusals``).

Failures (``faults.tolerate``): a dead worker's receive completes in error and the port stops
listening to it; the master also asks MPI which ranks failed at every iteration's start and
every ``FAILURE_POLL`` seconds while it waits (so it learns of a dead tree node it never talks
to), sends no more models to dead children, and checks that the code still decodes without
every worker lost so far (failed, persistent and silent ones): if not, ``CannotContinue``
ends the iterations, and the run stops after its shutdown (``gradcode.train.run``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gradcode.codes import NotDecodableError
from gradcode.codes.tree import MASTER
from gradcode.runfile.plan import collection_choice
from gradcode.train import protocol, record
from gradcode.train.distribution import (
    ChunkSplitter,
    Covering,
    distribution_choice,
    scatter_pieces,
)
from gradcode.train.faults.caught import DecodingFailed
from gradcode.train.faults.failures import CannotContinue
from gradcode.train.faults.roster import Roster
from gradcode.train.intake import Intake, Refusal
from gradcode.train.protocol import clock
from gradcode.train.pulling import Pulls, collector_puller
from gradcode.train.reducers.choice import reducer_for
from gradcode.train.runtime import Links, RankContext
from gradcode.train.session import Session
from gradcode.train.shutdown import stop_all
from gradcode.train.transport import Result, ResultPort, SendSet, nap

#: seconds between the master's questions to MPI about failed ranks while it waits
FAILURE_POLL = 0.02


class IterationTimeout(RuntimeError):
    """The results in hand never became decodable within ``runtime.iteration_timeout``."""


class Master:
    def __init__(
        self,
        ctx: RankContext,
        links: Links,
        session: Session,
        share: Callable[[int], dict[int, Any]] | None = None,
    ) -> None:
        self.ctx, self.links, self.session = ctx, links, session
        code = ctx.plan.code
        assert code is not None and links.down_comm is not None
        self.code = code
        width = code.message_length(ctx.features)
        # a spare's results come on its own channel (flat: ``down_comm`` ranks are world's)
        sources = list(range(1, len(links.children) + 1 + ctx.plan.spares))
        self.roster = Roster(ctx, links, share)
        self.failures, self.spares = self.roster.failures, self.roster.spares
        self.caught = self.roster.caught
        #: the one reduction of every iteration, chosen from the plan
        self.reducer = reducer_for(ctx, links, self.roster)
        self.refused = self.reducer.refused
        self.collection = collection_choice(ctx.plan)
        pull = self.collection.way == "pull"
        # every message is checked once, where it is read (``gradcode.train.intake``)
        intake = Intake(width, self.reducer.sender, notices=pull, ahead=0)  # none comes early
        self.port = ResultPort(
            links.down_comm, sources, width, ctx.port(), self.failures, intake=intake
        )
        self.sends = SendSet(self.failures)
        self.stopped: CannotContinue | DecodingFailed | None = None
        self._polled = 0.0
        self._checked = 0  # failures already checked against the code
        self._collecting = False  # between an iteration's model going out and its decoding
        self._covered_late: list[int] = []  # ``scatter``: chunks covered after a death
        self._model: np.ndarray | None = None  # the current iteration's (a new spare gets it)
        self.delays = ctx.plan.delay_source()
        self._drops_checked = 0  # drops already checked against the code
        self.one_clock = ctx.one_clock  # a sender's clock is comparable with ours
        self.distribution = distribution_choice(ctx)
        scatter = self.distribution.way == "scatter"
        pieces = scatter_pieces(ctx.features, ctx.plan.workers)
        self.splitter = ChunkSplitter(ctx.features, ctx.plan.workers, pieces) if scatter else None
        self.covering = Covering.of(ctx.plan.config, ctx.plan.workers) if scatter else None
        # a tree's root pulls by its own rule over its children
        self.pulls = Pulls(collector_puller(code, MASTER), self._pull) if pull else None
        self._began = 0.0  # when this iteration's model went out

    def run(self) -> dict[str, Any]:
        config = self.ctx.plan.config
        try:
            for t in range(self.session.start, config.iterations):
                self._iteration(t)
        except (CannotContinue, DecodingFailed) as stop:
            self.stopped = stop
        children = dict(self.roster.child_ranks)
        reports = stop_all(
            self.ctx.world,
            self.links.down_comm,
            children,
            self._drain,
            self.ctx.poll,
            failures=self.failures,
            orphans=self._orphans,
        )
        reports = record.sound_reports(reports, self.ctx.plan.workers, self.refused)
        self.port.close()
        self.session.stale += self.port.stale
        summary = self.reducer.summary(reports, self.session.out, self.session.start)
        replacements = {"replacements": self.spares.records()} if self.spares else {}
        if self.caught is not None and self.caught.policy == "drop":
            replacements["dropped"] = self.caught.records()
        if self.refused.history:
            replacements["refused"] = self.refused.history
        return (
            {
                "stale_discarded_by_nodes": int(sum(r[0] for r in reports.values())),
                "messages_sent": int(sum(r[1] for r in reports.values())),
            }
            | summary
            | replacements
            | {"distribution": self.distribution.as_dict()}
            | {"collection": self.collection.as_dict()}
        )

    def _orphans(self) -> list[int]:
        """World ranks alive that a ``STOP`` through the children cannot reach: spares never
        assigned and dropped liars a spare replaced, or a tree's nodes whose parent died."""
        if self.spares is not None:
            return self.roster.spare_orphans()
        return self.reducer.orphans()

    # -- failures ---------------------------------------------------------------------------
    def _check_failures(self, t: int, *, ask: bool) -> None:
        """Learn of failures (``ask``: from MPI, at most every ``FAILURE_POLL`` seconds);
        ``CannotContinue`` once the code cannot decode without the workers lost."""
        failures = self.failures
        if failures is None:
            return
        now = clock()
        if ask and now - self._polled >= FAILURE_POLL:
            self._polled = now
            failures.poll()
            if self.spares is not None:
                self.spares.poll(self.port.first_heard)
        if len(failures.failed) == self._checked:
            return
        fresh = list(failures.failed.values())[self._checked :]
        self._checked = len(failures.failed)
        if self.covering is not None:
            self._cover([f.worker for f in fresh if f.worker is not None])
        if self._collecting and self.pulls is not None:
            self.pulls.widen()  # a worker pulled may be among the dead: take whatever comes
        if self.spares is not None:
            self._replace(t)
        if not self.reducer.can_go_on(self.roster.lost(t)):
            lost = [failures.failed[rank] for rank in sorted(failures.failed)]
            raise CannotContinue(lost, t, self._cannot_decode(t))

    def _cover(self, dead: list[int]) -> None:
        """``scatter``: the chunks of workers that died are the master's to send from now on;
        with a model out, their pieces of it go to every live worker now (the dead one may
        not have forwarded them; a worker takes a piece it holds already no more)."""
        assert self.covering is not None and self.splitter is not None
        for worker in dead:
            self.covering.lose(worker)
        if not self._collecting or self._model is None:
            return
        live = self.roster.live_ranks()
        for owner, chunk in self.splitter.chunks(self._model, dead):
            if owner in dead:
                for rank in live:
                    self.sends.send(self.links.pieces, chunk, rank, protocol.MODEL_CHUNK)
        self._covered_late += dead

    # -- caught liars (``adversaries.caught``, ``gradcode.train.faults.caught``) --------------
    def _drop(self, t: int, named: list[int]) -> None:
        """Under ``drop``: the workers named in iteration ``t`` leave the run from ``t + 1``
        on, as failed workers (a spare, where there is one, takes each one's place)."""
        made = self.roster.drop(t, named)
        if made and self.covering is not None:  # its chunk of every model is ours to send
            self._cover([drop.worker for drop in made])

    def _check_drops(self, t: int) -> None:
        """``CannotContinue`` once the code cannot decode iteration ``t`` without the workers
        lost, the dropped liars among them (checked once per new drop)."""
        if self.caught is None or len(self.caught.dropped) == self._drops_checked:
            return
        self._drops_checked = len(self.caught.dropped)
        if not self.reducer.can_go_on(self.roster.lost(t)):
            failed = self.failures.failed if self.failures is not None else {}
            raise CannotContinue(
                [failed[rank] for rank in sorted(failed)], t, self._cannot_decode(t)
            )

    def _cannot_decode(self, t: int) -> str:
        return self.roster.why_lost(t, self.code.name, self.code.params())

    def _replace(self, t: int) -> None:
        """Spares take the places of the dead workers; each gets the current model at once."""
        for rank in self.roster.replace_dead(t):
            if self._model is not None:
                self.sends.send(self.links.down_comm, self._model, rank, protocol.MODEL)

    def _drain(self) -> bool:
        for result in self.port.poll(clock()):
            self.port.release(result)
        assigned = self.spares.pump() if self.spares is not None else True
        return self.sends.idle() and assigned

    # -- one iteration ----------------------------------------------------------------------
    def _iteration(self, t: int) -> None:
        session = self.session
        point = session.point()
        began, stale_before, covered = self._begin(t, point)
        held: dict[Any, Result] = {}
        seen: list[Result] = []
        failures: list[str] = []
        gradient, extras, ready = self._collect_and_decode(t, began, held, seen, failures)
        self._collecting = False
        if covered is not None:  # the record's ``covered``: every chunk the master sent to all
            covered = sorted(set(covered) | set(self._covered_late))
        decoded = clock()
        session.step(t, gradient, point)
        ended = clock()
        if self.caught is not None:
            self._drop(t, extras.get("adversaries", []))
        slow = []
        if self.covering is not None:
            reports = [
                (int(r.field("model_last")), r.field("model_wait"), r.field("model_span"))
                for r in seen
            ]
            slow = self.covering.observe(t, reports)
        fields = (
            record.times(began, ready, decoded, ended)
            | {
                "used": list(held),
                "bytes_received": sum(r.nbytes for r in seen),
                "stale": self.port.stale - stale_before,
                "intake_time": self.port.intake_time,
                "decode_failures": failures,
                "messages": [self._describe(r, began) for r in seen],
                "injected": record.injected(
                    self.delays.delays(t), self.ctx.plan.config.stragglers.persistent
                ),
            }
            | ({} if covered is None else {"covered": covered, "slow_chunks": slow})
            | ({} if self.pulls is None else {"notices": self.pulls.notices})
            | extras
            | self.roster.fields()
            | self.refused.fields()
        )
        for result in seen:
            self.port.release(result)
        for worker in extras.get("adversaries", ()):
            session.caught[worker] = session.caught.get(worker, 0) + 1
        session.finish_iteration(t, fields)

    def _describe(self, result: Result, began: float) -> dict[str, Any]:
        key = self.reducer.key(result)
        scatter = self.splitter is not None
        return record.describe(result, key, began, one_clock=self.one_clock, scatter=scatter)

    def _begin(self, t: int, point: np.ndarray) -> tuple[float, int, list[int] | None]:
        """Iteration ``t`` begun: the model out; when it began, the port's stale count then,
        and the chunks covered (``_send_model``)."""
        model = np.empty(1 + self.ctx.features)
        model[0], model[1:] = t, point
        self._model = None  # a spare assigned before the models go out gets its own with them
        if self.failures is not None:
            self.failures.iteration = t
            self._polled = 0.0
            self._check_failures(t, ask=True)
        self._check_drops(t)
        self.reducer.start(t)
        began = self._began = clock()
        self.port.start(t, began)
        stale_before = self.port.stale
        if self.pulls is not None:
            self.pulls.start()
        self._covered_late = []
        covered = self._send_model(t, model)
        self._model = model
        self._collecting = True
        return began, stale_before, covered

    def _collect_and_decode(
        self,
        t: int,
        began: float,
        held: dict[Any, Result],
        seen: list[Result],
        failures: list[str],
    ) -> tuple[np.ndarray, dict[str, Any], float]:
        """Results into ``held`` (used) and ``seen`` (all) until they reduce: the update, the
        reducer's fields and when the sufficient set was in hand. A refusal of the reducer
        goes to ``failures``; ``IterationTimeout`` past ``runtime.iteration_timeout``."""
        ctx = self.ctx
        deadline = began + ctx.plan.config.runtime.iteration_timeout
        while True:
            if self._collect(held, seen):
                ready = clock()
                try:
                    gradient, extras = self.reducer.reduce(held)
                    return gradient, extras, ready
                except NotDecodableError as error:
                    # the rule held but the decoder refused (e.g. more corruption than it
                    # corrects): wait for more results and try again with them, unless every
                    # result that can come is in hand
                    failures.append(" ".join(str(error).split()))
                    if self.pulls is not None:
                        self.pulls.widen()
                    self._refused(held, seen, failures)
            now = clock()
            if now > deadline:
                raise IterationTimeout(
                    f"iteration {t}: results of {sorted(map(str, held))} are not decodable "
                    f"after {ctx.plan.config.runtime.iteration_timeout:g} s"
                    + (f" ({failures[-1]})" if failures else "")
                )
            self.sends.pump()
            self._check_failures(t, ask=True)
            upcoming = self.port.next_event()
            until = deadline if upcoming is None else min(upcoming, deadline)
            if self.sends.pending():
                # sends in flight need MPICH's progress, which every ``Test`` of ``pump``
                # drives: the whole loop until they are out, only then the port's quiet wait
                nap(until, ctx.poll)
            else:
                self.port.wait(until, ctx.poll)

    def _refused(self, held: dict[Any, Result], seen: list[Result], refusals: list[str]) -> None:
        """The reducer refused ``held``: every result seen joins it (those after the one that
        made it decodable were only seen); ``DecodingFailed`` when that was every message
        that can still come."""
        reducer = self.reducer
        for result in seen:
            key = reducer.key(result)
            if key not in held and key not in self.refused.erased:
                held[key] = reducer.hold(result)
        reducer.refused_everything(held, refusals)

    def _send_model(self, t: int, model: np.ndarray) -> list[int] | None:
        """Send model ``t`` the way ``runtime.distribution`` chose; with ``scatter`` returns the
        chunks the master sent to every worker itself (``Covering``)."""
        roster = self.roster
        if self.covering is None:
            for child_rank, world_rank in roster.child_ranks:
                if roster.alive(world_rank):
                    self.sends.send(self.links.down_comm, model, child_rank, protocol.MODEL)
            return None
        # a tree's nodes all get pieces, on the channel the tree keeps for them
        # (``Links.pieces``); a tree's failures are not tolerated with scatter
        # (``distribution.choose``), a flat code's dead workers' chunks are covered (``_cover``)
        assert self.splitter is not None  # set with covering: scatter
        live = roster.live_ranks()
        covered = self.covering.chunks(t)
        for owner, chunk in self.splitter.chunks(model, covered):
            for rank in live if owner in covered else [owner + 1]:
                self.sends.send(self.links.pieces, chunk, rank, protocol.MODEL_CHUNK)
        # a spare in a dead worker's place is not among the ranks the workers forward to
        for worker, (rank, _) in enumerate(roster.child_ranks):
            if rank != worker + 1 and roster.alive(rank):
                self.sends.send(self.links.down_comm, model, rank, protocol.MODEL)
        return covered

    def _collect(self, held: dict[Any, Result], seen: list[Result]) -> bool:
        """Take the results received so far; True once those in ``held`` are decodable.

        Called while ``held`` is not yet decodable (or its reduction failed); results of the
        same batch after the one that made it decodable are seen (logged) but not used.
        """
        reducer = self.reducer
        decodable = False
        results = self.port.poll(clock())
        if self.refused.take(self.port.take_refused(), self._ignored_refusal):
            reducer.erase(held)
            decodable = reducer.decodable(held)
        for result in results:
            if self.pulls is not None and result.data.size == 0:
                self.pulls.notice(result, reducer.key(result), self._began)
                self.port.release(result)
                continue
            key = reducer.key(result)
            if self.roster.ignored(result.source) or key in self.refused.erased:
                self.port.release(result)
                continue
            seen.append(result)
            if not decodable:
                held[key] = reducer.hold(result)
                decodable = reducer.decodable(held)
        # an aggregator run can learn of a lost worker after the others' values came: no new
        # result then, but what it holds is every live worker's (a refusal of it ends the run)
        return decodable or reducer.complete(held)

    def _ignored_refusal(self, refusal: Refusal) -> bool:
        return self.roster.ignored(refusal.source)

    def _pull(self, source: int, iteration: int, key: int) -> None:
        request = np.array([float(iteration), float(key)])
        self.sends.send(self.links.down_comm, request, source, protocol.PULL)
