"""Coded gradient descent simulated serially (no MPI): iterations and time to a target loss.

``TrainingProblem``: the user's training problem, read from a run file
(``gradcode.runfile.config``): its data, model kind and ``l2``, optimizer. Its ``scheme`` is
replaced by each code; what only a real run has (stragglers, adversaries, faults, bandwidth,
network, iterations) is not used, the timing comes from the timing model.

``exact_iterations(problem, code, target, max_iterations)``: an exact code decodes the summed
gradient (to round-off) from any responders, so it follows the iterates of exact gradient
descent (``gradcode.runfile.reference``) whatever the stragglers: its iterations to the target are
those of the exact serial trajectory, computed once per number of training rows (``data.trim``
drops the last ``N mod k`` rows, so codes of different ``k`` may train on slightly different
rows, as their runs would). Its gradient is summed over the training rows at once: the sum over
the partitions to round-off, without slicing them.

Memory: the data are loaded per number of partitions ``k`` (``load_training_data`` trims and
partitions them), the last ``SPLITS_KEPT`` kept; a split slices its partitions only when a
simulated code needs them, once.

``simulate_to_target(problem, model, code, target, ...)``: an approximate code's iterates depend
on who answered, so they are simulated. One replicate starts at zero, as a run does; in
iteration ``t``:

1. trial ``t`` of the timing model for the code's ``n`` workers: every message key's arrival
   (``prepared.message_arrivals(draws)``), the completion time
   ``code.completion_times(arrivals)``, the responders (the keys that arrived by then) and the
   iteration's time (``prepared.run(draws).times``: the completion time plus what the model
   adds to every iteration, its ``overhead``: the quantity the ranking's time per iteration
   estimates);
2. the partial gradients at the optimizer's point, only on the partitions some responder's
   message needs; each responder's message encoded as its worker would
   (``code.encode_message(key, partials[:prefix])``), decoded with ``code.decode_result``;
3. the step along ``model.full_gradient(decoded, point, rows, l2)``, as the runtime takes it,
   and the training loss of the new iterate (``model.loss`` on the run's training rows).

It stops at the first iterate whose loss is ``<= target`` (the time to target is the summed
iteration times then), when the loss is not finite (diverged), or after ``max_iterations``
(not reached: reported as such). The ``max_iterations`` trials of a replicate are drawn at once
(``model.sample(rng, max_iterations, n)``, trial ``t`` for iteration ``t``: trials are
independent, so this is one draw per iteration), from the seed sequence ``(seed, STREAM,
replicate)``: every code with ``n`` workers sees the same workers in iteration ``t`` of replicate
``r`` (common random numbers).

Only gradient codes of the master-worker topology whose model's prepared run exposes the message
arrivals of its draws (``message_arrivals(draws)``: ``master-worker``, ``shared-links``) are
simulated;
``unsupported(model, code)`` gives the one-line reason for any other (a code of the data: its
workers compute on coded data, which this simulation does not form; a tree or ring code; a
model without those arrivals: nothing here guesses them).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from gradcode.codes import GradientCode
from gradcode.lru import LRUCache
from gradcode.models import Model
from gradcode.runfile.config import (
    AdversaryConfig,
    RunConfig,
    SchemeConfig,
    StragglerConfig,
    load_config,
)
from gradcode.runfile.dataset import TrainingData, load_training_data
from gradcode.runfile.plan import Plan, build_plan
from gradcode.sim.stats import Moments
from gradcode.timing import TimingModel
from gradcode.topology import topology_of

#: second word of every replicate's seed sequence (its draws differ from the ranking's)
STREAM = 0x7A6E7
#: trials of the consistency probe of a model's arrivals (``unsupported``)
_PROBE_TRIALS = 8
#: splits of the data (one per number of partitions) kept loaded
SPLITS_KEPT = 2


@dataclass
class Split:
    """The training rows for ``k`` partitions; ``parts``: each partition's ``(X_p, y_p)``,
    sliced on first use."""

    data: TrainingData
    l2: float

    @cached_property
    def parts(self) -> list[tuple[Any, np.ndarray]]:
        return [self.data.part(p) for p in range(len(self.data.partitions))]


class TrainingProblem:
    """The training problem of a run file: data, model, optimizer (module docstring).

    The data are loaded (or prepared) once per number of partitions ``k`` and kept.
    """

    def __init__(self, config: RunConfig, source: str | None = None) -> None:
        self.config = config
        self.source = source or config.name
        self.model: Model = config.model.build()
        self._splits: LRUCache[Split] = LRUCache(SPLITS_KEPT)
        #: exact traces by ("k", k, target, iterations) and ("rows", rows, target, iterations)
        self._exact: dict[tuple[str, int, float, int], ExactTrace] = {}
        self._features: int | None = None

    @classmethod
    def from_file(cls, path: str | Path) -> TrainingProblem:
        """Read the run file at ``path``; ``ConfigError`` (one line naming the key)."""
        return cls(load_config(path), str(path))

    def describe(self) -> str:
        """``logistic, l2 0.001, gd step 1`` (what the iterates depend on)."""
        config = self.config
        l2 = "1/N" if config.model.l2_per_row else f"{config.model.l2:g}"
        options = config.optimizer
        step = (
            f"step {options.step:g}"
            if options.step is not None
            else f"step {options.c1:g}/(t + {options.c2:g})"
        )
        return f"{config.model.kind}, l2 {l2}, {options.kind} {step}"

    def plan(self, code: GradientCode) -> Plan:
        """The run's plan with ``code`` as its scheme; ``ConfigError`` naming the key when the
        code cannot train this problem (a code of the data not exact for the model kind)."""
        config = replace(
            self.config,
            scheme=SchemeConfig(code.name, dict(code.params())),
            stragglers=StragglerConfig(),
            adversaries=AdversaryConfig(),
            bandwidth=None,
            network=None,
            faults=None,
        )
        return build_plan(config)

    def split(self, k: int) -> Split:
        """The training rows in ``k`` partitions (module docstring: memory); ``ConfigError``."""

        def load() -> Split:
            data = load_training_data(self.config.data, k, self.config.model.kind)
            self._features = data.features
            return Split(data, self.config.model.l2_value(data.rows))

        return self._splits.get_or_compute(k, load)

    @property
    def features(self) -> int:
        """The gradient length (any ``k``'s: the same columns)."""
        if self._features is None:
            self.split(1)
        assert self._features is not None
        return self._features

    def check(self, code: GradientCode) -> tuple[Plan, Split]:
        """The plan and the data of ``code``, or ``ConfigError`` saying why it cannot train."""
        plan = self.plan(code)
        split = self.split(code.k)
        plan.check_features(split.data.features)
        return plan, split

    def loss(self, split: Split, theta: np.ndarray) -> float:
        data = split.data
        return self.model.loss(data.X_train, data.y_train, theta, split.l2)


@dataclass(frozen=True)
class ExactTrace:
    """Exact gradient descent on ``rows`` training rows: ``iterations`` to the target
    (``None``: not reached in ``max_iterations``) and the loss of the last iterate."""

    iterations: int | None
    loss: float
    rows: int
    max_iterations: int


def exact_iterations(
    problem: TrainingProblem, code: GradientCode, target: float, max_iterations: int
) -> ExactTrace:
    """Iterations of exact gradient descent to a loss ``<= target`` on ``code``'s training
    rows (cached per number of rows). ``ConfigError`` when ``code`` cannot train the problem."""
    plan = problem.plan(code)
    plan.check_features(problem.features)
    by_k = ("k", code.k, float(target), max_iterations)
    if by_k not in problem._exact:
        split = problem.split(code.k)
        by_rows = ("rows", split.data.rows, float(target), max_iterations)
        if by_rows not in problem._exact:
            problem._exact[by_rows] = _exact_trace(problem, plan, split, target, max_iterations)
        problem._exact[by_k] = problem._exact[by_rows]
    return problem._exact[by_k]


def _exact_trace(
    problem: TrainingProblem, plan: Plan, split: Split, target: float, max_iterations: int
) -> ExactTrace:
    model, data = problem.model, split.data
    rows = data.rows
    optimizer = plan.optimizer()
    state = optimizer.init(np.zeros(data.features))
    loss = problem.loss(split, optimizer.model(state))
    if loss <= target:
        return ExactTrace(0, loss, rows, max_iterations)
    for t in range(max_iterations):
        point = optimizer.point(state)
        decoded = plan.code.reference(model.partial_gradient(data.X_train, data.y_train, point))
        optimizer.step(state, t, model.full_gradient(decoded, point, rows, split.l2))
        loss = problem.loss(split, optimizer.model(state))
        if loss <= target:
            return ExactTrace(t + 1, loss, rows, max_iterations)
        if not math.isfinite(loss):
            break
    return ExactTrace(None, loss, rows, max_iterations)


@dataclass(frozen=True)
class Replicate:
    """One simulated run: ``iterations`` taken, their summed ``time``, whether the target was
    ``reached``, the last ``loss``, and why it stopped otherwise (``stop``)."""

    iterations: int
    time: float
    reached: bool
    loss: float
    stop: str = ""


@dataclass(frozen=True)
class Convergence:
    """The replicates of one code (``simulate_to_target``)."""

    replicates: tuple[Replicate, ...]
    max_iterations: int

    @property
    def reached(self) -> int:
        """Replicates that reached the target."""
        return sum(r.reached for r in self.replicates)

    def times(self) -> np.ndarray:
        """Times to target of the replicates that reached it, ``(reached,)``."""
        return np.array([r.time for r in self.replicates if r.reached], dtype=np.float64)

    def mean_iterations(self) -> float | None:
        """Mean iterations to target over the replicates that reached it (``None``: none)."""
        done = [r.iterations for r in self.replicates if r.reached]
        return float(np.mean(done)) if done else None

    def time_per_iteration(self) -> float:
        """Summed time over summed iterations, every replicate (``nan``: no iteration)."""
        steps = sum(r.iterations for r in self.replicates)
        return sum(r.time for r in self.replicates) / steps if steps else math.nan

    def interval(self, level: float) -> tuple[float, float, float]:
        """Mean time to target over the replicates that reached it and its ``level`` t
        interval (``nan`` with fewer than two such replicates)."""
        moments = Moments()
        moments.add(self.times())
        if not moments.count:
            return math.nan, math.nan, math.nan
        low, high = moments.interval(level)
        return moments.mean, low, high

    def stops(self) -> list[str]:
        """Why the replicates that did not reach the target stopped, one line each."""
        return [r.stop for r in self.replicates if not r.reached]


def _arrivals_method(prepared: Any) -> Callable[[dict[str, np.ndarray]], np.ndarray] | None:
    """The prepared scheme's ``message_arrivals`` (``gradcode.timing.model.Prepared``)."""
    method = getattr(prepared, "message_arrivals", None)
    return method if callable(method) else None


def unsupported(model: TimingModel, code: GradientCode) -> str | None:
    """Why ``simulate_to_target`` cannot simulate ``code`` under ``model`` (``None``: it can).

    Beyond the declarations, a probe of a few trials checks that the completion times of the
    model's arrivals are never later than its iteration times (else they do not explain them).
    """
    capabilities = code.capabilities
    if capabilities.codes_data:
        return "codes the data: only gradient codes are simulated to a target loss"
    topology = topology_of(code)
    if not topology.direct:
        return f"a {topology} code: only master-worker codes are simulated"
    try:
        prepared = model.prepare(code)
    except ValueError as error:
        return str(error)
    arrivals = _arrivals_method(prepared)
    if arrivals is None:
        return (
            f"model {model.name} gives no message arrivals of its draws (message_arrivals), "
            "which the simulation to a target loss needs"
        )
    draws = model.sample(np.random.default_rng(0), _PROBE_TRIALS, code.n)
    found = np.asarray(arrivals(draws), dtype=np.float64)
    if found.shape != (_PROBE_TRIALS, len(code.all_message_keys())):
        return f"model {model.name}'s arrivals have shape {found.shape}, not (trials, keys)"
    done = code.completion_times(found)
    times = np.asarray(prepared.run(draws).times, dtype=np.float64)
    if not np.all(done <= times + 1e-12 * np.abs(times) + 1e-15):
        return f"model {model.name}'s arrivals do not explain its iteration times"
    return None


class _Encoder:
    """Every message key's partitions (its worker's first ``message_prefix`` ones)."""

    def __init__(self, code: GradientCode) -> None:
        self.code = code
        self.keys = code.all_message_keys()
        self.needs = []
        for key in self.keys:
            mine = tuple(code.partitions(code.worker_of(key)))
            self.needs.append(list(mine[: int(code.message_prefix(key))]))

    def messages(
        self, responders: Sequence[int], point: np.ndarray, model: Model, split: Split
    ) -> dict[Any, np.ndarray]:
        """The responders' messages (indices into ``keys``) at ``point``."""
        used = sorted({p for q in responders for p in self.needs[q]})
        partials = np.empty((len(split.parts), point.size))
        for p in used:
            partials[p] = model.partial_gradient(*split.parts[p], point)
        code = self.code
        return {
            self.keys[q]: code.encode_message(self.keys[q], partials[self.needs[q]])
            for q in responders
        }


def simulate_to_target(
    problem: TrainingProblem,
    model: TimingModel,
    code: GradientCode,
    target: float,
    *,
    max_iterations: int,
    replicates: int,
    seed: int,
) -> Convergence:
    """``replicates`` simulated runs of ``code`` under ``model`` to a loss ``<= target``
    (module docstring). ``ConfigError`` when ``code`` cannot train the problem; ``ValueError``
    when ``unsupported(model, code)`` says it cannot be simulated (check that first)."""
    reason = unsupported(model, code)
    if reason is not None:
        raise ValueError(f"{code.name}: {reason}")
    plan, split = problem.check(code)
    prepared = model.prepare(code)
    arrivals_of = _arrivals_method(prepared)
    assert arrivals_of is not None  # unsupported() said so
    encoder = _Encoder(code)
    runs = []
    for replicate in range(replicates):
        rng = np.random.default_rng([seed, STREAM, replicate])
        draws = model.sample(rng, max_iterations, code.n)
        times = np.asarray(prepared.run(draws).times, dtype=np.float64)
        arrivals = np.asarray(arrivals_of(draws), dtype=np.float64)
        done = code.completion_times(arrivals)
        runs.append(
            _replicate(problem, plan, split, encoder, target, times, arrivals <= done[:, None])
        )
    return Convergence(tuple(runs), max_iterations)


def _replicate(
    problem: TrainingProblem,
    plan: Plan,
    split: Split,
    encoder: _Encoder,
    target: float,
    times: np.ndarray,
    answered: np.ndarray,
) -> Replicate:
    """One run along trials ``times`` ``(M,)`` with responders ``answered`` ``(M, keys)``."""
    model, code, rows = problem.model, encoder.code, split.data.rows
    features = split.data.features
    optimizer = plan.optimizer()
    state = optimizer.init(np.zeros(features))
    loss = problem.loss(split, optimizer.model(state))
    if loss <= target:
        return Replicate(0, 0.0, True, loss)
    elapsed = 0.0
    for t in range(times.size):
        if not math.isfinite(times[t]):
            return Replicate(t, elapsed, False, loss, f"iteration {t + 1} never completes")
        responders = np.flatnonzero(answered[t]).tolist()
        point = optimizer.point(state)
        messages = encoder.messages(responders, point, model, split)
        decoded = code.decode_result(messages, features).gradient
        optimizer.step(state, t, model.full_gradient(decoded, point, rows, split.l2))
        elapsed += float(times[t])
        loss = problem.loss(split, optimizer.model(state))
        if loss <= target:
            return Replicate(t + 1, elapsed, True, loss)
        if not math.isfinite(loss):
            return Replicate(t + 1, elapsed, False, loss, f"diverged at iteration {t + 1}")
    return Replicate(times.size, elapsed, False, loss, f"not reached in {times.size} iterations")


__all__ = [
    "STREAM",
    "Convergence",
    "ExactTrace",
    "Replicate",
    "TrainingProblem",
    "exact_iterations",
    "simulate_to_target",
    "unsupported",
]
