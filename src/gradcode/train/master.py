"""The master (rank 0) of a master-worker scheme or of a tree code (CodedReduce).

Iteration ``t``: send ``[t, point]`` to every child (the workers; in a tree the layer-1 nodes,
which forward it down), then take results as they arrive and decode *as soon as the results in
hand are decodable*: after every new result the code's own rule is asked (``is_decodable``;
a tree's root asks ``children_decodable`` about its children), so FRC stops at one result per
group, binary at the first complete class, GC-MMC at the first decodable set of partial
messages, and threshold codes at ``n - s``. Results of other iterations are recognised by tag
and header and discarded (``ResultPort``); every worker always has a receive posted.

Decoding: ``decode_result`` (``decode_root`` for a tree). A code whose capabilities say it
corrects adversaries (with ``a > 0``) has the workers it caught logged; one that estimates its
error has the estimate logged.

Omniscient attacks (``adversaries.attack`` whose ``gradcode.attacks`` class declares
``omniscient``) are emulated here, as DRACO's and DETOX's own code emulate them at the
parameter server: the lying workers send their honest messages (flagged ``corrupted``), and
just before decoding the master replaces each with the attack's forgery from the honest
messages in hand (``Attack.apply``, seeded per ``(seed, iteration, key)`` like a worker's
forgery). No byte more crosses the network; the forgery's time is the master's, logged as
``attack_time`` and included in ``decode_time``. The emulated attacker knows the honest
messages of this decoding, not those of the stragglers still on their way.

Robust aggregation (``aggregator:``, ``gradcode.aggregators``; codes with
``capabilities.aggregable``): instead of decoding, the master hands the code's per-group values
(``aggregation_inputs``: the workers' partial gradients, or a vote per replica group) to the
aggregator, after any omniscient forgery, and steps along ``total`` times its output: the
aggregator estimates the *mean* of the honest values, the exact path's gradient is their *sum*
over all ``total`` groups, and ``Session.step`` divides that sum by the training rows as it
does a decoded one. The aggregation's time is logged as ``aggregate_time`` and included in
``decode_time``; ``aggregate_selected`` (the workers whose values an aggregator that selects,
Krum or Bulyan, kept) and ``aggregate`` (its facts, e.g. Weiszfeld's ``iterations`` and
``converged``) when it reports them, ``aggregate_refused`` (values it refused as non-finite:
the workers behind each and why). Every aggregation checks the aggregator's tolerance against
the values it got (``gradcode.train.tolerance``; ``below_tolerance`` in the record under
``aggregator.below_tolerance: continue``), and an aggregator run goes on past lost workers
with the live workers' values where the code's own rule would need the lost ones.

Per-iteration record (``log.jsonl``; ``Session`` adds ``iteration``, ``time``, ``wall`` and
the metrics):

- ``iteration_time``: from sending the model to the end of the update (``wait_time`` until
  decodable, ``decode_time``, ``update_time``);
- ``used``: the message keys handed to the decoder; ``adversaries``: workers caught lying;
  ``attack_time``: seconds the master spent forging an omniscient attack's messages;
- ``messages``: per result of this iteration taken off the wire, its ``key``, ``worker``,
  ``received`` (bytes in memory) and ``arrival`` (after the emulated single port) in seconds
  since the iteration started, and the sender's measured ``compute`` and injected
  ``injected_compute`` / ``injected_comm`` seconds, ``sent`` (the sender's clock when it
  called ``MPI_Isend``) and ``transfer``, the measured transfer time: from ``sent`` to when
  the master's posted receive was seen complete (``null`` unless every rank reads one clock;
  ``summary.json``'s ``transfer_timing``);
- ``injected``: the delays the straggler model drew for every worker (``start``,
  ``compute`` per partition, ``comm`` per full-length vector) and ``persistent`` workers;
- ``bytes_received``, ``stale`` (late results discarded during the iteration);
- ``intake_time``: seconds the port's ``Intake`` spent checking this iteration's results, and
  ``refused`` (only when some were): the results it refused, each with its sender, kind and
  reason (``gradcode.train.intake``, ``gradcode.train.refusals``; ``summary.json``'s
  ``refused`` lists every one of the run);
- with ``runtime.collection`` pull (``gradcode.runfile.collection``): ``notices``, per notice
  of a ready message taken off the wire, its ``key``, ``worker``, ``arrival``, the sender's
  ``started``, ``compute`` and ``injected_compute``, and whether the master ``pulled`` it
  (``messages`` then holds the pulled results only);
- with ``faults.tolerate``: ``failed`` (every worker known dead so far) and ``failures`` (those
  detected during this iteration: ``gradcode.train.faults.failures.Failure``).

Refused messages (``gradcode.train.intake``): every result is checked once where the port
reads it; a refused one is never used, and its key is corrected (a zero message in its place
that the decoder corrects, within ``a``), kept out of the aggregation, or erased, by the
code's rules; ``DecodingFailed`` when the code cannot do without it
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

from gradcode.aggregators import AggregatorError
from gradcode.attacks import attack_rng
from gradcode.codes import AggregationInputs, NotDecodableError
from gradcode.codes.tree import MASTER
from gradcode.runfile.plan import alive_decodable, collection_choice, names_liars
from gradcode.runlogs import nodelog
from gradcode.train import protocol
from gradcode.train.distribution import (
    ChunkSplitter,
    Covering,
    distribution_choice,
    scatter_pieces,
)
from gradcode.train.faults.caught import Caught, DecodingFailed
from gradcode.train.faults.failures import CannotContinue
from gradcode.train.faults.spares import Replacements
from gradcode.train.intake import MALFORMED, NON_FINITE, Intake, Refusal, Sender, non_finite
from gradcode.train.protocol import clock
from gradcode.train.pulling import Pulling, collector_puller
from gradcode.train.refusals import Refused
from gradcode.train.rows import MessageRows
from gradcode.train.runtime import Links, RankContext
from gradcode.train.session import Session
from gradcode.train.shutdown import stop_all
from gradcode.train.tolerance import run_tolerance
from gradcode.train.transport import RELAY_FIELDS, Result, ResultPort, SendSet, nap

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
        capabilities = code.capabilities
        # a tree's root reduces its children; the TreeCode interface says how
        self.tree = ctx.plan.topology.tree(code)
        width = code.message_length(ctx.features)
        spares = ctx.plan.spares
        # a spare's results come on its own channel (flat: ``down_comm`` ranks are world's)
        sources = list(range(1, len(links.children) + 1 + spares))
        self.failures = ctx.failures if ctx.tolerant else None
        #: ``down_comm`` rank and world rank of every child (``children[j]``: ``j + 1`` and
        #: ``j + 1`` until a spare takes child ``j``'s place)
        self.child_ranks = [(j + 1, child + 1) for j, child in enumerate(links.children)]
        self.keys = code.all_message_keys()
        self.collection = collection_choice(ctx.plan)
        pull = self.collection.way == "pull"
        # every message is checked once, where it is read (``gradcode.train.intake``)
        intake = Intake(width, self._sender, notices=pull, ahead=0)  # no result comes early
        self.port = ResultPort(
            links.down_comm, sources, width, ctx.port(), self.failures, intake=intake
        )
        self.sends = SendSet(self.failures)
        self.spares = self._replacements(spares, share) if spares else None
        self.stopped: CannotContinue | DecodingFailed | None = None
        self._polled = 0.0
        self._checked = 0  # failures already checked against the code
        self._collecting = False  # between an iteration's model going out and its decoding
        self._covered_late: list[int] = []  # ``scatter``: chunks covered after a death
        self._model: np.ndarray | None = None  # the current iteration's (a new spare gets it)
        self.rows = (
            MessageRows(len(self.keys), width)
            if self.tree is None and code.decodes_faster_from_rows
            else None
        )
        self.delays = ctx.plan.delay_source()
        self.reports = capabilities.corrects_adversaries and code.a > 0
        #: who lies when, and the attack if the master must forge it (omniscient)
        self.attacks = ctx.plan.config.adversaries.plan()
        attack = self.attacks.attack() if self.attacks.workers else None
        self.forger = attack if attack is not None and attack.omniscient else None
        self.estimates = capabilities.estimates_error
        aggregator = ctx.plan.config.aggregator
        #: the robust aggregator that replaces decoding (``None``: the code decodes)
        self.aggregator = aggregator.build() if aggregator is not None else None
        #: the aggregator's tolerance against the values each iteration actually got
        self.tolerance = run_tolerance(ctx.plan.config, code, self.aggregator, self.attacks.lies)
        #: the checks of the liars a decoder names, and ``adversaries.caught``
        self.caught = (
            Caught(code.a, self.attacks, ctx.plan.config.adversaries.caught)
            if names_liars(ctx.plan)
            else None
        )
        self._drops_checked = 0  # drops already checked against the code
        self.one_clock = ctx.one_clock  # a sender's clock is comparable with ours
        self.distribution = distribution_choice(ctx)
        scatter = self.distribution.way == "scatter"
        pieces = scatter_pieces(ctx.features, ctx.plan.workers)
        self.splitter = ChunkSplitter(ctx.features, ctx.plan.workers, pieces) if scatter else None
        self.covering = Covering.of(ctx.plan.config, ctx.plan.workers) if scatter else None
        # a tree's root pulls by its own rule over its children
        self.puller: Pulling | None = collector_puller(code, MASTER) if pull else None
        self._notices: list[dict[str, Any]] = []  # ``pull``: this iteration's
        #: ``pull``: this iteration's notices not pulled, with where to ask for them
        self._unpulled: list[tuple[dict[str, Any], tuple[int, int, int]]] = []
        self._began = 0.0  # when this iteration's model went out
        self._now = 0  # the iteration under way
        self.refused = Refused(self._refused_keys, liars=bool(self.attacks.workers))
        self.erasure = self._erasure()

    def _replacements(
        self, spares: int, share: Callable[[int], dict[int, Any]] | None
    ) -> Replacements:
        """The spares that take dead (or dropped) workers' places."""
        assert self.failures is not None and share is not None
        ctx = self.ctx
        return Replacements(
            ctx.world, self.failures, ctx.plan.workers, spares, share, self.failures.began
        )

    def run(self) -> dict[str, Any]:
        config = self.ctx.plan.config
        try:
            for t in range(self.session.start, config.iterations):
                self._iteration(t)
        except (CannotContinue, DecodingFailed) as stop:
            self.stopped = stop
        children = dict(self.child_ranks)
        reports = stop_all(
            self.ctx.world,
            self.links.down_comm,
            children,
            self._drain,
            self.ctx.poll,
            failures=self.failures,
            orphans=self._orphans,
        )
        reports = self._sound_reports(reports)
        self.port.close()
        self.session.stale += self.port.stale
        if self.tree is not None:
            self._write_nodes(reports)
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
            | self._relays(reports)
            | replacements
            | {"distribution": self.distribution.as_dict()}
            | {"collection": self.collection.as_dict()}
        )

    def _sound_reports(self, reports: dict[int, np.ndarray]) -> dict[int, np.ndarray]:
        """The ``DONE`` reports the summary can take: at least ``[stale, sent]``, every value
        finite; the others are named in ``refused`` and left out (a liar's report must not
        crash the summary, nor put NaN in it)."""
        sound = {}
        workers = self.ctx.plan.workers
        for rank, report in reports.items():
            reason = "shorter than [stale, sent]" if report.size < 2 else non_finite(report)
            if reason is None:
                sound[rank] = report
                continue
            worker = rank - 1 if rank <= workers else None
            refusal = Refusal(rank, worker, self.refused.iteration, MALFORMED, f"DONE: {reason}")
            self.refused.take([refusal], lambda refusal: False)
        return sound

    def _write_nodes(self, reports: dict[int, np.ndarray]) -> None:
        """A tree run's ``nodes.jsonl`` from the rows after ``RELAY_FIELDS`` in the ``DONE``
        reports (``gradcode.runlogs.nodelog``)."""
        start = 2 + len(RELAY_FIELDS)
        rows = [row for report in reports.values() for row in nodelog.decode(report[start:])]
        nodelog.write_nodes(self.session.out, rows, keep_below=self.session.start)

    def _relays(self, reports: dict[int, np.ndarray]) -> dict[str, Any]:
        """``relay_transfers``: what every tree parent measured of its children's messages
        (``DONE`` reports after ``[stale, sent]``: ``RELAY_FIELDS``); nothing for flat codes."""
        if self.tree is None:
            return {}
        relays = []
        for rank, report in sorted(reports.items()):
            if report.size < 2 + len(RELAY_FIELDS):
                continue
            fields = dict(zip(RELAY_FIELDS, report[2 : 2 + len(RELAY_FIELDS)], strict=True))
            count = int(fields["messages"])
            if count == 0:
                continue
            relays.append(
                {
                    "node": rank - 1,
                    "messages": count,
                    "bytes": int(fields["bytes"]),
                    "mean": fields["transfer_sum"] / count if self.one_clock else None,
                    "max": fields["transfer_max"] if self.one_clock else None,
                    "refused": int(fields["refused"]),
                }
            )
        return {"relay_transfers": relays}

    def _orphans(self) -> list[int]:
        """World ranks alive whose parent died (a tree's STOP cannot reach them through it),
        spares never assigned (they listen on ``world`` only) and dropped liars a spare
        replaced (no longer among the children)."""
        if self.spares is not None:
            return self.spares.idle() + self._replaced_liars()
        if self.tree is None or self.failures is None:
            return []
        tree, dead = self.tree, self.failures
        return [
            node + 1
            for node in range(tree.n)
            if not dead.dead(node + 1)
            and tree.parent(node) != MASTER
            and dead.dead(tree.parent(node) + 1)
        ]

    # -- failures ---------------------------------------------------------------------------
    def _lost(self, t: int) -> list[int]:
        """Workers that will not answer iteration ``t``: failed, persistent, silent, dropped
        (``adversaries.caught``)."""
        config = self.ctx.plan.config
        lost = set(config.stragglers.persistent)
        spares = self.spares
        gone = set(self.failures.workers()) if self.failures is not None else set()
        if self.caught is not None:
            gone |= set(self.caught.workers())
        lost |= {w for w in gone if not (spares and spares.replaced(w))}
        if config.faults is not None:
            lost |= {e.worker for e in config.faults.silent if e.iteration <= t}
        return sorted(lost)

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
        if self._collecting:  # a worker pulled may be among the dead: take whatever comes
            self._pull_all()
        if self.spares is not None:
            self._replace(t)
        if not self._can_go_on(t):
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
        live = self._live_ranks()
        for owner, chunk in self.splitter.chunks(self._model, dead):
            if owner in dead:
                for rank in live:
                    self.sends.send(self.links.pieces, chunk, rank, protocol.MODEL_CHUNK)
        self._covered_late += dead

    def _alive(self, rank: int) -> bool:
        """Whether ``rank`` is to be sent models: not dead, not a dropped liar."""
        if self.caught is not None and rank in self.caught.ranks():
            return False
        return self.failures is None or not self.failures.dead(rank)

    def _ignored(self, result: Result) -> bool:
        """A message of a dropped liar (sent before it was dropped): never used."""
        return self.caught is not None and result.source in self.caught.ranks()

    def _replaced_liars(self) -> list[int]:
        """Ranks of dropped liars whose worker a spare serves now."""
        if self.caught is None:
            return []
        return [
            drop.rank
            for drop in self.caught.dropped.values()
            if self.child_ranks[drop.worker][1] != drop.rank
        ]

    # -- caught liars (``adversaries.caught``, ``gradcode.train.faults.caught``) --------------
    def _drop(self, t: int, named: list[int]) -> None:
        """Under ``drop``: the workers named in iteration ``t`` leave the run from ``t + 1``
        on, as failed workers (a spare, where there is one, takes each one's place)."""
        assert self.caught is not None
        rank_of = {worker: world for worker, (_, world) in enumerate(self.child_ranks)}
        made = self.caught.drop(t, named, rank_of)
        if not made:
            return
        if self.covering is not None:  # its chunk of every model is the master's to send
            self._cover([drop.worker for drop in made])
        if self.spares is None:
            return
        for drop in made:
            replacement = self.spares.replace_dropped(drop.worker, drop.rank, t)
            if replacement is not None:  # the next model goes to the spare
                rank = replacement.spare_rank
                self.child_ranks[drop.worker] = (rank, rank)

    def _check_drops(self, t: int) -> None:
        """``CannotContinue`` once the code cannot decode iteration ``t`` without the workers
        lost, the dropped liars among them (checked once per new drop)."""
        if self.caught is None or len(self.caught.dropped) == self._drops_checked:
            return
        self._drops_checked = len(self.caught.dropped)
        if not self._can_go_on(t):
            failed = self.failures.failed if self.failures is not None else {}
            raise CannotContinue(
                [failed[rank] for rank in sorted(failed)], t, self._cannot_decode(t)
            )

    def _cannot_decode(self, t: int) -> str:
        """Why iteration ``t`` cannot be decoded: the workers lost, the dropped liars named."""
        dropped = self.caught.workers() if self.caught is not None else []
        why = f" (workers {dropped} dropped, named as liars by the decoder)" if dropped else ""
        return (
            f"{self.code.name} {self.code.params()} cannot decode without workers "
            f"{self._lost(t)}{why}"
        )

    def _live_ranks(self) -> list[int]:
        """The workers' own ranks (worker ``j`` at ``j + 1``) not known dead."""
        return [r for r in range(1, self.ctx.plan.workers + 1) if self._alive(r)]

    def _replace(self, t: int) -> None:
        """Spares take the places of the dead workers; each gets the current model at once."""
        assert self.spares is not None
        for made in self.spares.replace_dead(t):
            rank = made.spare_rank  # flat: its ``down_comm`` rank is its world rank
            self.child_ranks[made.worker] = (rank, rank)
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
        record = (
            {
                "iteration_time": ended - began,
                "wait_time": ready - began,
                "decode_time": decoded - ready,
                "update_time": ended - decoded,
                "used": list(held),
                "bytes_received": sum(r.nbytes for r in seen),
                "stale": self.port.stale - stale_before,
                "intake_time": self.port.intake_time,
                "decode_failures": failures,
                "messages": [self._describe(r, began) for r in seen],
                "injected": self._injected(t),
            }
            | ({} if covered is None else {"covered": covered, "slow_chunks": slow})
            | ({} if self.puller is None else {"notices": self._notices})
            | extras
            | self._failure_fields()
            | (self.caught.fields() if self.caught is not None else {})
            | self.refused.fields()
        )
        for result in seen:
            self.port.release(result)
        for worker in extras.get("adversaries", ()):
            session.caught[worker] = session.caught.get(worker, 0) + 1
        session.finish_iteration(t, record)

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
        self._now = t
        self.refused.start(t)
        began = self._began = clock()
        self.port.start(t, began)
        if self.rows is not None:
            self.rows.start()
        stale_before = self.port.stale
        if self.puller is not None:
            self.puller.start()
            self._notices, self._unpulled = [], []
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
        """Results into ``held`` (used) and ``seen`` (all) until they decode: the gradient,
        the decoder's extras and when the decodable set was in hand. A refusal of the decoder
        goes to ``failures``; ``IterationTimeout`` past ``runtime.iteration_timeout``."""
        ctx = self.ctx
        deadline = began + ctx.plan.config.runtime.iteration_timeout
        while True:
            if self._collect(held, seen):
                ready = clock()
                try:
                    gradient, extras = self._decode(held, t)
                    return gradient, extras, ready
                except NotDecodableError as error:
                    # the rule held but the decoder refused (e.g. more corruption than it
                    # corrects): wait for more results and try again with them, unless every
                    # result that can come is in hand
                    failures.append(" ".join(str(error).split()))
                    self._pull_all()
                    self._refused(t, held, seen, failures)
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

    def _refused(
        self, t: int, held: dict[Any, Result], seen: list[Result], refusals: list[str]
    ) -> None:
        """The decoder refused ``held``: every result seen joins it (those after the one that
        made it decodable were only seen); ``DecodingFailed`` when a flat code's decoder
        refused the messages of every worker that can still answer."""
        for result in seen:
            key = self._key(result)
            if key not in held and key not in self.refused.erased:
                held[key] = result if self.rows is None else self.rows.hold(result)
        if self.tree is not None:
            return
        lost = set(self._lost(t))
        expected = {
            key
            for worker in range(self.code.n)
            if worker not in lost
            for key in self.code.message_keys(worker)
        }
        if expected <= set(held) | set(self.refused.erased):
            raise DecodingFailed(
                t,
                f"the decoder refused the messages of every live worker ({refusals[-1]})",
                refusals,
            )

    def _send_model(self, t: int, model: np.ndarray) -> list[int] | None:
        """Send model ``t`` the way ``runtime.distribution`` chose; with ``scatter`` returns the
        chunks the master sent to every worker itself (``Covering``)."""
        if self.covering is None:
            for child_rank, world_rank in self.child_ranks:
                if self._alive(world_rank):
                    self.sends.send(self.links.down_comm, model, child_rank, protocol.MODEL)
            return None
        # a tree's nodes all get pieces, on the channel the tree keeps for them
        # (``Links.pieces``); a tree's failures are not tolerated with scatter
        # (``distribution.choose``), a flat code's dead workers' chunks are covered (``_cover``)
        assert self.splitter is not None  # set with covering: scatter
        live = self._live_ranks()
        covered = self.covering.chunks(t)
        for owner, chunk in self.splitter.chunks(model, covered):
            for rank in live if owner in covered else [owner + 1]:
                self.sends.send(self.links.pieces, chunk, rank, protocol.MODEL_CHUNK)
        # a spare in a dead worker's place is not among the ranks the workers forward to
        for worker, (rank, _) in enumerate(self.child_ranks):
            if rank != worker + 1 and self._alive(rank):
                self.sends.send(self.links.down_comm, model, rank, protocol.MODEL)
        return covered

    def _collect(self, held: dict[Any, Result], seen: list[Result]) -> bool:
        """Take the results received so far; True once those in ``held`` are decodable.

        Called while ``held`` is not yet decodable (or its decoding failed); results of the
        same batch after the one that made it decodable are seen (logged) but not used.
        """
        decodable = False
        results = self.port.poll(clock())
        if self.refused.take(self.port.take_refused(), self._ignored_refusal):
            self._erased(held)
            decodable = self._decodable_now(held)
        for result in results:
            if self.puller is not None and result.data.size == 0:
                self._notice(result)
                continue
            if self._ignored(result) or self._key(result) in self.refused.erased:
                self.port.release(result)
                continue
            seen.append(result)
            if not decodable:
                held[self._key(result)] = result if self.rows is None else self.rows.hold(result)
                decodable = self._decodable_now(held)
        # an aggregator run can learn of a lost worker after the others' values came: no new
        # result then, but what it holds is every live worker's (a refusal of it ends the run)
        return decodable or self._every_live_value(held)

    # -- refused messages (``gradcode.train.intake``, ``gradcode.train.refusals``) ----------
    def _sender(self, source: int) -> Sender | None:
        """Who may send on ``down_comm`` rank ``source``: a tree's child node, or the worker
        that rank serves now (a spare in a dead worker's place serves it)."""
        if self.tree is not None:
            node = self.links.children[source - 1]
            return Sender(node, frozenset([node]))
        for worker, (rank, _) in enumerate(self.child_ranks):
            if rank == source:
                keys = self.code.message_keys(worker)
                return Sender(worker, frozenset(self.keys.index(k) for k in keys))
        return None

    def _erasure(self) -> str | None:
        """A refused message's place: a zero message the decoder corrects (``correct``), a
        key answered that the aggregator does without (``aggregate``), or an erasure
        (``None``; ``gradcode.train.refusals``)."""
        if self.aggregator is not None:
            return "aggregate"
        return "correct" if self.reports else None

    def _refused_keys(self, refusal: Refusal) -> list[Any]:
        if refusal.worker is None:
            return []
        if self.tree is not None:
            return [refusal.worker]
        if refusal.key is not None:
            return [self.keys[refusal.key]]
        return list(self.code.message_keys(refusal.worker))

    def _ignored_refusal(self, refusal: Refusal) -> bool:
        return self.caught is not None and refusal.source in self.caught.ranks()

    def _erased(self, held: dict[Any, Result]) -> None:
        """Messages of this iteration were refused: none of them is used (a result taken
        before its refusal leaves ``held``), and ``DecodingFailed`` once the code cannot do
        without them (``gradcode.train.refusals``)."""
        for key in self.refused.erased:
            held.pop(key, None)
        t = self.refused.iteration
        named = self.refused.workers()
        if self.erasure == "correct":
            if len(named) > self.code.a:
                raise DecodingFailed(
                    t,
                    f"workers {named} sent messages refused ({self.refused.reason()}), more "
                    f"liars than the code corrects (a = {self.code.a})",
                )
            return
        if self.erasure == "aggregate":
            return
        lost = set(self._lost(t))
        if self.tree is not None:
            left = [c for c in self.links.children if c not in lost]
            left = [c for c in left if c not in self.refused.erased]
            decodable = bool(left) and self.tree.children_decodable(MASTER, left)
        else:
            live = [w for w in range(self.code.n) if w not in lost]
            left = [k for w in live for k in self.code.message_keys(w)]
            left = [k for k in left if k not in self.refused.erased]
            decodable = bool(left) and self.code.is_decodable(left)
        if not decodable:
            raise DecodingFailed(
                t,
                f"{self.refused.reason()}: {self.code.name} {self.code.params()} cannot "
                "decode without it",
            )

    def _notice(self, result: Result) -> None:
        """``pull``: a worker announced a ready message; ask for it if the code still needs
        one of its group."""
        assert self.puller is not None  # notices come only under ``pull``
        key = self._key(result)
        pulled = self.puller.wants(key)
        notice = {
            "key": key,
            "worker": int(result.field("worker")),
            "arrival": result.arrived - self._began,
            "started": result.field("started") - self._began,
            "compute": result.field("compute"),
            "injected_compute": result.field("injected_compute"),
            "pulled": pulled,
        }
        self._notices.append(notice)
        if pulled:
            self._pull(result.source, result.iteration, result.key)
        else:
            self._unpulled.append((notice, (result.source, result.iteration, result.key)))
        self.port.release(result)

    def _pull(self, source: int, iteration: int, key: int) -> None:
        request = np.array([float(iteration), float(key)])
        self.sends.send(self.links.down_comm, request, source, protocol.PULL)

    def _pull_all(self) -> None:
        """``pull``: the decoder refused what the rule asked for, or a worker died (it may
        have been pulled); take every result from now on, the ones announced and not pulled
        too."""
        if self.puller is None or self.puller.wide:
            return
        self.puller.widen()
        for notice, (source, iteration, key) in self._unpulled:
            notice["pulled"] = True
            self._pull(source, iteration, key)
        self._unpulled = []

    def _key(self, result: Result) -> Any:
        if self.tree is not None:
            return self.links.children[result.source - 1]
        return self.keys[result.key]

    def _decodable_now(self, held: dict[Any, Result]) -> bool:
        keys = list(held)
        if self.erasure is not None:  # a refused key is answered: it will not come
            keys += [key for key in self.refused.erased if key not in held]
        if not keys:
            return False
        if self.tree is not None:
            return self.tree.children_decodable(MASTER, keys)
        return self.code.is_decodable(keys) or self._every_live_value(held)

    # -- an aggregator past lost workers (``gradcode.train.tolerance``) ----------------------
    def _can_go_on(self, t: int) -> bool:
        """Whether iteration ``t`` can end without the workers lost: the code decodes without
        them, or an aggregator takes what the others send (its tolerance checked then)."""
        lost = self._lost(t)
        if alive_decodable(self.code, lost):
            return True
        return self.tolerance is not None and len(lost) < self.code.n

    def _every_live_value(self, held: dict[Any, Result]) -> bool:
        """An aggregator run with workers lost: every live worker's messages are in hand."""
        if self.tolerance is None:
            return False
        lost = set(self._lost(self._now))
        if not lost:
            return False
        return all(
            key in held
            for worker in range(self.code.n)
            if worker not in lost
            for key in self.code.message_keys(worker)
        )

    def _decode(self, held: dict[Any, Result], t: int) -> tuple[np.ndarray, dict[str, Any]]:
        messages = {key: result.data for key, result in held.items()}
        features = self.ctx.features
        if self.tree is not None:
            return self.tree.decode_root(messages, features).gradient, {}
        extras: dict[str, Any] = {}
        if self.forger is not None and self.attacks.active(t):
            began = clock()
            messages = self._check_forged(self._forge(messages, t), messages, held)
            extras["attack_time"] = clock() - began
        refused = self.refused.workers()
        if self.aggregator is not None:
            gradient = self._aggregate(messages, extras, t)
            if self.reports:
                extras["adversaries"] = sorted(set(extras["adversaries"]) | set(refused))
            return gradient, extras
        if self.erasure == "correct":
            messages |= self.refused.placeholders(self.code.message_length(features))
        result = self.code.decode_result(messages, features)
        if self.reports:
            named = sorted({int(self.code.worker_of(k)) for k in result.adversaries})
            extras["adversaries"] = sorted(set(named) | set(refused))
        if self.caught is not None:  # past the code's bound: no step along this result
            # a refused sender is proven a liar by its message: only the decoder's guesses
            # are checked against the emulation's knowledge, all against ``a``
            self.caught.check(t, [w for w in named if w not in refused])
            self.caught.check(t, extras["adversaries"], proven=True)
        if self.estimates:
            extras["error_estimate"] = result.error_estimate
        return result.gradient, extras

    def _aggregate(
        self, messages: dict[Any, np.ndarray], extras: dict[str, Any], t: int
    ) -> np.ndarray:
        """The aggregator's estimate of the honest values' mean, scaled to the gradient sum
        (module docstring); what it reports goes to ``extras``."""
        assert self.aggregator is not None and self.tolerance is not None
        code = self.code
        began = clock()
        inputs: AggregationInputs = code.aggregation_inputs(messages, self.ctx.features)
        rows = [{int(code.worker_of(k)) for k in keys} for keys in inputs.keys]
        below = self.tolerance.check(t, rows)
        if below is not None:  # ``aggregator.below_tolerance: continue``
            extras["below_tolerance"] = below
        try:
            result = self.aggregator.aggregate(inputs.values)
        except AggregatorError as error:  # fewer values than it takes (votes that failed)
            raise NotDecodableError(str(error), needed=None) from None
        gradient = result.value * inputs.total
        extras["aggregate_time"] = clock() - began
        if result.selected is not None:
            keys = [key for index in result.selected for key in inputs.keys[index]]
            extras["aggregate_selected"] = sorted({int(code.worker_of(k)) for k in keys})
        if result.info:
            extras["aggregate"] = result.info
        if result.refused:  # non-finite values, counted against its tolerance
            extras["aggregate_refused"] = [
                {"workers": sorted({int(code.worker_of(k)) for k in inputs.keys[i]}), "why": why}
                for i, why in result.refused.items()
            ]
        if self.reports:
            extras["adversaries"] = sorted({int(code.worker_of(k)) for k in inputs.adversaries})
        return gradient

    def _check_forged(
        self, forged: dict[Any, np.ndarray], honest: dict[Any, np.ndarray], held: dict[Any, Result]
    ) -> dict[Any, np.ndarray]:
        """An emulated forgery meets the finiteness check its bytes would have met on the
        wire: a non-finite one is refused like a received one (``_erased``; a code that must
        now wait for more results refuses to decode, and the wait goes on)."""
        t = self.refused.iteration
        refusals = []
        for key, value in forged.items():
            reason = non_finite(value) if value is not honest[key] else None
            if reason is not None:
                worker = int(self.code.worker_of(key))
                rank = self.child_ranks[worker][0]
                reason += " (an omniscient forgery, emulated at the master)"
                refusals.append(Refusal(rank, worker, t, NON_FINITE, reason, self.keys.index(key)))
        if not refusals or not self.refused.take(refusals, lambda refusal: False):
            return forged
        self._erased(held)
        if self.erasure is None and not self._decodable_now(held):
            raise NotDecodableError(self.refused.reason(), needed=None)
        return {key: value for key, value in forged.items() if key not in self.refused.erased}

    def _forge(self, messages: dict[Any, np.ndarray], t: int) -> dict[Any, np.ndarray]:
        """The omniscient attack's messages in place of the liars' honest ones (module
        docstring); the received buffers stay untouched."""
        assert self.forger is not None
        code, seed = self.code, self.ctx.plan.config.seed
        spares = self.spares
        liars = [
            key
            for key in messages
            if int(code.worker_of(key)) in self.attacks.workers
            # a spare in a liar's place is another process, honest
            and not (spares is not None and spares.replaced(int(code.worker_of(key))))
        ]
        # one generator per message, seeded as a worker seeds its own forgery
        return self.forger.apply(
            messages, liars, lambda key: attack_rng(seed, t, self.keys.index(key))
        )

    def _failure_fields(self) -> dict[str, Any]:
        if self.failures is None:
            return {}
        fresh = self.failures.take_fresh()
        fields: dict[str, Any] = {"failed": self.failures.workers()}
        if fresh:
            fields["failures"] = [failure.as_dict() for failure in fresh]
        if self.spares is not None:
            fields["replaced"] = self.spares.serving()
            made = self.spares.take_fresh()
            if made:
                fields["replacements"] = made
        return fields

    def _describe(self, result: Result, began: float) -> dict[str, Any]:
        return {
            "key": self._key(result),
            "worker": int(result.field("worker")),
            "received": result.arrived - began,
            "arrival": result.accepted - began,
            "bytes": result.nbytes,
            "compute": result.field("compute"),
            "injected_compute": result.field("injected_compute"),
            "injected_comm": result.field("injected_comm"),
            "started": result.field("started") - began,
            "sent": result.field("sent") - began,
            "transfer": result.completed - result.field("sent") if self.one_clock else None,
            "corrupted": bool(result.field("corrupted")),
        } | self._assembly(result)

    def _assembly(self, result: Result) -> dict[str, Any]:
        """How the sender's model came together (``scatter``): its last chunk and how long the
        sender had waited for it, and for the others."""
        if self.splitter is None:
            return {}
        return {
            "model_last": int(result.field("model_last")),
            "model_wait": result.field("model_wait"),
            "model_span": result.field("model_span"),
        }

    def _injected(self, t: int) -> dict[str, Any]:
        delays = self.delays.delays(t)
        return {
            "start": delays.start,
            "compute": delays.compute,
            "comm": delays.comm,
            "persistent": list(self.ctx.plan.config.stragglers.persistent),
        }
