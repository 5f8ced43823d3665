"""Deterministic links (``"shared-links"``): what real, rate-limited links predict for a run
on a cluster whose nodes each have a link of ``rate`` bytes per second in each direction (the
master's node ``master_rate``), like the emulated cluster's ``tc tbf`` limits.

Communication. A message of ``b`` bytes from a node to its receiver is a flow through two
links: the sender's (``rate`` of the sender) and the receiver's (``master_rate`` at the master,
``rate`` at a tree parent). Flows that share a receiver's link share its rate fairly
(max-min: every active flow gets an equal share, except that none gets more than its own
sender's link, and what a capped flow leaves is shared by the others), as TCP flows through
one bottleneck do, ideally; each finishes when its last byte is through, and is received
``latency`` later (one way, per message). So one message on idle links takes

    ``latency + b / min(rate, master_rate)``                       (``message_time``)

and ``q`` messages of ``b`` bytes that start together at the master finish together at
``latency + q b / master_rate`` when ``master_rate / q <= rate`` (incast: they share the
master's port), or at ``latency + b / rate`` when the master's link has room for them all. A
node sends its own messages one after the other (GC-MMC's several messages).

Messages. A result of a code with communication reduction ``m`` is ``ceil(l / m)`` float64s
(``l = features``) plus ``header_bytes`` (the MPI runtime adds a header of ``8 H`` bytes,
``gradcode.train.protocol``); the model (``download``) is ``8 (l + 1)`` bytes.

Timeline of one iteration (one trial):

1. with ``download`` (default) the master sends the model to its children at once (they share
   its link) and a tree node forwards it to its own children on receipt; a node starts
   computing when its copy arrived (without ``download``: at 0). A flat or tree code's model
   may go the runtime's ``scatter`` way instead (``distribution``,
   ``gradcode.train.distribution``): chunk ``j`` (``1 / n`` of the model) to worker (tree
   node) ``j`` through the master's link, forwarded piece by piece to every other worker as it
   comes, not down the tree: pipelined, every worker holds the model ``2 latency`` plus the
   longest of the chunks' time through the master's link, ``(n - 1) / n`` of the model out
   through a forwarder's link and the whole model in through a worker's (at the slowest
   worker's rate) after it left; the first pieces' start, the forwarders' polling and the
   runtime's covering of a slow forwarder are not modelled (measured, n = 8, l = 125,000 at
   100/200 Mbit/s: 0.087-0.113 s, this gives 0.084);
2. computation as paper 001's model (``single_port``): ``d_i (a + Exp(mu))`` for a node with
   ``d_i`` of the ``data`` points (``mu`` omitted: deterministic ``a`` per point);
3. master-worker codes: every message flows to the master once ready, the code's
   ``completion_times`` on the reception times decides; trees: the same at every parent
   (``children_completion_times``), a parent's message ready when it has reduced and
   computed; rings (Ring-AllReduce): ``2 (N - 1)`` steps after the slowest worker, each a
   chunk of ``8 l / N`` bytes over every worker's link at once (one flow per link and
   direction), ``latency + 8 l / (N rate)`` per step (the slowest link's rate).

Collection (``collection``, the runtime's ``runtime.collection``, ``gradcode.runfile.collection``)
of a flat code's results: ``push`` (default) as in 3.; ``pull``: a ready message's worker
sends only a notice (no bytes on the links), received ``latency`` later; the master pulls by
notice (ties in key order) what the code's ``CompletionRule`` needs, in every group the first
``needed`` (``Pulls``), or without a rule until those pulled are decodable (``is_decodable``,
``GreedyPulls``), and no others (their payloads never travel, ``inf``); in a tree every parent
pulls its children's the same way, by its declared rule (``children_rule``) or else until
those pulled are decodable (``children_decodable``);
a pulled payload leaves its worker ``latency`` after its notice arrived (the PULL going back),
shares the master's link with the other pulled payloads only (a worker's pulled payloads one
after the other; one it is never asked for holds up none), and is received ``latency`` after
its last byte. So a message alone takes ``3 latency + b / min(rate, master_rate)``, and only
the results the decoder uses cross the master's port.

The event-driven fair-share schedule (``fair_finish``) takes ``O(messages^2)`` per receiver
and trial (0.5 s a trial for 1,000 messages in Python, about a minute for 10,000);
``collect`` runs it for all trials at once (``fair_finish_trials``: one numpy step per event,
over the trials). Where a receiver's flows have one size and one cap and no flow waits for
another (every flat code with one message per worker and one rate, every tree parent),
``equal_flows_finish`` runs the same schedule in ``2 messages`` steps of fewer operations,
which is what makes 10,000 workers simulable; ``collect`` takes it whenever it applies.

``rate`` and ``master_rate`` are rates in ``gradcode.rate``'s grammar (``"100mbit"``,
``"12.5MB/s"``) or numbers of bytes per second (``rate_bytes``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from gradcode.codes.base import GradientCode
from gradcode.codes.ring import RingCode
from gradcode.codes.tree import MASTER, TreeCode
from gradcode.rate import Rate

# the ``as`` imports: where benchmarks, notebooks and measurement pages import them from
from gradcode.timing.collection import GreedyPulls as GreedyPulls
from gradcode.timing.collection import Pulls, collect
from gradcode.timing.distributions import PerWorker, ShiftedExponential
from gradcode.timing.fair_share import equal_flows_finish as equal_flows_finish
from gradcode.timing.fair_share import fair_finish, message_time
from gradcode.timing.fair_share import fair_shares as fair_shares
from gradcode.timing.model import (
    Draws,
    Outcome,
    TimingModel,
    per_worker,
    received_by,
    work_fractions,
)
from gradcode.topology import TopologyVisitor, topology_of

#: bytes of a float64
FLOAT = 8


def rate_bytes(path: str, value: Any) -> float:
    """Bytes per second of a rate parameter: a rate in ``gradcode.rate``'s grammar
    (``"100mbit"``, ``"12.5MB/s"``, what fitted specs write) or a ``Rate``, or a number, which
    is bytes per second here, as every number of a simulation spec is in SI units (seconds,
    bytes); ``ValueError`` naming ``path`` otherwise."""
    if isinstance(value, str | Rate):
        return Rate.parse(value, path).bytes_per_second
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(
            f"{path}: must be a rate like 100mbit or a number of bytes per second (got {value!r})"
        )
    if not math.isfinite(value) or value <= 0:
        raise ValueError(f"{path}: must be a finite number > 0")
    return float(value)


#: TCP payload per frame as ``tc tbf`` counts it: MSS 1448 (1500 - 20 IP - 20 TCP - 12
#: timestamps) over 1514 bytes (1500 + the 14-byte Ethernet header): a link limited to R
#: carries at most R times this of messages
FRAME_BYTES, MSS = 1514, 1448
PAYLOAD_FRACTION = MSS / FRAME_BYTES
#: the model's ways to a flat code's workers (the runtime's ``runtime.distribution``, resolved)
DISTRIBUTIONS = ("isend", "scatter")
#: the ways a flat code's results reach the master (``runtime.collection``, resolved)
COLLECTIONS = ("push", "pull")


def _rates(path: str, value: Any) -> PerWorker:
    """A per-worker rate parameter (a rate, a list of them or ``{counts, values}``), bytes per
    second (``rate_bytes``)."""
    name = f"parameters.{path}"
    if not isinstance(value, list | Mapping):
        return PerWorker.parse(name, rate_bytes(name, value))
    if isinstance(value, list):
        value = [rate_bytes(f"{name}[{i}]", v) for i, v in enumerate(value)]
    elif isinstance(value, Mapping) and isinstance(value.get("values"), list):
        rates = [rate_bytes(f"{name}.values[{i}]", v) for i, v in enumerate(value["values"])]
        value = {**value, "values": rates}
    return per_worker(path, value)


class LinksModel(TimingModel):
    """Computation ``d_i (a + Exp(mu))``; deterministic, fairly shared links (module
    docstring)."""

    name = "shared-links"
    parameters: ClassVar[dict[str, str]] = {
        "rate": "every node's link, each direction: a rate (100mbit, 12.5MB/s) or bytes/s",
        "master_rate": "the master's link (default: rate)",
        "latency": "seconds one way per message (default 0)",
        "features": "gradient length l: a message of a code with reduction m is ceil(l/m) floats",
        "header_bytes": "bytes added to every result message (default 0; the runtime's: 8 H, 96)",
        "download": "whether the master first sends the model to every worker (default true)",
        "distribution": "the model's way to the workers (flat, tree): isend (default) or scatter",
        "collection": (
            "how results reach the master (a tree: every parent): push (default: all of them) "
            "or pull (notices, then the payloads its completion rule needs)"
        ),
        "a": "computation time per data point (default 0)",
        "mu": "exponential rate per data point (default: none, deterministic computation)",
        "data": "number of data points d in the data set (default 1)",
        "overhead": "constant time added to every iteration: a runtime's own cost (default 0)",
        "starts": (
            "instead of download: when the workers have the model, one time per worker (as "
            "measured), dealt to the workers in a random order every trial (flat codes; rings, "
            "which download nothing, ignore them)"
        ),
    }
    #: the measured starts are dealt to the workers at random, not one per worker
    not_per_worker = frozenset({"starts"})
    #: class defaults of the optional parameters added later, for subclasses that set their
    #: own attributes without calling this constructor
    overhead: float = 0.0
    starts: np.ndarray | None = None
    collection: str = "push"
    optional = frozenset(
        {
            "master_rate",
            "latency",
            "header_bytes",
            "download",
            "distribution",
            "collection",
            "a",
            "mu",
            "data",
            "overhead",
            "starts",
        }
    )

    def __init__(
        self,
        rate: Any,
        features: Any,
        master_rate: Any = None,
        latency: Any = 0.0,
        header_bytes: Any = 0,
        download: Any = True,
        distribution: Any = "isend",
        collection: Any = "push",
        a: Any = 0.0,
        mu: Any = None,
        data: Any = 1,
        overhead: Any = 0.0,
        starts: Any = None,
    ) -> None:
        self.rate = _rates("rate", rate)
        self.starts = None
        if starts is not None:
            if download is True:
                raise ValueError("parameters.starts: replaces the download; set download: false")
            if not isinstance(starts, list | tuple) or not starts:
                raise ValueError("parameters.starts: must be a non-empty list of seconds")
            self.starts = np.sort(
                [_nonnegative(f"starts[{i}]", value) for i, value in enumerate(starts)]
            )
        # a fitted model's runtime cost per iteration (gradcode timing fit); 0 in the papers
        self.overhead = _nonnegative("overhead", overhead)
        if master_rate is not None:
            self.master_rate = rate_bytes("parameters.master_rate", master_rate)
        elif self.rate.workers() is None:
            self.master_rate = self.rate.scalar
        else:
            raise ValueError("parameters.master_rate: needed when rate differs per worker")
        self.latency = _nonnegative("latency", latency)
        if isinstance(features, bool) or not isinstance(features, int) or features < 1:
            raise ValueError(f"parameters.features: must be an integer >= 1 (got {features!r})")
        self.features = features
        self.header_bytes = _nonnegative("header_bytes", header_bytes)
        if not isinstance(download, bool):
            raise ValueError(f"parameters.download: must be true or false (got {download!r})")
        self.download = download
        if distribution not in DISTRIBUTIONS:
            raise ValueError(
                f"parameters.distribution: must be one of {', '.join(DISTRIBUTIONS)} "
                f"(got {distribution!r})"
            )
        self.distribution = distribution
        if collection not in COLLECTIONS:
            raise ValueError(
                f"parameters.collection: must be one of {', '.join(COLLECTIONS)} "
                f"(got {collection!r})"
            )
        self.collection = collection
        self.a = per_worker("a", a, positive=False)
        self.mu = None if mu is None else per_worker("mu", mu)
        self.data = _nonnegative("data", data)
        if self.data <= 0:
            raise ValueError("parameters.data: must be > 0")

    def params(self) -> dict[str, Any]:
        params: dict[str, Any] = {
            "rate": self.rate.as_param(),
            "master_rate": self.master_rate,
            "latency": self.latency,
            "features": self.features,
            "header_bytes": self.header_bytes,
            "download": self.download,
            "distribution": self.distribution,
            "collection": self.collection,
            "a": self.a.as_param(),
            "data": self.data,
        }
        if self.mu is not None:
            params["mu"] = self.mu.as_param()
        if self.overhead:
            params["overhead"] = self.overhead
        if self.starts is not None:
            params["starts"] = self.starts.tolist()
        return params

    def check(self, scheme: Any) -> None:
        if not isinstance(scheme, GradientCode):
            raise ValueError(f"model {self.name} cannot simulate {type(scheme).__name__}")
        for per in (self.rate, self.a, self.mu):
            if per is not None:
                per.check(scheme.n, scheme.name)
        topology = topology_of(scheme)
        # a ring's workers hold the model already (RingRun downloads nothing): the starts
        # measured for flat codes do not concern it, so a fitted spec ranks rings too
        if self.starts is not None and topology.ring(scheme) is None:
            if not topology.direct:
                raise ValueError(
                    f"parameters.starts: for flat codes and rings only, not {scheme.name}"
                )
            if len(self.starts) != scheme.n:
                raise ValueError(
                    f"parameters.starts: describes {len(self.starts)} workers but "
                    f"{scheme.name} has {scheme.n}"
                )
        if self.collection == "pull" and not topology.collects_results:
            raise ValueError(
                f"parameters.collection: pull is for flat and tree codes only, not "
                f"{scheme.name} (a {topology} code)"
            )

    def sample(self, rng: np.random.Generator, trials: int, workers: int) -> Draws:
        """``unit``: time per data point of every worker, ``(trials, workers)``."""
        if self.mu is not None:  # the draws of single-port with the same a and mu
            draws = {"unit": ShiftedExponential(self.a, self.mu).sample(rng, trials, workers)}
        else:
            draws = {"unit": np.tile(self.a.for_workers(workers), (trials, 1))}
        if self.starts is not None and len(self.starts) == workers:
            # which worker's copy of the model came first is TCP's choice, each trial anew
            draws["start"] = rng.permuted(np.tile(self.starts, (trials, 1)), axis=1)
        return draws

    # -- message sizes ----------------------------------------------------------------------
    def result_bytes(self, code: Any) -> float:
        """Bytes of one result message of ``code`` (``ceil(l / m)`` floats + header)."""
        return FLOAT * code.message_length(self.features) + self.header_bytes

    @property
    def model_bytes(self) -> float:
        return FLOAT * (self.features + 1)

    def prepare(self, scheme: Any) -> FlatRun | TreeRun | RingRun:
        self.check(scheme)
        return topology_of(scheme).accept(_Runs(self, self.rate.for_workers(scheme.n)), scheme)

    def extras(self, scheme: Any) -> dict[str, float]:
        """``message_time``: one result message to the master on idle links (seconds)."""
        rates = self.rate.for_workers(scheme.n)
        collected = topology_of(scheme).collects_results
        nbytes = self.result_bytes(scheme) if collected else 0.0
        return {
            "message_time": message_time(nbytes, float(rates.min()), self.master_rate, self.latency)
        }


class _Runs(TopologyVisitor["FlatRun | TreeRun | RingRun"]):
    """``LinksModel.prepare``'s run of each topology."""

    def __init__(self, model: LinksModel, rates: np.ndarray) -> None:
        self.model, self.rates = model, rates

    def flat(self, code: GradientCode) -> FlatRun:
        return FlatRun(self.model, code, self.rates)

    def tree(self, code: TreeCode) -> TreeRun:
        return TreeRun(self.model, code, self.rates)

    def ring(self, code: RingCode) -> RingRun:
        return RingRun(self.model, code, self.rates)


def _plus(outcome: Outcome, overhead: float) -> Outcome:
    """``outcome`` with ``overhead`` added to its times (``finish`` stays without it)."""
    return Outcome(outcome.times + overhead, outcome.messages) if overhead else outcome


def _nonnegative(name: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"parameters.{name}: must be a number (got {value!r})")
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"parameters.{name}: must be a finite number >= 0 (got {value!r})")
    return float(value)


def scattered(model: LinksModel, rates: np.ndarray) -> np.ndarray:
    """When each of ``len(rates)`` workers holds a model scattered to them (step 1 of the
    module docstring), ``(n,)``: all at once."""
    n = len(rates)
    chunks = fair_finish(np.zeros(n), np.full(n, model.model_bytes / n), rates, model.master_rate)
    slowest = float(np.min(rates))
    forward = (n - 1) * model.model_bytes / (n * slowest)
    whole = model.model_bytes / slowest
    return np.full(n, 2 * model.latency + max(float(np.max(chunks)), forward, whole))


@dataclass
class FlatRun:
    model: LinksModel
    code: GradientCode
    rates: np.ndarray  # (n,) each worker's link

    def __post_init__(self) -> None:
        code = self.code
        keys = code.all_message_keys()
        self.worker = np.array([code.worker_of(key) for key in keys], dtype=np.intp)
        self.points = self.model.data * work_fractions(code)
        last: dict[int, int] = {}
        self.after = np.full(len(keys), -1)
        for q, w in enumerate(self.worker):  # a worker's messages leave in key order
            self.after[q] = last.get(int(w), -1)
            last[int(w)] = q
        self.size = self.model.result_bytes(code)
        self.pulls = Pulls.of(code) if self.model.collection == "pull" else None

    def message_arrivals(self, draws: Draws) -> np.ndarray:
        """When every message reaches the master in the trials of ``draws``, ``(trials,
        keys)``."""
        return self.arrivals(draws["unit"][:, self.worker] * self.points, draws.get("start"))

    def run(self, draws: Draws) -> Outcome:
        arrivals = self.message_arrivals(draws)
        times = self.code.completion_times(arrivals)
        return Outcome(times + self.model.overhead, received_by(arrivals, times))

    def downloads(self) -> np.ndarray:
        """When every worker holds the model, ``(n,)`` (zeros without ``download``)."""
        model, n = self.model, self.code.n
        if not model.download:
            return np.zeros(n)
        if model.distribution == "scatter" and n > 1:
            return scattered(model, self.rates)
        return model.latency + fair_finish(
            np.zeros(n), np.full(n, model.model_bytes), self.rates, model.master_rate
        )

    def arrivals(self, work: np.ndarray, starts: np.ndarray | None = None) -> np.ndarray:
        """When each message reaches the master, ``(trials, keys)``, for ``work[t, q]``
        seconds of computation behind message ``q`` after its worker got the model (``inf``:
        never sent); ``starts[t, i]``: when worker ``i`` got it (default: ``downloads``)."""
        start = self.downloads()[None, :] if starts is None else np.asarray(starts)
        return self.collect(start[:, self.worker] + work)

    def collect(self, ready: np.ndarray) -> np.ndarray:
        """When each message reaches the master, ``(trials, keys)``, for messages ready
        (their workers hold the model and did their work) at ``ready[t, q]`` (``inf``: never
        sent), collected the model's way (``collection``, ``collect``)."""
        model = self.model
        return collect(
            ready,
            np.full(len(self.worker), self.size),
            self.rates[self.worker],
            model.master_rate,
            self.after,
            model.latency,
            self.pulls,
        )


@dataclass
class TreeRun:
    """A tree code on the links (``children_completion_times`` at every parent)."""

    model: LinksModel
    code: TreeCode
    rates: np.ndarray  # (N,) each node's link

    def run(self, draws: Draws) -> Outcome:
        points = self.model.data * self.code.loads() / self.code.k
        return _plus(self.finish(draws["unit"] * points), self.model.overhead)

    def finish(self, compute: np.ndarray) -> Outcome:
        """When the master decodes, for ``compute[t, v]`` seconds of node ``v``'s own work
        after it got the model, ``(trials, N)``."""
        model, code = self.model, self.code
        trials = compute.shape[0]
        size = model.result_bytes(code)
        start = np.zeros(code.n)
        if model.download and model.distribution == "scatter" and code.n > 1:
            start = scattered(model, self.rates)
        elif model.download:
            for depth in range(code.height):  # parents before their children
                for parent in code.nodes_at_depth(depth):
                    kids = list(code.children(parent))
                    if not kids:
                        continue
                    at = 0.0 if parent == MASTER else start[parent]
                    capacity = model.master_rate if parent == MASTER else self.rates[parent]
                    got = fair_finish(
                        np.full(len(kids), at),
                        np.full(len(kids), model.model_bytes),
                        self.rates[kids],
                        capacity,
                    )
                    start[kids] = got + model.latency
        ready = compute + start
        received: list[tuple[np.ndarray, np.ndarray]] = []
        times = np.full(trials, np.inf)
        for depth in range(code.height - 1, -1, -1):
            for parent in code.nodes_at_depth(depth):
                kids = list(code.children(parent))
                if not kids:
                    continue
                capacity = model.master_rate if parent == MASTER else float(self.rates[parent])
                pulls = Pulls.of(code, parent) if model.collection == "pull" else None
                arrivals = collect(
                    ready[:, kids],
                    np.full(len(kids), size),
                    self.rates[kids],
                    capacity,
                    None,
                    model.latency,
                    pulls,
                )
                reduced = code.children_completion_times(parent, arrivals)
                received.append((arrivals, reduced))
                if parent == MASTER:
                    times = reduced
                else:
                    ready[:, parent] = np.maximum(ready[:, parent], reduced)
        messages = np.zeros(trials, dtype=np.int64)
        for arrivals, reduced in received:
            cutoff = np.minimum(reduced, times)[:, None]
            messages += np.count_nonzero(arrivals <= cutoff, axis=1)
        return Outcome(times, messages)


@dataclass
class RingRun:
    """Ring-AllReduce on the links: ``2 (N - 1)`` steps after the slowest worker."""

    model: LinksModel
    ring: RingCode
    rates: np.ndarray

    def run(self, draws: Draws) -> Outcome:
        return _plus(
            self.finish(draws["unit"] * (self.model.data / self.ring.k)), self.model.overhead
        )

    def finish(self, compute: np.ndarray) -> Outcome:
        """When every worker holds the sum, for ``compute[t, i]`` seconds of worker ``i``'s
        work, ``(trials, n)`` (the workers hold the model: nothing is downloaded)."""
        model, n = self.model, self.ring.n
        links = np.minimum(self.rates, np.roll(self.rates, -1))  # worker i -> i + 1
        step = model.latency + FLOAT * model.features / n / float(links.min())
        # the code's schedule: rounds() steps of tc / n each after the slowest worker
        times = self.ring.completion(compute, step * n)
        return Outcome(times, np.full(len(times), self.ring.messages()))
