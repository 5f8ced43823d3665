"""From a validated ``RunConfig`` to what the ranks run: the code, the topology, who holds what.

``build_plan`` makes every cross-check that needs the scheme (its parameters, persistent or
silent stragglers it cannot survive, adversaries it cannot correct, straggler-model parameters that
do not fit its workers) and raises ``ConfigError`` naming the key; ``check_world`` compares
the number of MPI ranks with ``n + 1``. Every rank rebuilds the same plan from the config
(construction is deterministic), so only the config travels.

The topology and every scheme-dependent choice come from the code's declared
``capabilities`` (``gradcode.codes.base.Capabilities``), never from its name:

- ``flat``: one master (rank 0) and ``n`` workers (rank ``i + 1`` is worker ``i``); a code
  whose ``capabilities.codes_data`` is non-empty (LCC) has workers that hold coded data (rank 0
  codes the ``k`` partitions with ``encode_data``), which is exact only for the model kinds it
  names;
- ``tree``: a ``TreeCode`` (CodedReduce), rank ``v + 1`` is tree node ``v``, the master is the
  root;
- ``ring``: Ring-AllReduce over ranks ``1..n``; rank 0 only logs and checkpoints.

With ``network`` (real links) the plan emulates no communication: ``bandwidth`` is ``None``
and a straggler model that would inject a link delay or a single port's ``tc``
(``DelaySource.emulated_comm``) is refused, naming its parameter.

Adversaries (``adversaries.workers``) need a code with ``capabilities.corrects_adversaries``
and no more of them than its ``a``, or an ``aggregator`` that tolerates the values they
corrupt, or ``adversaries.undefended`` (a baseline: neither, the model meant to be spoiled);
and an attack (``adversaries.attack``) the decoding can give
the honest messages it needs (``gradcode.attacks``: an omniscient attack forges from the
``min_responders() - len(workers)`` honest messages the master holds at least).
An ``aggregator`` (``gradcode.aggregators``) needs a code with ``capabilities.aggregable``
(flat codes whose messages are per-group values: ``uncoded``, ``ignore-stragglers``,
``detox``) and must accept the ``aggregation_count()`` values it hands over, of which the
liars corrupt ``aggregation_corrupted(workers)``; each refusal is one line naming the key.
``adversaries.caught: drop`` and ``adversaries.unforeseen`` need a code that names its liars
(``names_liars``); ``drop`` is refused when dropping the listed liars (less the spares) with
the persistent and silent stragglers leaves the code undecodable; unforeseen liars are not
counted against ``a`` (the run must find them: ``gradcode.train.faults.caught``).
A code with ``capabilities.message == "matrix"`` needs a data set whose gradient length is a
square ``d * d`` (``Plan.check_features``, once the data is loaded); its workers send and its
master receives the ``d x d`` matrices flattened, like any vector, and what the master decodes
(``h`` of the summed matrix for ``heterogeneous-poly``: ``GradientCode.reference``) is what the
optimizer steps along.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gradcode.attacks import honest_floor
from gradcode.codes import GradientCode, available, build, scheme_class
from gradcode.codes.registry import offers
from gradcode.optim import Constant, Inverse, Optimizer
from gradcode.optim import build as build_optimizer
from gradcode.runfile.choice import Choice
from gradcode.runfile.collection import choose as choose_collection
from gradcode.runfile.config import BandwidthConfig, ConfigError, RunConfig
from gradcode.runfile.stragglers import DelaySource, build_source
from gradcode.topology import Topology, topology_of

if TYPE_CHECKING:
    from gradcode.aggregators import Aggregator

#: how an error message names a model kind (``gradcode.models``)
MODEL_KINDS = {"linear": "linear regression", "logistic": "logistic regression"}

#: the pseudo-partition under which a worker of a data-coding scheme (LCC) keeps its coded data
CODED_DATA = -1


@dataclass
class Plan:
    """The scheme of a run and its topology (see the module docstring)."""

    config: RunConfig
    topology: Topology
    code: GradientCode
    workers: int
    partitions: int

    @property
    def spares(self) -> int:
        """Idle ranks after the workers that can take a dead worker's place."""
        return self.config.faults.spares if self.config.faults is not None else 0

    @property
    def world_size(self) -> int:
        return self.topology.ranks(self.code) + self.spares

    @property
    def coded_data(self) -> bool:
        """Whether workers hold coded data (LCC) instead of partitions of the data set."""
        return bool(self.code.capabilities.codes_data)

    def partitions_of(self, worker: int) -> tuple[int, ...]:
        """What ``worker`` computes on, in order: its partitions, or its coded data set."""
        if self.coded_data:
            return (CODED_DATA,)
        return tuple(self.code.partitions(worker))

    def scheme_params(self) -> dict[str, Any]:
        return self.topology.scheme_params(self.code)

    def check_features(self, features: int) -> None:
        """``ConfigError`` unless the code takes gradients of ``features`` numbers.

        A code whose messages are ``d x d`` matrices (``capabilities.message == "matrix"``)
        reads each partial gradient as a flattened ``d x d`` matrix, so the model needs ``d *
        d`` features; the code's ``message_length`` says so.
        """
        try:
            self.code.message_length(features)
        except ValueError as error:
            raise ConfigError(
                f"data: {error} (the model's gradient has {features} features)"
            ) from None

    @property
    def bandwidth(self) -> BandwidthConfig | None:
        """The receivers' single port: the run's ``bandwidth``, or the ``single-port`` model's
        ``tc`` per full-length vector."""
        if self.config.network is not None:
            return None  # real links: nothing is emulated
        if self.config.bandwidth is not None:
            return self.config.bandwidth
        tc = getattr(self.delay_source(), "tc_seconds", None)
        return BandwidthConfig(vector_seconds=tc) if tc else None

    def delay_source(self) -> DelaySource:
        stragglers = self.config.stragglers
        return build_source(
            stragglers.model,
            stragglers.params,
            workers=self.workers,
            partitions=self.partitions,
            seed=self.config.seed,
            time_unit=stragglers.time_unit,
        )

    def optimizer(self) -> Optimizer:
        options = self.config.optimizer
        if options.step is not None:
            schedule: Constant | Inverse = Constant(options.step)
        else:
            assert options.c1 is not None and options.c2 is not None
            schedule = Inverse(options.c1, options.c2)
        return build_optimizer(options.kind, schedule)


def alive_decodable(code: GradientCode, lost: Iterable[int]) -> bool:
    """Whether ``code`` still decodes once the workers (tree: nodes) ``lost`` never answer."""
    lost = set(lost)
    alive = [w for w in range(code.n) if w not in lost]
    keys = [key for worker in alive for key in code.message_keys(worker)]
    return bool(keys) and code.is_decodable(keys)


def build_plan(config: RunConfig) -> Plan:
    """Build and cross-check the plan of ``config``; ``ConfigError`` naming the key."""
    scheme = config.scheme
    if not offers(scheme.name):
        names = ", ".join(available())
        raise ConfigError(f"scheme.name: unknown scheme {scheme.name!r} (available: {names})")
    try:
        code = build(scheme.name, **scheme.params)
    except ValueError as error:
        raise ConfigError(f"scheme.params: {error}") from None
    except ImportError:
        raise ConfigError(f"scheme.name: {scheme.name} is not available here") from None
    capabilities = code.capabilities
    if capabilities.codes_data and config.model.kind not in capabilities.codes_data:
        kinds = " and ".join(MODEL_KINDS.get(kind, kind) for kind in capabilities.codes_data)
        raise ConfigError(
            f"scheme.name: {code.name} codes the data and is exact for {kinds} only "
            f"(model.kind is {config.model.kind})"
        )
    plan = Plan(config, topology_of(code), code, code.n, code.k)
    _check_workers(plan)
    try:
        collection_choice(plan)
    except ValueError as error:
        raise ConfigError(str(error)) from None
    try:
        source = plan.delay_source()
    except ValueError as error:
        raise ConfigError(str(error)) from None
    if getattr(source, "tc_seconds", None) is not None and config.bandwidth is not None:
        raise ConfigError(
            "bandwidth: the single-port straggler model emulates its own tc; remove bandwidth"
        )
    emulated = source.emulated_comm()
    if config.network is not None and emulated is not None:
        raise ConfigError(
            f"{emulated}: emulates communication, but with network: the real links carry the "
            f"messages (only the compute part of stragglers.model {config.stragglers.model} "
            "applies; set it to 0 or remove it)"
        )
    return plan


def _check_workers(plan: Plan) -> None:
    config, n = plan.config, plan.workers
    persistent = config.stragglers.persistent
    adversaries = config.adversaries.workers
    faults = config.faults
    killed = tuple(e.worker for e in faults.kill) if faults is not None else ()
    silent = tuple(e.worker for e in faults.silent) if faults is not None else ()
    lost_node = (faults.lose_node.worker,) if faults is not None and faults.lose_node else ()
    for key, workers in (
        ("stragglers.persistent", persistent),
        ("adversaries.workers", adversaries),
        ("adversaries.unforeseen", config.adversaries.unforeseen),
        ("faults.kill", killed),
        ("faults.silent", silent),
        ("faults.lose_node.worker", lost_node),
    ):
        outside = [w for w in workers if w >= n]
        if outside:
            raise ConfigError(f"{key}: worker {outside[0]} does not exist (workers are 0..{n - 1})")
    code = plan.code
    if persistent or silent:
        key = "faults.silent" if silent else "stragglers.persistent"
        if plan.topology.needs_every_worker:
            raise ConfigError(f"{key}: {code.name} cannot finish without every worker")
        quiet = sorted(set(persistent) | set(silent))
        if not alive_decodable(code, quiet):
            raise ConfigError(
                f"{key}: {code.name} {code.params()} cannot decode without workers {quiet}"
            )
    if plan.spares and not plan.topology.accepts_spares:
        # a tree node's children and a ring's neighbours would all need to learn a new peer
        raise ConfigError(
            f"faults.spares: a spare replaces a master-worker code's worker; {code.name} is a "
            f"{plan.topology} code"
        )
    overlap = sorted(set(persistent) & set(killed + silent + lost_node))
    if overlap:
        raise ConfigError(f"faults: worker {overlap[0]} is also a persistent straggler")
    aggregator = _check_aggregator(plan)
    if config.adversaries.undefended:
        _check_undefended(code, aggregator)
    if adversaries:
        if config.adversaries.undefended:
            pass  # a baseline: whatever the liars send enters the sum
        elif aggregator is not None:
            _check_aggregated_liars(plan, aggregator, adversaries)
        elif not code.capabilities.corrects_adversaries:
            correcting = [
                name for name in available() if scheme_class(name).capabilities.corrects_adversaries
            ]
            raise ConfigError(
                f"adversaries.workers: only scheme {', '.join(correcting)} corrects adversaries "
                f"({code.name} does not; an aggregator: block makes an aggregable code robust, "
                "undefended: true runs it without defence)"
            )
        elif len(adversaries) > code.a:
            raise ConfigError(
                f"adversaries.workers: {len(adversaries)} adversaries but the code corrects "
                f"a = {code.a}"
            )
        overlap = sorted(set(adversaries) & set(persistent))
        if overlap:
            raise ConfigError(
                f"adversaries.workers: worker {overlap[0]} is also a persistent straggler"
            )
    liars = config.adversaries.plan().workers  # the unforeseen ones too
    if liars:
        # an omniscient attack forges from the honest messages the master holds when it
        # decodes: at least the code's fewest responders less the liars
        honest = honest_floor(code.min_responders(), len(liars))
        problem = config.adversaries.plan().attack().refusal(honest)
        if problem:
            raise ConfigError(
                f"adversaries.attack: {problem} ({code.name} decodes from "
                f"{code.min_responders()} responders, {len(liars)} of them liars)"
            )
    _check_caught(plan)


def corrects(code: GradientCode) -> bool:
    """Whether ``code`` corrects adversaries: its capability, with ``a > 0`` of them."""
    return bool(code.capabilities.corrects_adversaries and code.a > 0)


def names_liars(plan: Plan) -> bool:
    """Whether the run's master learns who lies: a code that corrects adversaries (``a > 0``)
    decodes, and names the liars it corrected (no aggregator in its place)."""
    return corrects(plan.code) and plan.config.aggregator is None


def _check_caught(plan: Plan) -> None:
    """``adversaries.caught: drop`` and ``adversaries.unforeseen`` need a code that names its
    liars; ``drop`` is refused when dropping the listed liars (all but those ``faults.spares``
    replace), with the persistent and silent stragglers, leaves the code unable to decode.
    Kills are not counted, as nowhere before the run (a run may be meant to stop)."""
    config, code = plan.config, plan.code
    adversaries = config.adversaries
    for key, given in (
        ("adversaries.caught", adversaries.caught == "drop"),
        ("adversaries.unforeseen", bool(adversaries.unforeseen)),
    ):
        if given and not names_liars(plan):
            how = (
                "an aggregator names none"
                if config.aggregator is not None
                else (f"{code.name} {code.params()} names none")
            )
            raise ConfigError(
                f"{key}: needs a code that names the liars it corrects "
                f"(capabilities.corrects_adversaries with a > 0, no aggregator; {how})"
            )
    overlap = sorted(set(adversaries.unforeseen) & set(config.stragglers.persistent))
    if overlap:
        raise ConfigError(
            f"adversaries.unforeseen: worker {overlap[0]} is also a persistent straggler"
        )
    if adversaries.caught != "drop":
        return
    faults = config.faults
    quiet = set(config.stragglers.persistent)
    if faults is not None:
        quiet |= {event.worker for event in faults.silent}
    dropped = len(adversaries.workers) - plan.spares  # spares take the places of the first
    for liars in itertools.combinations(adversaries.workers, max(dropped, 0)):
        lost = sorted(quiet | set(liars))
        if not alive_decodable(code, lost):
            raise ConfigError(
                f"adversaries.caught: drop would leave {code.name} {code.params()} unable to "
                f"decode without workers {lost} (liars {list(liars)} dropped once caught"
                f"{f', {plan.spares} spares' if plan.spares else ''}); keep them, or give "
                "the code more stragglers s or the run faults.spares"
            )


def _check_undefended(code: GradientCode, aggregator: Aggregator | None) -> None:
    """``ConfigError`` when a run said to be without defence has one."""
    if aggregator is not None:
        raise ConfigError(
            f"adversaries.undefended: the run has aggregator {aggregator.name}, a defence"
        )
    if corrects(code):
        raise ConfigError(
            f"adversaries.undefended: {code.name} corrects a = {code.a} adversaries, a defence"
        )


def _check_aggregator(plan: Plan) -> Aggregator | None:
    """The run's aggregator (``None``: none), refused in one line for a code that hands it no
    per-group values or too few of them."""
    config, code = plan.config.aggregator, plan.code
    if config is None:
        return None
    if not code.capabilities.aggregable:
        aggregable = [name for name in available() if scheme_class(name).capabilities.aggregable]
        raise ConfigError(
            f"aggregator: {config.name} replaces the sum of per-worker values, which only scheme "
            f"{', '.join(aggregable)} hand over ({code.name}, a {plan.topology} code, decodes "
            "its own)"
        )
    aggregator = config.build()
    count = code.aggregation_count()
    problem = aggregator.refusal(count)
    if problem:
        raise ConfigError(f"aggregator.params: {problem} ({code.name} hands it {count} values)")
    return aggregator


def _check_aggregated_liars(plan: Plan, aggregator: Aggregator, liars: Iterable[int]) -> None:
    """``ConfigError`` when the liars can corrupt more of the code's values than the
    aggregator tolerates (a vote that outvotes them leaves none corrupted)."""
    code = plan.code
    count, corrupted = code.aggregation_count(), code.aggregation_corrupted(liars)
    problem = aggregator.byzantine_refusal(count, corrupted)
    if problem:
        raise ConfigError(
            f"adversaries.workers: {problem} ({code.name} hands it {count} values, "
            f"{corrupted} of them from workers {sorted(set(liars))})"
        )


def check_world(plan: Plan, size: int) -> None:
    """``ConfigError`` unless the job has ``n + 1`` ranks (plus ``faults.spares``)."""
    if size != plan.world_size:
        what = plan.topology.nodes
        spares = f" + {plan.spares} spares" if plan.spares else ""
        raise ConfigError(
            f"scheme.params: {plan.config.scheme.name} has n = {plan.workers} {what}, so the "
            f"job needs n + 1{spares} = {plan.world_size} MPI ranks (got {size})"
        )


def collection_choice(plan: Plan) -> Choice:
    """How the run of ``plan`` collects its results (``gradcode.runfile.collection.choose``;
    every rank derives the same; ``build_plan`` has refused an explicit ``pull`` that is not
    possible)."""
    config = plan.config
    return choose_collection(
        config.runtime.collection,
        plan.code,
        links_stated=config.network is not None and config.network.links is not None,
        tolerant=config.faults is not None and config.faults.tolerate,
        adversaries=bool(config.adversaries.workers),
    )
