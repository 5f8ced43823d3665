"""The run YAML: parsed strictly into a ``RunConfig`` (unknown keys rejected, one-line errors
naming the key), after which the runtime trusts it.

Schema (defaults in brackets; ``|`` separates alternatives)::

    name: str                       # [file stem] label in summary.json
    output: path                    # [runs/<name>] per-run outputs; `--out` overrides
    seed: int >= 0                  # [0] seeds stragglers, adversaries, crc/gc-mmc draws
    iterations: int >= 1            # required
    data:                           # required: `prepared`, or `dataset` (+ options)
      prepared: path                # a directory written by `gradcode data prepare`
      dataset: str                  # or a data set prepared on the fly into `cache`
      variant: str                  # [the data set's default]
      seed: int                     # [the data set's default]
      options: {key: number}        # [{}] e.g. rows, features, test_rows
      raw: path | [path]            # [$GRADCODE_DATA_DIR/<data set>] input files
      cache: path                   # [$GRADCODE_CACHE_DIR or ~/.cache/gradcode/prepared]
      trim: bool                    # [true] drop the last N mod k training rows
      partition_seed: int | null    # [null] contiguous partitions; int: shuffled first
    model:
      kind: str                     # required: a gradcode.models model (logistic, linear,
                                    # the networks mlp and coded-reduce-cnn, or a plug-in's)
      params: {key: value}          # [{}] the model's parameters (mlp: hidden, classes,
                                    # dtype; coded-reduce-cnn: image, classes, dtype)
      l2: number >= 0 | "1/N"       # [0] objective (1/N) sum loss + l2 ||theta||^2
    scheme:
      name: str                     # a gradcode.codes scheme, or ring-allreduce
      params: {key: value}          # the scheme's parameters (ring-allreduce: n,
                                    # implementation: explicit | mpi)
    optimizer:
      kind: gd | nesterov | tandon  # [gd]
      step: number > 0 | {c1: number > 0, c2: number > 0}   # required; c1 / (t + c2)
    stragglers:                     # [none]
      model: none | fixed | random-set | master-worker | single-port
      params: {key: value}          # see gradcode.runfile.stragglers
      time_unit: number > 0         # [1.0] seconds per unit of the model's times
      spec: FILE                    # instead of model and params: a simulation spec's
                                    # (gradcode timing fit's output: seconds, time_unit 1);
                                    # its overhead, the runtime's own cost, is not injected
      persistent: [worker]          # [] workers that never answer
    adversaries:                    # [none] codes with capabilities.corrects_adversaries
      workers: [worker]             # workers whose every message is forged
      attack: str                   # [noise] a gradcode.attacks attack (built-in or plug-in)
      params: {key: value}          # [{}] the attack's parameters (noise: scale; reversed:
                                    # scale; constant: value; alie: z; ipm: epsilon)
      scale: number > 0             # the old form, without attack and params: noise of this
                                    # RMS relative to the message's RMS [1.0]
      iterations:                   # [every iteration] when the workers lie
        start: int >= 0             # [0] first iteration (0-based)
        stop: int >= 1 | null       # [null: to the end] first iteration not attacked
        every: int >= 1             # [1] attack every `every`-th iteration from start
      caught: keep | drop           # [keep] a worker the decoder names as a liar keeps
                                    # answering, or is dropped: a failed worker for the rest
                                    # of the run (a spare takes its place where there is one)
      unforeseen: [worker]          # [] workers that lie too, uncounted by the plan: more
                                    # liars than the code corrects, which the run must detect
      undefended: bool              # [false] a baseline: a code that corrects no
                                    # adversaries, no aggregator; the forgeries enter the
                                    # sum unchecked and the model is meant to be wrong
    aggregator:                     # [none: the code decodes] codes with
                                    # capabilities.aggregable (uncoded, ignore-stragglers, ...)
      name: str                     # a gradcode.aggregators aggregator (built-in or plug-in)
      params: {key: value}          # [{}] its parameters (trimmed-mean: beta; multi-krum: f, m;
                                    # geometric-median: tol, max_iter; bulyan: f)
      below_tolerance: stop | continue  # [stop] an iteration whose values are fewer than its
                                    # f/beta needs for the liars among them (workers dead,
                                    # dropped, DETOX groups lost) stops the run (exit 4), or
                                    # is aggregated anyway and logged (``below_tolerance``)
    bandwidth:                      # [none] receiver-side single-port emulation
      bytes_per_second: number > 0  # either this
      vector_seconds: number > 0    # or the seconds one full-length vector takes
      latency: number >= 0          # [0] seconds added to every message
    network:                        # [none] real links carry the messages (not with bandwidth)
      links:                        # [unknown] what the cluster's links were brought up with
        rate: rate                  # required: every node's link, each direction
        master_rate: rate           # [rate] the master's node link, each direction
        latency: duration           # [0ms] one way per message, like cluster up --latency
                                    # (1ms, 250us); on the emulated cluster the workflow sets
                                    # it on the run's nodes for the run
    checkpoint:
      every: int >= 0               # [0: only at the end] iterations between checkpoints
      keep: int >= 1                # [2] newest checkpoints kept
    log:
      metrics_every: int >= 0       # [1] evaluate loss and metric every K iterations (0: end)
      trajectory: bool              # [false] also save every iterate in trajectory.npy
    runtime:
      poll_interval: number > 0     # [0.0005] seconds idle ranks sleep between polls
      iteration_timeout: number > 0 # [600] seconds before an undecodable iteration fails
      distribution: auto | isend | scatter   # [auto] how the model reaches a flat or tree
                                    # code's workers (gradcode.train.distribution)
      collection: auto | push | pull   # [auto] how results reach the master: sent when
                                    # ready, or only those the code still needs, on request
                                    # (gradcode.runfile.collection)
      dilation: number >= 1         # [1] time dilation K: every wait K times longer, times
                                    # reported in virtual seconds (gradcode.dilation); on the
                                    # emulated cluster, the K of its `up --dilation`
      data: send | load             # [send] how a worker gets its partitions: rank 0 sends
                                    # them, or the worker reads the prepared data itself (a
                                    # file system every node shares: the emulated cluster's,
                                    # a cluster's shared home), so they never cross the links
    faults:                         # [none] workers that fail, not only straggle
      tolerate: bool                # [true] run on a fault-tolerant MPI (Open MPI's ULFM): a
                                    # worker that dies is a permanent straggler from then on
      kill: [{worker: int, iteration: int}]    # [] SIGKILL the worker's process from outside
                                    # once the log holds `iteration` iterations
                                    # (`gradcode train inject`)
      silent: [{worker: int, iteration: int}]  # [] the worker stops answering from
                                    # `iteration` on, its process alive (the emulated twin
                                    # of a kill)
      spares: int >= 0              # [0] extra ranks started idle; the master gives a
                                    # dead worker's partitions to one, which takes its place
                                    # (master-worker codes; needs tolerate)

A ``rate`` is written in ``gradcode.rate``'s grammar, the one ``gradcode cluster up --rate``
reads: ``<number><unit>`` with ``bit``, ``kbit``, ``mbit``, ``gbit`` (SI bits per second, as
tc spells them) or ``B/s``, ``kB/s``, ``MB/s``, ``GB/s`` (SI bytes per second), e.g.
``100mbit`` = ``12.5MB/s`` = 12.5e6 bytes per second. ``100mbps`` (bits to some tools, bytes
to tc) and a bare number are refused. ``LinksConfig`` keeps the rates as bytes per second
(``rate_text``: the canonical spelling, ``100mbit``).

``network`` says the messages travel over real links (an emulated cluster of network
namespaces with ``tc tbf`` rate limits, or real nodes): no communication delay is injected
(no single-port emulation, no per-message link sleep), only the compute part of the straggler
model; a straggler model whose communication part would be emulated is an error (``fixed``
with a non-zero ``comm``, ``master-worker`` with ``lambda2``/``t2``, ``single-port`` with a
non-zero ``tc``: the links replace it). ``links`` documents the link parameters for the
``shared-links`` timing model's prediction and for checks; it changes nothing the runtime does.

``faults`` (``gradcode.train.faults.failures``): with ``tolerate`` the job must run on an MPI that
survives a failed rank (``python -m gradcode.launch.ulfm -n N ...``; ``gradcode train command``
prints it); a worker that dies is detected by MPI's own error and treated as a permanent
straggler by the code's own rule, and a run that cannot go on stops with one line and resumes
from its checkpoint. ``kill`` and ``silent`` cause failures on purpose; ``silent`` workers must
leave the code decodable (``gradcode.runfile.plan``), while ``kill`` may exceed what the code
tolerates (the run then stops, which is what such a run shows). ``spares`` adds that many
ranks after the workers (the job has ``n + 1 + spares``); each waits idle until the master
hands it a dead worker's place (``gradcode.train.faults.spares``).

``adversaries.caught: drop`` (``gradcode.train.faults.caught``): a worker the decoder names as
a liar is a failed worker from the next iteration on (no more models to it, none of its
messages used; a spare of ``faults.spares`` takes its place); ``keep`` (the default) lets it
answer on. ``adversaries.unforeseen`` lists workers that lie as ``workers`` do but which the
plan does not count against the code's ``a``: the attacker a run file did not foresee, which
the run must detect (a decoding failure and a non-zero exit) or cannot (the code's limits).

Worker indices (``persistent``, ``adversaries.workers``, ``faults``) are 0-based code workers
(MPI rank minus one). The scheme, its parameters, the straggler model and the world size are
checked against each other in ``gradcode.runfile.plan``.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from gradcode.aggregators import Aggregator
from gradcode.aggregators import available as available_aggregators
from gradcode.aggregators import build as build_aggregator
from gradcode.attacks import DEFAULT_ATTACK, AttackPlan
from gradcode.attacks import available as available_attacks
from gradcode.dilation import check_factor
from gradcode.duration import Duration, DurationError
from gradcode.errors import UserError
from gradcode.extras import MissingExtra
from gradcode.models import Model
from gradcode.models import available as available_models
from gradcode.models import build as build_model
from gradcode.rate import Rate, RateError
from gradcode.timing import model_from_spec
from gradcode.yamlfile import read_yaml

_MISSING = object()


class ConfigError(UserError):
    """A bad run configuration; the message is one line naming the key."""


class _Section:
    """Strict reader of one mapping of the YAML: every key must be taken or is an error."""

    def __init__(self, value: Any, path: str, allowed: tuple[str, ...]) -> None:
        where = path or "the run file"
        if not isinstance(value, Mapping):
            raise ConfigError(f"{where}: must be a mapping (got {_show(value)})")
        self.data, self.path = dict(value), path
        bad = [key for key in self.data if not isinstance(key, str)]
        if bad:
            raise ConfigError(f"{self.key(str(bad[0]))}: keys must be strings")
        unknown = [key for key in self.data if key not in allowed]
        if unknown:
            raise ConfigError(
                f"{self.key(unknown[0])}: unknown key (allowed: {', '.join(allowed)})"
            )

    def key(self, name: str) -> str:
        return f"{self.path}.{name}" if self.path else name

    def has(self, name: str) -> bool:
        return self.data.get(name) is not None

    def raw(self, name: str, default: Any = _MISSING) -> Any:
        value = self.data.get(name)
        if value is None:
            if default is _MISSING:
                raise ConfigError(f"{self.key(name)}: missing")
            return default
        return value

    def integer(self, name: str, default: Any = _MISSING, *, minimum: int = 0) -> Any:
        value = self.raw(name, default)
        if value is default and default is not _MISSING:
            return value
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{self.key(name)}: must be an integer (got {_show(value)})")
        if value < minimum:
            raise ConfigError(f"{self.key(name)}: must be >= {minimum} (got {value})")
        return value

    def number(self, name: str, default: Any = _MISSING, *, positive: bool = False) -> Any:
        value = self.raw(name, default)
        if value is default and default is not _MISSING:
            return value
        return _number(self.key(name), value, positive=positive)

    def string(self, name: str, default: Any = _MISSING, choices: tuple[str, ...] = ()) -> Any:
        value = self.raw(name, default)
        if value is default and default is not _MISSING:
            return value
        if not isinstance(value, str) or not value:
            raise ConfigError(f"{self.key(name)}: must be a non-empty string (got {_show(value)})")
        if choices and value not in choices:
            raise ConfigError(
                f"{self.key(name)}: must be one of {', '.join(choices)} (got {value!r})"
            )
        return value

    def boolean(self, name: str, default: bool) -> bool:
        value = self.raw(name, default)
        if not isinstance(value, bool):
            raise ConfigError(f"{self.key(name)}: must be true or false (got {_show(value)})")
        return value

    def mapping(self, name: str) -> dict[str, Any]:
        value = self.raw(name, {})
        if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
            raise ConfigError(f"{self.key(name)}: must be a mapping (got {_show(value)})")
        return dict(value)

    def workers(self, name: str) -> tuple[int, ...]:
        value = self.raw(name, [])
        if not isinstance(value, list):
            raise ConfigError(f"{self.key(name)}: must be a list of worker indices")
        for index, item in enumerate(value):
            if isinstance(item, bool) or not isinstance(item, int) or item < 0:
                raise ConfigError(
                    f"{self.key(name)}[{index}]: must be a worker index >= 0 (got {_show(item)})"
                )
        if len(set(value)) != len(value):
            raise ConfigError(f"{self.key(name)}: lists a worker twice")
        return tuple(sorted(value))

    def section(self, name: str, allowed: tuple[str, ...]) -> _Section:
        return _Section(self.raw(name, {}), self.key(name), allowed)


def _number(path: str, value: Any, *, positive: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{path}: must be a number (got {_show(value)})")
    if not math.isfinite(value) or value < 0 or (positive and value == 0):
        raise ConfigError(f"{path}: must be a finite number {'> 0' if positive else '>= 0'}")
    return float(value)


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


@dataclass(frozen=True)
class DataConfig:
    prepared: str | None = None
    dataset: str | None = None
    variant: str | None = None
    seed: int | None = None
    options: dict[str, Any] = field(default_factory=dict)
    raw: tuple[str, ...] = ()
    cache: str | None = None
    trim: bool = True
    partition_seed: int | None = None


@dataclass(frozen=True)
class ModelConfig:
    kind: str
    #: a number, or None with ``l2_per_row`` for "1/N"
    l2: float = 0.0
    l2_per_row: bool = False
    #: the model's constructor parameters (``model.params``)
    params: dict[str, Any] = field(default_factory=dict)

    def l2_value(self, rows: int) -> float:
        return 1.0 / rows if self.l2_per_row else self.l2

    def build(self) -> Model:
        """The model object (validated; a bad parameter is a one-line error)."""
        return build_model(self.kind, self.params)


@dataclass(frozen=True)
class SchemeConfig:
    name: str
    params: dict[str, Any]


@dataclass(frozen=True)
class OptimizerConfig:
    kind: str
    step: float | None = None
    c1: float | None = None
    c2: float | None = None


@dataclass(frozen=True)
class StragglerConfig:
    model: str = "none"
    params: dict[str, Any] = field(default_factory=dict)
    time_unit: float = 1.0
    persistent: tuple[int, ...] = ()
    #: the simulation spec the model and parameters came from (``stragglers.spec``)
    spec: str | None = None


@dataclass(frozen=True)
class AdversaryConfig:
    """The ``adversaries:`` block: ``attack`` with ``params`` at ``workers`` in iterations
    ``start, start + every, ...`` before ``stop``. The old form ``{workers, scale}`` is noise
    with ``params = {scale: ...}``; ``scale`` stays for it (and its fingerprint)."""

    workers: tuple[int, ...] = ()
    scale: float = 1.0
    attack: str = DEFAULT_ATTACK
    params: dict[str, Any] = field(default_factory=dict)
    start: int = 0
    stop: int | None = None
    every: int = 1
    #: what becomes of a worker the decoder names as a liar (``CAUGHT_POLICIES``)
    caught: str = "keep"
    #: workers that lie too, which the plan does not count against the code's ``a``
    unforeseen: tuple[int, ...] = ()
    #: a baseline without defence (no correcting code, no aggregator): the run is meant to
    #: be spoiled, which a plain ``adversaries`` block on such a code refuses to let happen
    undefended: bool = False

    def plan(self) -> AttackPlan:
        """Who attacks when, and with which attack (``gradcode.attacks.AttackPlan``): the
        planned liars and the unforeseen ones alike."""
        params = self.params if self._new_form() else {"scale": self.scale}
        liars = tuple(sorted({*self.workers, *self.unforeseen}))
        return AttackPlan(liars, self.attack, dict(params), self.start, self.stop, self.every)

    def _attack_fields(self) -> AdversaryConfig:
        """This block without the fields that say nothing of the attack itself."""
        return replace(self, caught="keep", unforeseen=())

    def _new_form(self) -> bool:
        return self._attack_fields() != AdversaryConfig(self.workers, self.scale)

    def fingerprint_fields(self) -> dict[str, Any]:
        """What enters the run's fingerprint: the old form's two fields alone when the block
        is in the old form, so checkpoints written before attacks existed still resume.
        ``caught`` never enters (like ``faults``, it decides who answers, not what an exact
        decoding computes), ``unforeseen`` only when it names a worker (blocks written
        before it existed keep their fingerprint)."""
        unforeseen = {"unforeseen": list(self.unforeseen)} if self.unforeseen else {}
        if not self._new_form():
            return {"workers": list(self.workers), "scale": self.scale} | unforeseen
        fields = asdict(self)
        del fields["caught"], fields["unforeseen"]
        if not self.undefended:  # absent before the key existed: those checkpoints resume
            del fields["undefended"]
        return fields | unforeseen


@dataclass(frozen=True)
class AggregatorConfig:
    """The ``aggregator:`` block: a robust aggregator (``gradcode.aggregators``) the master
    applies to the code's per-group values in place of decoding their sum."""

    name: str
    params: dict[str, Any] = field(default_factory=dict)
    #: an iteration below the aggregator's tolerance stops the run or goes on, logged
    #: (``BELOW_TOLERANCE_POLICIES``, ``gradcode.train.tolerance``)
    below_tolerance: str = "stop"

    def build(self) -> Aggregator:
        """The aggregator object (validated; a bad parameter is a one-line error)."""
        return build_aggregator(self.name, self.params)


@dataclass(frozen=True)
class BandwidthConfig:
    """A single-port receiver: ``bytes_per_second``, or ``vector_seconds`` for one full-length
    vector (``8 l`` bytes), plus ``latency`` per message. Ports charge a message's payload;
    the runtime's small header rides free."""

    bytes_per_second: float | None = None
    vector_seconds: float | None = None
    latency: float = 0.0

    def rate(self, features: int) -> float:
        """Bytes per second for a gradient of ``features`` floats."""
        if self.bytes_per_second is not None:
            return self.bytes_per_second
        assert self.vector_seconds is not None
        return features * 8 / self.vector_seconds


@dataclass(frozen=True)
class LinksConfig:
    """The links a cluster was brought up with: ``rate`` bytes per second for every node's
    link (each direction), ``master_rate`` for the master's node, ``latency`` seconds one way
    per message. ``rate_text``/``master_rate_text``: their canonical spelling (``100mbit``,
    ``gradcode.rate.Rate``)."""

    rate: float
    master_rate: float
    latency: float = 0.0
    rate_text: str = ""
    master_rate_text: str = ""
    #: ``gradcode.duration``'s spelling of ``latency`` (``1ms``)
    latency_text: str = "0ms"


@dataclass(frozen=True)
class NetworkConfig:
    """Real links: nothing of the communication is emulated; ``links``: their parameters
    (``None``: not stated)."""

    links: LinksConfig | None = None


@dataclass(frozen=True)
class CheckpointConfig:
    every: int = 0
    keep: int = 2


@dataclass(frozen=True)
class LogConfig:
    metrics_every: int = 1
    trajectory: bool = False


#: ``runtime.distribution``: how the model reaches the workers (``gradcode.train.distribution``)
DISTRIBUTION_WAYS = ("auto", "isend", "scatter")
#: ``runtime.collection``: how results reach the master (``gradcode.runfile.collection``)
COLLECTION_WAYS = ("auto", "push", "pull")


@dataclass(frozen=True)
class RuntimeConfig:
    poll_interval: float = 0.0005
    iteration_timeout: float = 600.0
    distribution: str = "auto"
    collection: str = "auto"
    #: time dilation (``gradcode.dilation``): every wait K times longer, every time reported
    #: in virtual seconds; on the emulated cluster, its ``up --dilation``
    dilation: float = 1.0
    #: how a worker gets its partitions (``DATA_DELIVERY``): sent by rank 0, or loaded by the
    #: worker from the prepared data (a shared file system)
    data: str = "send"


#: ``runtime.data``'s choices
DATA_DELIVERY = ("send", "load")


@dataclass(frozen=True)
class FaultEvent:
    """Worker ``worker`` fails at iteration ``iteration`` (killed, or silent from then on)."""

    worker: int
    iteration: int


#: how ``faults.lose_node`` loses a node: every process on it killed, or its link down
NODE_LOSS = ("kill", "link")


@dataclass(frozen=True)
class NodeLoss:
    """The node of worker ``worker`` is lost for good at iteration ``iteration``: every
    process on it killed (``how`` "kill") or its link down (``how`` "link"). Only the emulated
    cluster can do it (``gradcode cluster lose --rank``; the workflow's rule train_lost)."""

    worker: int
    iteration: int
    how: str


@dataclass(frozen=True)
class FaultsConfig:
    tolerate: bool = True
    kill: tuple[FaultEvent, ...] = ()
    silent: tuple[FaultEvent, ...] = ()
    spares: int = 0
    lose_node: NodeLoss | None = None

    def lost_workers(self) -> list[int]:
        """Workers that stop answering for good: killed (but for the first ``spares`` kills,
        whose places spare ranks take), silent, or on the lost node, sorted."""
        return self._with(self.kill[self.spares :])  # kill is in iteration order

    def failing_workers(self) -> list[int]:
        """Every worker whose failure the run causes: killed, silent or on the lost node."""
        return self._with(self.kill)

    def _with(self, killed: tuple[FaultEvent, ...]) -> list[int]:
        """The workers of ``killed``, the silent ones and the lost node's, sorted."""
        workers = {event.worker for event in (*killed, *self.silent)}
        if self.lose_node is not None:
            workers.add(self.lose_node.worker)
        return sorted(workers)

    def silent_from(self, worker: int) -> int | None:
        """The iteration from which ``worker`` stops answering (``None``: never)."""
        found = [event.iteration for event in self.silent if event.worker == worker]
        return min(found) if found else None


@dataclass(frozen=True)
class RunConfig:
    name: str
    output: str | None
    seed: int
    iterations: int
    data: DataConfig
    model: ModelConfig
    scheme: SchemeConfig
    optimizer: OptimizerConfig
    stragglers: StragglerConfig
    adversaries: AdversaryConfig
    bandwidth: BandwidthConfig | None
    checkpoint: CheckpointConfig
    log: LogConfig
    runtime: RuntimeConfig
    network: NetworkConfig | None = None
    faults: FaultsConfig | None = None
    aggregator: AggregatorConfig | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def lost_workers(self) -> list[int]:
        """Workers that never answer from some iteration on: persistent stragglers and the
        faults' (``FaultsConfig.lost_workers``), sorted."""
        lost = set(self.stragglers.persistent)
        if self.faults is not None:
            lost |= set(self.faults.lost_workers())
        return sorted(lost)

    def fingerprint(self) -> str:
        """sha256 of everything that determines the trajectory (not iterations or outputs),
        so a checkpoint is only resumed by the configuration that wrote it."""
        relevant = {
            key: self.adversaries.fingerprint_fields()
            if key == "adversaries"
            else _aggregator_fingerprint(value)
            if key == "aggregator"
            else value
            for key, value in self.as_dict().items()
            # a run without an aggregator keeps the fingerprint it had before they existed
            if not (key == "aggregator" and value is None)
            and key
            not in (
                "name",
                "output",
                "iterations",
                "checkpoint",
                "log",
                "runtime",
                "network",
                "faults",
            )
        }
        if not self.model.params:  # a run without them keeps the fingerprint it had before
            relevant["model"] = {k: v for k, v in relevant["model"].items() if k != "params"}
        text = json.dumps(relevant, sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()


TOP_KEYS = (
    "name",
    "output",
    "seed",
    "iterations",
    "data",
    "model",
    "scheme",
    "optimizer",
    "stragglers",
    "adversaries",
    "aggregator",
    "bandwidth",
    "network",
    "checkpoint",
    "log",
    "runtime",
    "faults",
)


def load_config(path: str | os.PathLike[str]) -> RunConfig:
    """Read and validate the run YAML at ``path``; ``ConfigError`` (one line) otherwise."""
    path = Path(path)
    raw = read_yaml(path, ConfigError)
    return parse_config(raw, default_name=path.stem, origin=str(path))


def parse_config(raw: Any, *, default_name: str = "run", origin: str | None = None) -> RunConfig:
    """Validate the mapping ``raw`` (a parsed run YAML; ``origin``: its file, which a bad
    rate's message names).

    Paths may use ``~`` and ``$VARIABLES``; relative ones are relative to the working
    directory (where the job is started), like the default output ``runs/<name>``.
    """
    top = _Section(raw if raw is not None else {}, "", TOP_KEYS)
    name = top.string("name", default_name)
    output = top.string("output", None)
    resolve = _expand
    return RunConfig(
        name=name,
        output=resolve(output),
        seed=top.integer("seed", 0),
        iterations=top.integer("iterations", minimum=1),
        data=_data(top, resolve),
        model=_model(top),
        scheme=_scheme(top),
        optimizer=_optimizer(top),
        stragglers=_stragglers(top),
        adversaries=_adversaries(top),
        bandwidth=_bandwidth(top),
        checkpoint=_checkpoint(top),
        log=_log(top),
        runtime=_runtime(top),
        network=_network(top, origin),
        faults=_faults(top),
        aggregator=_aggregator(top),
    )


def _expand(value: str | None) -> str | None:
    return None if value is None else os.path.expandvars(os.path.expanduser(value))


def _data(top: _Section, resolve) -> DataConfig:
    if not top.has("data"):
        raise ConfigError("data: missing (give data.prepared or data.dataset)")
    keys = ("prepared", "dataset", "variant", "seed", "options", "raw", "cache", "trim")
    data = top.section("data", (*keys, "partition_seed"))
    if data.has("prepared") == data.has("dataset"):
        raise ConfigError("data: give exactly one of data.prepared and data.dataset")
    if data.has("prepared"):
        extra = [k for k in ("variant", "seed", "options", "raw", "cache") if data.has(k)]
        if extra:
            raise ConfigError(f"data.{extra[0]}: only with data.dataset (data.prepared is given)")
    raw = data.raw("raw", [])
    raws = [raw] if isinstance(raw, str) else raw
    if not isinstance(raws, list) or not all(isinstance(r, str) and r for r in raws):
        raise ConfigError("data.raw: must be a path or a list of paths")
    partition_seed = data.integer("partition_seed", None)
    return DataConfig(
        prepared=resolve(data.string("prepared", None)),
        dataset=data.string("dataset", None),
        variant=data.string("variant", None),
        seed=data.integer("seed", None),
        options=data.mapping("options"),
        raw=tuple(resolve(r) for r in raws),
        cache=resolve(data.string("cache", None)),
        trim=data.boolean("trim", True),
        partition_seed=partition_seed,
    )


def _model(top: _Section) -> ModelConfig:
    model = top.section("model", ("kind", "l2", "params"))
    kind, params = model.string("kind"), model.mapping("params")
    l2 = model.raw("l2", 0.0)
    if l2 == "1/N":
        config = ModelConfig(kind, 0.0, l2_per_row=True, params=params)
    elif isinstance(l2, str):
        raise ConfigError(f"model.l2: must be a number >= 0 or the string 1/N (got {l2!r})")
    else:
        config = ModelConfig(kind, _number("model.l2", l2), params=params)
    try:  # the model's name and parameters, checked here where the key is known
        config.build()
    except UserError as error:
        known = kind in available_models() and not isinstance(error, MissingExtra)
        raise ConfigError(f"{'model.params' if known else 'model.kind'}: {error}") from None
    return config


def _scheme(top: _Section) -> SchemeConfig:
    scheme = top.section("scheme", ("name", "params"))
    return SchemeConfig(scheme.string("name"), scheme.mapping("params"))


def _optimizer(top: _Section) -> OptimizerConfig:
    optimizer = top.section("optimizer", ("kind", "step"))
    kind = optimizer.string("kind", "gd", choices=("gd", "nesterov", "tandon"))
    step = optimizer.raw("step")
    if isinstance(step, Mapping):
        schedule = _Section(step, "optimizer.step", ("c1", "c2"))
        return OptimizerConfig(
            kind,
            c1=schedule.number("c1", positive=True),
            c2=schedule.number("c2", positive=True),
        )
    return OptimizerConfig(kind, step=_number("optimizer.step", step, positive=True))


def _stragglers(top: _Section) -> StragglerConfig:
    section = top.section("stragglers", ("model", "params", "time_unit", "persistent", "spec"))
    if section.has("spec"):
        spec = section.string("spec")
        if section.has("model") or section.has("params"):
            raise ConfigError(
                f"{section.key('spec')}: gives the model and its parameters; drop "
                f"{section.key('model')} and {section.key('params')}"
            )
        model, params = _spec_model(spec, section.key("spec"))
        return StragglerConfig(
            model=model,
            params=params,
            time_unit=section.number("time_unit", 1.0, positive=True),
            persistent=section.workers("persistent"),
            spec=spec,
        )
    return StragglerConfig(
        model=section.string("model", "none"),
        params=section.mapping("params"),
        time_unit=section.number("time_unit", 1.0, positive=True),
        persistent=section.workers("persistent"),
    )


def _spec_model(path: str, key: str) -> tuple[str, dict[str, Any]]:
    """The model and parameters of simulation spec ``path``, without ``overhead``: a fitted
    spec's measure of what the runtime itself costs, which a run has of its own."""
    data = read_yaml(path, ConfigError)
    if not isinstance(data, Mapping) or not isinstance(data.get("model"), str):
        raise ConfigError(f"{key}: {path} is not a simulation spec (no model)")
    params = data.get("parameters")
    if not isinstance(params, Mapping):
        raise ConfigError(f"{key}: {path} has no parameters mapping")
    kept = {k: v for k, v in params.items() if k != "overhead"}
    try:  # here, where the file is known: a bad rate (or any value) names it
        model_from_spec(data["model"], kept)
    except ValueError as error:
        raise ConfigError(f"{key}: {path}: {' '.join(str(error).split())}") from None
    return data["model"], kept


#: ``adversaries.caught``: a caught liar keeps answering, or leaves the run as a failed worker
CAUGHT_POLICIES = ("keep", "drop")


def _adversaries(top: _Section) -> AdversaryConfig:
    keys = ("workers", "scale", "attack", "params", "iterations", "caught", "unforeseen")
    section = top.section("adversaries", (*keys, "undefended"))
    workers = section.workers("workers")
    unforeseen = section.workers("unforeseen")
    both = sorted(set(workers) & set(unforeseen))
    if both:
        raise ConfigError(
            f"adversaries.unforeseen: worker {both[0]} is also in adversaries.workers"
        )
    if section.has("scale") and (section.has("attack") or section.has("params")):
        raise ConfigError(
            "adversaries.scale: the old form's noise scale; with attack or params give the "
            "attack's parameters in params (noise: params: {scale: ...})"
        )
    scale = section.number("scale", 1.0, positive=True)
    attack = section.string("attack", DEFAULT_ATTACK)
    params = section.mapping("params")
    schedule = section.section("iterations", ("start", "stop", "every"))
    start = schedule.integer("start", 0)
    stop = schedule.integer("stop", None, minimum=1)
    if stop is not None and stop <= start:
        raise ConfigError(
            f"adversaries.iterations.stop: must be > start (got start={start}, stop={stop})"
        )
    config = AdversaryConfig(
        workers=workers,
        scale=scale,
        attack=attack,
        params=params,
        start=start,
        stop=stop,
        every=schedule.integer("every", 1, minimum=1),
        caught=section.string("caught", "keep", choices=CAUGHT_POLICIES),
        unforeseen=unforeseen,
        undefended=section.boolean("undefended", False),
    )
    try:  # the attack's name and parameters, checked here where the key is known
        config.plan().attack()
    except UserError as error:
        key = "adversaries.params" if attack in available_attacks() else "adversaries.attack"
        raise ConfigError(f"{key}: {error}") from None
    return config


#: ``aggregator.below_tolerance``: stop the run, or aggregate anyway and log the iteration
BELOW_TOLERANCE_POLICIES = ("stop", "continue")


def _aggregator_fingerprint(value: Any) -> Any:
    """The ``aggregator`` block as it enters the fingerprint: without ``below_tolerance``
    (like ``adversaries.caught``, it decides whether a run goes on, not what an iteration
    computes; blocks written before it existed keep their fingerprint)."""
    if not isinstance(value, dict):
        return value
    return {key: item for key, item in value.items() if key != "below_tolerance"}


def _aggregator(top: _Section) -> AggregatorConfig | None:
    if not top.has("aggregator"):
        return None
    section = top.section("aggregator", ("name", "params", "below_tolerance"))
    name = section.string("name")
    config = AggregatorConfig(
        name=name,
        params=section.mapping("params"),
        below_tolerance=section.string("below_tolerance", "stop", choices=BELOW_TOLERANCE_POLICIES),
    )
    try:  # the aggregator's name and parameters, checked here where the key is known
        config.build()
    except UserError as error:
        key = "aggregator.params" if name in available_aggregators() else "aggregator.name"
        raise ConfigError(f"{key}: {error}") from None
    return config


def _bandwidth(top: _Section) -> BandwidthConfig | None:
    if not top.has("bandwidth"):
        return None
    section = top.section("bandwidth", ("bytes_per_second", "vector_seconds", "latency"))
    if section.has("bytes_per_second") == section.has("vector_seconds"):
        raise ConfigError("bandwidth: give exactly one of bytes_per_second and vector_seconds")
    return BandwidthConfig(
        bytes_per_second=section.number("bytes_per_second", None, positive=True),
        vector_seconds=section.number("vector_seconds", None, positive=True),
        latency=section.number("latency", 0.0),
    )


def _network(top: _Section, origin: str | None) -> NetworkConfig | None:
    if not top.has("network"):
        return None
    if top.has("bandwidth"):
        raise ConfigError(
            "network: and bandwidth: exclude each other (network: real links carry the "
            "messages; bandwidth: emulates them on one host); give one"
        )
    section = top.section("network", ("links",))
    if not section.has("links"):
        return NetworkConfig()
    links = section.section("links", ("rate", "master_rate", "latency"))
    where = f"{origin}: " if origin else ""
    try:
        rate = Rate.parse(links.raw("rate"), f"{where}network.links.rate")
        master = Rate.parse(links.raw("master_rate", rate), f"{where}network.links.master_rate")
        latency = Duration.parse(links.raw("latency", 0), f"{where}network.links.latency")
    except (RateError, DurationError) as error:
        raise ConfigError(str(error)) from None
    return NetworkConfig(
        LinksConfig(
            rate=rate.bytes_per_second,
            master_rate=master.bytes_per_second,
            latency=latency.seconds,
            rate_text=str(rate),
            master_rate_text=str(master),
            latency_text=str(latency),
        )
    )


def _checkpoint(top: _Section) -> CheckpointConfig:
    section = top.section("checkpoint", ("every", "keep"))
    return CheckpointConfig(
        every=section.integer("every", 0), keep=section.integer("keep", 2, minimum=1)
    )


def _log(top: _Section) -> LogConfig:
    section = top.section("log", ("metrics_every", "trajectory"))
    return LogConfig(
        metrics_every=section.integer("metrics_every", 1),
        trajectory=section.boolean("trajectory", False),
    )


def _runtime(top: _Section) -> RuntimeConfig:
    section = top.section(
        "runtime",
        ("poll_interval", "iteration_timeout", "distribution", "collection", "dilation", "data"),
    )
    try:
        dilation = check_factor(section.raw("dilation", 1.0), section.key("dilation"))
    except ValueError as error:
        raise ConfigError(str(error)) from None
    return RuntimeConfig(
        poll_interval=section.number("poll_interval", 0.0005, positive=True),
        iteration_timeout=section.number("iteration_timeout", 600.0, positive=True),
        distribution=section.string("distribution", "auto", choices=DISTRIBUTION_WAYS),
        collection=section.string("collection", "auto", choices=COLLECTION_WAYS),
        dilation=dilation,
        data=section.string("data", "send", choices=DATA_DELIVERY),
    )


def _faults(top: _Section) -> FaultsConfig | None:
    if not top.has("faults"):
        return None
    section = top.section("faults", ("tolerate", "kill", "silent", "spares", "lose_node"))
    kill = _fault_events(section, "kill")
    silent = _fault_events(section, "silent")
    both = sorted({e.worker for e in kill} & {e.worker for e in silent})
    if both:
        raise ConfigError(f"faults.silent: worker {both[0]} is also in faults.kill")
    tolerate = section.boolean("tolerate", True)
    if kill and not tolerate:
        raise ConfigError("faults.kill: needs faults.tolerate (a killed rank ends the job)")
    spares = section.integer("spares", 0, minimum=0)
    if spares and not tolerate:
        raise ConfigError("faults.spares: needs faults.tolerate (only a survivor can replace)")
    lose_node = _node_loss(section)
    if lose_node is not None:
        if not tolerate:
            raise ConfigError("faults.lose_node: needs faults.tolerate (a lost rank ends the job)")
        if lose_node.worker in {e.worker for e in (*kill, *silent)}:
            raise ConfigError(
                f"faults.lose_node: worker {lose_node.worker} is also in faults.kill or "
                "faults.silent"
            )
        if spares:
            # a spare would be handed the lost worker's partitions by the order of kills, which
            # a node loss (timed by the cluster, not by gradcode train inject) is outside of
            raise ConfigError("faults.lose_node: not with faults.spares (spares replace kills)")
    return FaultsConfig(
        tolerate=tolerate, kill=kill, silent=silent, spares=spares, lose_node=lose_node
    )


def _node_loss(section: _Section) -> NodeLoss | None:
    value = section.raw("lose_node", None)
    if value is None:
        return None
    entry = _Section(value, section.key("lose_node"), ("worker", "iteration", "how"))
    worker = entry.integer("worker", minimum=0)
    iteration = entry.integer("iteration", minimum=1)
    how = entry.string("how", choices=NODE_LOSS)
    return NodeLoss(worker, iteration, how)


def _fault_events(section: _Section, name: str) -> tuple[FaultEvent, ...]:
    value = section.raw(name, [])
    if not isinstance(value, list):
        raise ConfigError(f"{section.key(name)}: must be a list of {{worker, iteration}}")
    events = []
    for index, item in enumerate(value):
        entry = _Section(item, f"{section.key(name)}[{index}]", ("worker", "iteration"))
        events.append(FaultEvent(entry.integer("worker"), entry.integer("iteration")))
    workers = [event.worker for event in events]
    if len(set(workers)) != len(workers):
        raise ConfigError(f"{section.key(name)}: lists a worker twice")
    return tuple(sorted(events, key=lambda e: (e.iteration, e.worker)))
