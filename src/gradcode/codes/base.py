"""The one interface every gradient code implements.

A gradient code splits a data set into ``k`` partitions and assigns them to ``n`` workers.
Worker ``i`` computes the partial gradient of every partition in ``partitions(i)`` (a vector of
length ``l`` each), combines them into a message with ``encode`` and sends it. The master calls
``decode`` on the messages that arrived and obtains the sum of all ``k`` partial gradients.

Messages are keyed. For the usual *flat* codes a message key is the worker index and every
worker sends exactly one message. Codes that send several messages per worker (GC-MMC) key them
``(worker, j)``: ``message_keys(worker)`` lists them in the order the worker can send them, and
``message_prefix(key)`` says how many of the worker's partials (in ``partitions`` order) the
message needs, so a runtime can send message ``j`` as soon as that many partials are computed.
Codes whose aggregation runs up a tree (CodedReduce) derive from ``gradcode.codes.tree.TreeCode``;
codes whose messages are fixed linear combinations of the partials (most of them) from
``gradcode.codes.linear.LinearCode``.

What a runtime, the simulator and the command line need to know about a code is *declared*, in
the class attribute ``capabilities`` (a ``Capabilities``): its topology (``flat`` master-worker,
``tree``, or ``ring``), whether it codes the data instead of the gradients (and for which
models that is exact), whether it corrects adversaries, whether it estimates its own error, and
the kind of its messages. Nothing outside ``gradcode.codes`` asks which scheme a code is.

Decoding returns one ``DecodeResult``: the gradient, the message keys used, the condition
number of what was inverted, the keys found corrupted and the code's own error estimate, where
the code has them. ``decode`` is the shortcut that returns just the gradient.

Shapes (``l`` is the gradient length, ``L = m * ceil(l / m)`` the padded length):

- ``partials``: ``(len(partitions(worker)), l)``, one row per partition in ``partitions`` order.
- a message: ``(ceil(l / m),)``.
- ``decode(...)``: ``(l,)``.

Codes whose messages are matrices (``capabilities.message == "matrix"``) take a gradient of
``l = d * d`` numbers, each partial a ``d x d`` matrix flattened row-major, send ``d x d``
matrices flattened the same way (``message_length(l) = l``) and refuse other lengths
(``ParameterError`` from ``message_length``). Such a code may decode a function of the sum
rather than the sum; ``reference`` says which.
"""

from __future__ import annotations

import itertools
import math
from abc import ABC, abstractmethod
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from gradcode.checks import check_int as check_int  # the codes' (and plug-ins') import

# where code outside ``gradcode.codes`` (the topologies, plug-ins, tests) imports them from
from gradcode.codes.capabilities import TOPOLOGIES as TOPOLOGIES
from gradcode.codes.capabilities import Capabilities as Capabilities
from gradcode.codes.combine import BLOCKED_FROM_CHUNKS as BLOCKED_FROM_CHUNKS
from gradcode.codes.combine import combine_chunks as combine_chunks
from gradcode.codes.combine import consecutive_rows as consecutive_rows
from gradcode.codes.combine import linear_combination as linear_combination
from gradcode.codes.combine import message_vectors
from gradcode.codes.completion import CompletionRule
from gradcode.errors import ParameterError

MessageKey = Hashable


class NotDecodableError(ValueError):
    """The responses in hand do not determine the gradient.

    ``needed`` is a lower bound on how many more responses are required (``None`` when the code
    cannot say), ``candidates`` lists message keys any of which would help, when known.
    """

    def __init__(
        self,
        message: str,
        *,
        needed: int | None = None,
        candidates: Sequence[MessageKey] | None = None,
    ) -> None:
        super().__init__(message)
        self.needed = needed
        self.candidates = tuple(candidates) if candidates is not None else None


def require(condition: bool, message: str) -> None:
    """Raise ``ParameterError(message)`` (a ``ValueError``) when a parameter constraint fails."""
    if not condition:
        raise ParameterError(message)


@dataclass(frozen=True)
class Pattern:
    """One test case for decoding: which messages arrived and which of them lie.

    ``responders`` are message keys; ``corrupted`` is a subset of them whose content the
    verification harness replaces with garbage (adversarial workers).
    """

    responders: frozenset
    corrupted: frozenset = field(default_factory=frozenset)


@dataclass(frozen=True)
class DecodeResult:
    """What one decoding produced.

    ``gradient``: the decoded sum of the ``k`` partial gradients, ``(length,)`` (approximate
    codes: their estimate of it). ``used``: the message keys whose contents entered it.
    ``condition``: condition number of the system the decoder inverted (``nan`` where none,
    1 where it only adds). ``adversaries``: keys found corrupted (codes that correct
    adversaries). ``error_estimate``: the code's estimate of ``||gradient - true||_2``
    (codes that estimate their error), else ``None``.
    """

    gradient: np.ndarray
    used: tuple[MessageKey, ...] = ()
    condition: float = float("nan")
    adversaries: tuple[MessageKey, ...] = ()
    error_estimate: float | None = None


@dataclass(frozen=True)
class AggregationInputs:
    """What an ``aggregable`` code hands a robust aggregator instead of a sum.

    ``values``: ``(count, length)``, one row per group of partitions in hand; ``keys``: the
    message keys behind each row; ``total``: how many groups the gradient sums, so ``total``
    times the mean of the honest rows is the gradient (the factor from an aggregator's mean
    estimate to the sum the exact path decodes); ``adversaries``: keys a vote outvoted.
    """

    values: np.ndarray
    keys: tuple[tuple[MessageKey, ...], ...]
    total: int
    adversaries: tuple[MessageKey, ...] = ()


class GradientCode(ABC):
    """Base class of all gradient codes.

    Subclasses set ``n, k, s, a, m`` in their constructor after validating their parameters,
    declare ``capabilities`` where they differ from a flat gradient code's, and register
    themselves in ``gradcode.codes.registry``.
    """

    name: ClassVar[str]
    #: False for approximate schemes (``berrut``, ``ignore-stragglers``).
    exact: ClassVar[bool] = True
    #: what the runtime, the simulator and the CLI may rely on (see ``Capabilities``)
    capabilities: ClassVar[Capabilities] = Capabilities()

    #: largest n at which decoding was measured to stay below 1e-8 relative error
    #: (``None``: no limit found up to n = 50); the tests stop random patterns there.
    numerically_sound_up_to: ClassVar[int | None] = None

    n: int
    k: int
    s: int
    a: int = 0
    m: int = 1

    @classmethod
    def parameter_grid(cls, max_n: int) -> Iterator[dict[str, Any]]:
        """Every valid parameter combination whose code has ``code.n <= max_n`` workers.

        Drives the exhaustive tests; ``max_n`` and ``numerically_sound_up_to`` count workers
        (``code.n``), which for a tree code is the number of tree nodes, not its branching.

        Schemes with unbounded parameter spaces (placements, order vectors) yield a documented,
        representative family instead.
        """
        raise NotImplementedError(f"{cls.__name__} does not enumerate its parameters")

    @classmethod
    def for_worker_times(cls, times: Sequence[float]) -> Iterator[dict[str, Any]]:
        """Parameter sets that size the work to workers of unequal speed (may be none).

        ``times[i]`` is worker ``i``'s expected time to compute one data subset (``1 / n`` of
        the data, ``n = len(times)``), in any unit. Codes that can allocate more data to faster
        workers (paper 003 Sec. VI, paper 004) yield their allocations for these workers, every
        one with ``code.n == n``; the default yields nothing.
        """
        return iter(())

    # -- assignment -------------------------------------------------------------------------
    @abstractmethod
    def partitions(self, worker: int) -> tuple[int, ...]:
        """The partitions worker ``worker`` computes on, in the order it computes them."""

    def load(self, worker: int) -> int:
        return len(self.partitions(worker))

    def loads(self) -> np.ndarray:
        """Number of partitions per worker, shape ``(n,)``."""
        return np.array([self.load(i) for i in range(self.n)])

    # -- messages ---------------------------------------------------------------------------
    def message_keys(self, worker: int) -> tuple[MessageKey, ...]:
        """Keys of the messages ``worker`` sends, in sending order (flat codes: ``(worker,)``)."""
        return (worker,)

    def all_message_keys(self) -> tuple[MessageKey, ...]:
        return tuple(key for i in range(self.n) for key in self.message_keys(i))

    def worker_of(self, key: MessageKey) -> int:
        """The worker that sends the message ``key``."""
        return key[0] if isinstance(key, tuple) else key  # type: ignore[index,return-value]

    def message_prefix(self, key: MessageKey) -> int:
        """How many of the worker's partials (in ``partitions`` order) message ``key`` needs."""
        return self.load(self.worker_of(key))

    def message_length(self, length: int) -> int:
        """Length of one message for a gradient of length ``length``."""
        return -(-length // self.m)

    @abstractmethod
    def encode(self, worker: int, partials: np.ndarray) -> np.ndarray:
        """Worker ``worker``'s message; ``partials`` has shape ``(load(worker), l)``.

        Multi-message codes return the worker's *last* message here and implement
        ``encode_message`` for every key.
        """

    def encode_message(self, key: MessageKey, partials: np.ndarray) -> np.ndarray:
        """Message ``key``; ``partials`` holds at least the first ``message_prefix(key)`` rows."""
        return self.encode(self.worker_of(key), partials)

    def encode_all(self, worker: int, partials: np.ndarray) -> dict[MessageKey, np.ndarray]:
        """Every message of ``worker``, keyed."""
        return {key: self.encode_message(key, partials) for key in self.message_keys(worker)}

    # -- decoding ---------------------------------------------------------------------------
    @abstractmethod
    def is_decodable(self, keys: Iterable[MessageKey]) -> bool:
        """Whether the messages ``keys`` determine the gradient (adversaries included)."""

    @abstractmethod
    def decode_result(self, messages: Mapping[MessageKey, np.ndarray], length: int) -> DecodeResult:
        """Decode ``messages``: the gradient ``(length,)`` and what the decoder learnt.

        Raises ``NotDecodableError`` when ``messages`` do not suffice.
        """

    def decode(self, messages: Mapping[MessageKey, np.ndarray], length: int) -> np.ndarray:
        """The sum of all ``k`` partial gradients, shape ``(length,)`` (``decode_result``'s)."""
        return self.decode_result(messages, length).gradient

    @property
    def decodes_faster_from_rows(self) -> bool:
        """Whether ``decode`` runs faster when the messages are consecutive rows of one matrix.

        True for codes that combine their messages into ``m >= 2`` chunks (``combine_chunks``
        then multiplies the rows in place instead of first gathering them, 1.07-1.25x the
        memory floor against 1.6-2.4x at m = 9), so a runtime that can lay the results out
        that way as they arrive (``gradcode.train.rows``) does.
        """
        return self.m >= BLOCKED_FROM_CHUNKS

    def completion_times(self, arrivals: np.ndarray) -> np.ndarray:
        """Earliest time the master can decode, per trial.

        ``arrivals`` has shape ``(trials, len(all_message_keys()))``: when each message reaches
        the master (``inf`` for never). Returns shape ``(trials,)`` (``inf`` where the trial
        never becomes decodable). This generic version adds messages in arrival order and asks
        ``is_decodable`` after each; schemes override it with a vectorised form of the same
        rule, and the tests check the two agree.
        """
        arrivals = self._arrivals(arrivals)
        keys = self.all_message_keys()
        result = np.full(arrivals.shape[0], np.inf)
        for trial, row in enumerate(arrivals):
            held: list[MessageKey] = []
            for index in np.argsort(row, kind="stable"):
                if not np.isfinite(row[index]):
                    break
                held.append(keys[index])
                if self.is_decodable(held):
                    result[trial] = row[index]
                    break
        return result

    def _arrivals(self, arrivals: np.ndarray) -> np.ndarray:
        """``arrivals`` as float64, checked to be ``(trials, number of message keys)``."""
        arrivals = np.asarray(arrivals, dtype=np.float64)
        width = len(self.all_message_keys())
        if arrivals.ndim != 2 or arrivals.shape[1] != width:
            raise ValueError(
                f"{self.name}: arrivals must have shape (trials, {width}), got {arrivals.shape}"
            )
        return arrivals

    def min_responders(self) -> int:
        """Smallest number of workers whose messages can suffice in the worst case."""
        return self.n - self.s

    # -- robust aggregation (capabilities.aggregable) -----------------------------------------
    def aggregation_inputs(
        self, messages: Mapping[MessageKey, np.ndarray], length: int
    ) -> AggregationInputs:
        """The values a robust aggregator takes from ``messages`` (``AggregationInputs``)."""
        raise NotImplementedError(f"{self.name} does not declare capabilities.aggregable")

    def aggregation_count(self) -> int:
        """Fewest values ``aggregation_inputs`` gives from a decodable set of messages."""
        raise NotImplementedError(f"{self.name} does not declare capabilities.aggregable")

    def aggregation_corrupted(self, liars: Iterable[int]) -> int:
        """How many of those values the workers ``liars`` can corrupt at most."""
        raise NotImplementedError(f"{self.name} does not declare capabilities.aggregable")

    def completion_rule(self) -> CompletionRule | None:
        """The decodability rule as groups of message keys and counts (``CompletionRule``:
        decodable once ``needed[g]`` messages of every group ``g`` arrived), for closed-form
        expected times; ``None`` (the default) where the rule is not of that form or not
        declared. A declared rule must give ``completion_times`` (the conformance kit checks).
        """
        return None

    # -- data coding (capabilities.codes_data) ----------------------------------------------
    def encode_data(
        self, X_parts: Sequence[np.ndarray], y_parts: Sequence[np.ndarray]
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Every worker's coded data ``(X~_i, y~_i)`` from the ``k`` partitions' data.

        Only for codes whose ``capabilities.codes_data`` is non-empty. ``X_parts[p]`` is
        partition ``p``'s ``(rows_p, d)`` feature matrix, ``y_parts[p]`` its labels; returns
        ``n`` pairs. A worker's message is then the model's gradient on its coded data.
        """
        raise NotImplementedError(f"{self.name} codes gradients, not data")

    def data_fraction(self, key: MessageKey) -> float:
        """Share of the data set a worker must process before it can send message ``key``.

        A gradient code's message needs ``message_prefix(key)`` of the ``k`` equal partitions;
        a code of the data declares its own (LCC: its one coded part, ``1 / k``).
        """
        return self.message_prefix(key) / self.k

    # -- theory -----------------------------------------------------------------------------
    def predicted_times(self, model: str, params: Mapping[str, float]) -> dict[str, float]:
        """The code's own predictions of its run time under timing model ``model``.

        ``params`` are the model's homogeneous parameters. Returns named values for the
        simulation tables (CodedReduce: Theorem 2's bounds under ``single-port``); ``{}``
        where the code has none.
        """
        return {}

    # -- verification hooks -----------------------------------------------------------------
    def patterns(
        self, *, exhaustive: bool = True, rng: np.random.Generator | None = None, limit: int = 200
    ) -> Iterator[Pattern]:
        """Responder patterns the code claims to decode.

        Default: every choice of ``s`` stragglers (all their messages missing) among ``n``
        workers; with ``exhaustive=False``, ``limit`` random ones. Adversarial codes add ``a``
        corrupted responders.
        """
        rng = rng if rng is not None else np.random.default_rng(0)
        if exhaustive:
            straggler_sets: Iterable[Sequence[int]] = itertools.combinations(range(self.n), self.s)
        else:
            straggler_sets = (
                tuple(rng.choice(self.n, size=self.s, replace=False)) for _ in range(limit)
            )
        # every worker's keys once, not once a pattern: an exhaustive check yields thousands
        keys = [self.message_keys(i) for i in range(self.n)]
        for stragglers in straggler_sets:
            missing = set(stragglers)
            alive = [i for i in range(self.n) if i not in missing]
            corrupted: frozenset = frozenset()
            if self.a:
                bad = rng.choice(len(alive), size=self.a, replace=False)
                corrupted = frozenset(k for j in bad for k in keys[alive[int(j)]])
            yield Pattern(frozenset(k for i in alive for k in keys[i]), corrupted)

    def count_patterns(self) -> int:
        """Number of patterns ``patterns(exhaustive=True)`` yields."""
        return math.comb(self.n, self.s)

    def random_instance(self, rng: np.random.Generator, length: int) -> tuple[Any, np.ndarray]:
        """A random problem for verification: ``(instance, partials)``.

        ``partials`` (shape ``(k, length)``) are the true partial gradients, from which the
        harness forms the reference sum independently of the code; ``instance`` is what
        ``run_pattern`` consumes. For codes that encode gradients it is ``partials`` itself;
        codes that encode data (LCC) return their data and compute ``partials`` directly.
        """
        partials = rng.standard_normal((self.k, length))
        partials.flags.writeable = False  # so ``pattern_messages`` may keep its encoding
        return partials, partials

    def pattern_messages(
        self, instance: Any, pattern: Pattern, rng: np.random.Generator
    ) -> dict[MessageKey, np.ndarray]:
        """The messages the master holds under ``pattern``, corrupted as it says.

        ``instance`` (from ``random_instance``) is the full ``(k, l)`` matrix of partial
        gradients; each worker sees only the rows of its own ``partitions``.
        """
        messages: dict[MessageKey, np.ndarray] = {}
        workers = sorted({self.worker_of(key) for key in pattern.responders})
        for worker in workers:
            for key, message in self._encoded(instance, worker).items():
                if key in pattern.responders:
                    messages[key] = message
        for key in pattern.corrupted:
            messages[key] = messages[key] + rng.standard_normal(messages[key].shape) * 1e3
        return messages

    def _encoded(self, partials: np.ndarray, worker: int) -> dict[MessageKey, np.ndarray]:
        """``encode_all`` of ``worker``'s rows of ``partials``. Of a read-only ``partials``
        (``random_instance``'s) the messages are kept, read-only, for the next pattern of the
        same instance: verifying every pattern encoded each worker's messages again for each,
        most of an exhaustive check's time (GC-MMC, n <= 12)."""
        if partials.flags.writeable:
            return self.encode_all(worker, partials[list(self.partitions(worker))])
        memo = self.__dict__.get("_encoding_memo")
        if memo is None or memo[0] is not partials:  # holding it, its id is not reused
            memo = self.__dict__["_encoding_memo"] = (partials, {})
        found = memo[1].get(worker)
        if found is None:
            found = self.encode_all(worker, partials[list(self.partitions(worker))])
            for message in found.values():
                message.flags.writeable = False
            memo[1][worker] = found
        return found

    def run_pattern(
        self, instance: Any, pattern: Pattern, rng: np.random.Generator
    ) -> DecodeResult:
        """Decode the messages of ``pattern`` (see ``pattern_messages``)."""
        length = self.instance_length(instance)
        return self.decode_result(self.pattern_messages(instance, pattern, rng), length)

    def reference(self, total: np.ndarray) -> np.ndarray:
        """What ``decode`` returns when the ``k`` partial gradients sum to ``total`` ``(l,)``.

        The identity for a gradient code. A code that decodes a *function* of the sum
        (``heterogeneous-poly``: a matrix polynomial ``h`` of the ``d x d`` sum, flattened)
        overrides it with a direct computation that shares nothing with its encoder or
        decoder; the verification harness and the runtime's serial reference apply it to
        their own sum of the partials, so they never ask which scheme a code is.
        """
        return total

    def instance_length(self, instance: Any) -> int:
        """Gradient length of a ``random_instance``."""
        return int(instance.shape[1])

    # -- presentation -----------------------------------------------------------------------
    def params(self) -> dict[str, Any]:
        """Constructor parameters, for tables and ``codes show``."""
        return {"n": self.n, "k": self.k, "s": self.s, "a": self.a, "m": self.m}

    def assignment_matrix(self) -> np.ndarray:
        """0/1 matrix of shape ``(n, k)``: worker ``i`` computes partition ``p``."""
        mask = np.zeros((self.n, self.k), dtype=np.int8)
        for i in range(self.n):
            mask[i, list(self.partitions(i))] = 1
        return mask

    def __repr__(self) -> str:
        args = ", ".join(f"{key}={value!r}" for key, value in self.params().items())
        return f"{type(self).__name__}({args})"


def plain_inputs(
    code: GradientCode, messages: Mapping[MessageKey, np.ndarray], length: int
) -> AggregationInputs:
    """``AggregationInputs`` of a code whose every message is one partition's partial gradient
    (worker ``i`` sends partition ``i``): the messages in key order, ``total = k``."""
    keys = sorted(messages)
    if not keys:
        raise NotDecodableError(f"{code.name}: no messages to aggregate", needed=1)
    vectors = message_vectors(code.name, messages, keys, code.message_length(length))
    values = np.stack(vectors)[:, :length]
    return AggregationInputs(values, tuple((key,) for key in keys), code.k)
