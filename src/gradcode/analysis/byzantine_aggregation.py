"""One gradient step under every attack: exact coded correction, votes, robust aggregators and
no defence side by side, on the same gradients and the same liars.

Issue 41's comparison in simulation (the MPI runs of ``config/experiments/byzantine*.yaml``
train; this measures one step, many placements, cheaply). ``N = 15`` workers, ``a = 1`` and
``2`` liars, ``s = 0``. The schemes are built by name (data, not dispatch); what is done with
each comes from its declared capabilities:

- every code's own decoder (``decode_result``): ``uncoded``'s is the plain sum, no defence
  (the mean of ``n`` gradients times ``n``); the codes declaring ``corrects_adversaries``
  (DRACO's repetition and cyclic codes and paper 004's heterogeneous code, each designed for
  ``a = 1`` and ``a = 2``; DETOX's and ByzShield's votes, designed for ``(r - 1) / 2 = 1``)
  decode, name the liars or detect them (``NotDecodableError``);
- every aggregator of ``gradcode.aggregators`` (built-ins and installed plug-ins) over the
  values of every code declaring ``aggregable``: ``uncoded``'s ``n`` gradients, DETOX's group
  votes (``r = 3``, 5 votes), ByzShield's file votes (MOLS ``l = 5``, ``r = 3``, 25 votes);
  ``total`` times the aggregate is the gradient. An aggregator taking a keyword ``f`` (the
  inputs to withstand) gets the most values the liars can corrupt on that code (the worst
  placement, ``gradcode.codes.distortion``), and never less than its default; the others run
  at their defaults. One whose ``refusal`` rejects the number of values (Bulyan needs ``4f +
  3``) is a row saying so; ``tolerated`` says whether the corrupted values stay within its
  ``tolerates`` (its error bound holds) and, if not, why.

Attacks: every attack of ``gradcode.attacks`` at its defaults, plus ``LARGE`` variants
(reversed at scale 100, a constant of 1000 in every coordinate; the honest partial gradients'
entries are of order 1-10 here). Liars lie in every message they send. An attack the messages
cannot feed (fewer honest messages than it needs) is a refused row.

Liar placements: ``patterns`` random sets of ``a`` workers, and for aggregable codes also the
worst placement (the first set corrupting the most values, ``worst_distortion``), under
``patterns`` fresh gradients.

Gradients: logistic regression on a seeded synthetic data set (``ROWS`` rows, ``FEATURES``
standard normal features, labels drawn from a planted model), cut into each code's ``k``
partitions in order; a partial gradient is the sum of its rows' logistic-loss gradients at a
model ``w`` drawn per pattern (``N(0, 1 / FEATURES)``: a model mid-training). Real gradients
rather than Gaussian vectors because what a robust aggregator loses depends on how the honest
values spread around their mean: here they are i.i.d. samples of one data distribution, with
correlated coordinates and a non-zero mean, as in the papers' experiments.

Columns per row: the scheme and its parameters, its design ``a``, the ``aggregator`` (empty:
the code's decoder; ``defence`` says decoder, aggregator, vote + aggregator or none; for an
aggregator its parameters, the ``values`` the code hands it, the most ``corrupted_values`` over
the row's placements and ``tolerated``), the attack and its parameters,
``liars``, ``placement`` (random or worst), ``exact_fraction`` (relative error <= 1e-8 against
an independent compensated sum of the partials), ``mean_rel_error``, ``max_rel_error``,
``mean_cosine`` and ``min_cosine`` to the honest full gradient (over the patterns not
detected), ``named_fraction`` (decoders that name liars: exactly the liars named),
``detected_fraction`` (``NotDecodableError`` or an aggregator refusing the values left),
``refused`` (why the combination cannot run; empty otherwise) and ``cpu_time_us`` (mean time of
one decode, or of one ``aggregation_inputs`` plus ``aggregate``, in microseconds of the calling
thread's CPU time, ``time.thread_time``: a machine shared with other jobs inflates wall-clock
times of such short calls several-fold, not CPU time; the arrays are too small for BLAS
threads).
"""

from __future__ import annotations

import inspect
import math
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gradcode import aggregators, attacks
from gradcode.aggregators import Aggregator, AggregatorError
from gradcode.analysis.base import Analysis, Progress
from gradcode.analysis.heterogeneous_comm_cost import EXACT_TOL, fsum_columns, relative_error
from gradcode.attacks import Attack
from gradcode.codes import GradientCode, NotDecodableError, build
from gradcode.codes.distortion import worst_distortion
from gradcode.codes.placements import speed_placement

#: workers of every scheme (ByzShield's MOLS placement l = 5, r = 3 has K = 15 too)
N = 15
#: liars per step
LIARS = (1, 2)
#: rows and features of the synthetic logistic-regression data set
ROWS, FEATURES = 3000, 20
#: attacks run beside their defaults (attack name -> parameters): the large versions
LARGE: dict[str, dict[str, float]] = {"reversed": {"scale": 100.0}, "constant": {"value": 1000.0}}
#: expected time per partition of paper 004's heterogeneous workers: 5 fast, 10 half as fast
TIMES = [1.0] * 5 + [2.0] * 10


def schemes() -> list[tuple[str, dict[str, Any]]]:
    """``(scheme, params)`` of every code compared (names to build: data, not dispatch)."""
    found: list[tuple[str, dict[str, Any]]] = [
        ("uncoded", {"n": N}),
        ("detox", {"n": N, "r": 3}),
        ("byzshield", {"l": 5, "r": 3}),
    ]
    for design in (1, 2):
        found.append(("draco-repetition", {"n": N, "a": design}))
        found.append(("draco-cyclic", {"n": N, "a": design}))
        placement = speed_placement(N, 2 * design + 1, TIMES)
        found.append(("heterogeneous", {"placement": placement, "a": design}))
    return found


def attack_variants() -> list[Attack]:
    """Every registered attack at its defaults, and the ``LARGE`` variants."""
    found = [attacks.build(name) for name in attacks.available()]
    found += [attacks.build(name, params) for name, params in LARGE.items()]
    return found


@dataclass(frozen=True)
class Problem:
    """The seeded data set every scheme's partial gradients come from."""

    X: np.ndarray
    y: np.ndarray

    @classmethod
    def draw(cls, rng: np.random.Generator) -> Problem:
        X = rng.standard_normal((ROWS, FEATURES))
        planted = rng.standard_normal(FEATURES)
        y = (rng.random(ROWS) < 1.0 / (1.0 + np.exp(-X @ planted))).astype(np.float64)
        return cls(X, y)

    def partials(self, k: int, w: np.ndarray) -> np.ndarray:
        """``(k, FEATURES)``: each partition's sum of logistic-loss gradients at ``w``."""
        residual = 1.0 / (1.0 + np.exp(-self.X @ w)) - self.y
        rows = np.array_split(np.arange(ROWS), k)
        return np.stack([self.X[part].T @ residual[part] for part in rows])


@dataclass
class Tally:
    """What one (code, reducer, attack, liars, placement) cell saw over its patterns."""

    errors: list[float] = field(default_factory=list)
    cosines: list[float] = field(default_factory=list)
    named: int = 0
    detected: int = 0
    seconds: float = 0.0
    calls: int = 0

    def add(self, gradient: np.ndarray | None, reference: np.ndarray, seconds: float) -> None:
        self.seconds += seconds
        self.calls += 1
        if gradient is None:
            self.detected += 1
            return
        self.errors.append(relative_error(gradient, reference))
        norms = float(np.linalg.norm(gradient) * np.linalg.norm(reference))
        self.cosines.append(float(gradient @ reference) / norms if norms > 0 else 0.0)

    def columns(self, patterns: int, names: bool) -> dict[str, Any]:
        errors, cosines = np.array(self.errors), np.array(self.cosines)
        return {
            "patterns": patterns,
            "exact_fraction": float((errors <= EXACT_TOL).sum()) / patterns,
            "mean_rel_error": float(errors.mean()) if errors.size else None,
            "max_rel_error": float(errors.max()) if errors.size else None,
            "mean_cosine": float(cosines.mean()) if cosines.size else None,
            "min_cosine": float(cosines.min()) if cosines.size else None,
            "named_fraction": self.named / patterns if names else None,
            "detected_fraction": self.detected / patterns,
            "refused": "",
            "cpu_time_us": 1e6 * self.seconds / self.calls if self.calls else None,
        }


def configured(name: str, code: GradientCode, liars: int) -> Aggregator:
    """Aggregator ``name`` for ``code`` with ``liars`` liars: ``f`` (where its constructor
    takes one) the most values the liars can corrupt, at least the default."""
    signature = inspect.signature(aggregators.aggregator_class(name))
    declared = signature.parameters.get("f")
    if declared is None:
        return aggregators.build(name)
    default = declared.default if declared.default is not inspect.Parameter.empty else 0
    worst = worst_distortion(code, liars).distorted
    return aggregators.build(name, {"f": max(int(default), worst)})


def reducers(code: GradientCode, liars: int) -> list[Aggregator | None]:
    """``None`` (the code's decoder) and, for an aggregable code, every aggregator."""
    found: list[Aggregator | None] = [None]
    if code.capabilities.aggregable:
        found += [configured(name, code, liars) for name in aggregators.available()]
    return found


def defence(code: GradientCode, reducer: Aggregator | None) -> str:
    """What stands between the liars and the step: a decoder, a vote and an aggregator, an
    aggregator, or nothing."""
    corrects = code.capabilities.corrects_adversaries and code.a > 0
    if reducer is None:
        return "decoder" if corrects else "none"
    return "vote + aggregator" if corrects else "aggregator"


def reduce(
    code: GradientCode, reducer: Aggregator | None, messages: dict, length: int
) -> tuple[np.ndarray | None, set[int], float]:
    """``(gradient or None when detected, workers named, seconds)`` of one call."""
    start = time.thread_time()
    try:
        if reducer is None:
            result = code.decode_result(messages, length)
            gradient, named = result.gradient, result.adversaries
        else:
            inputs = code.aggregation_inputs(messages, length)
            gradient = reducer.aggregate(inputs.values).value * inputs.total
            named = inputs.adversaries
    except (NotDecodableError, AggregatorError):
        return None, set(), time.thread_time() - start
    seconds = time.thread_time() - start
    return gradient, {int(code.worker_of(key)) for key in named}, seconds


def all_messages(code: GradientCode, partials: np.ndarray) -> dict:
    """Every message of every worker, each from the worker's own partitions."""
    messages: dict = {}
    for worker in range(code.n):
        messages.update(code.encode_all(worker, partials[list(code.partitions(worker))]))
    return messages


def liar_sets(
    code: GradientCode, liars: int, patterns: int, rng: np.random.Generator
) -> Iterator[tuple[str, list[tuple[int, ...]]]]:
    """``(placement, one liar set per pattern)``: random sets, and for an aggregable code the
    worst placement (the one corrupting the most values) in every pattern."""
    random_sets = [
        tuple(sorted(rng.choice(code.n, liars, replace=False).tolist())) for _ in range(patterns)
    ]
    yield "random", random_sets
    if code.capabilities.aggregable:
        yield "worst", [worst_distortion(code, liars).worst] * patterns


@dataclass(frozen=True)
class Step:
    """The shared draws: the data set and one model per pattern."""

    problem: Problem
    models: np.ndarray  # (patterns, FEATURES)

    def honest(self, code: GradientCode, pattern: int) -> tuple[np.ndarray, np.ndarray]:
        """``(partials (k, FEATURES), reference gradient)`` of ``pattern`` for ``code``."""
        partials = self.problem.partials(code.k, self.models[pattern])
        return partials, fsum_columns(partials)


def base_row(code: GradientCode, attack: Attack, liars: int, placement: str) -> dict[str, Any]:
    params = code.params()
    return {
        "scheme": code.name,
        "params": {key: value for key, value in params.items() if key != "placement"},
        "n": code.n,
        "k": code.k,
        "design_a": code.a,
        "attack": attack.name,
        "attack_params": attack.params(),
        "liars": liars,
        "placement": placement,
    }


def reducer_row(
    code: GradientCode, reducer: Aggregator | None, sets: Sequence[tuple[int, ...]]
) -> dict[str, Any]:
    """The reducer's columns before any pattern runs: its name, parameters, why it is refused
    and whether the liars stay within what it tolerates."""
    row: dict[str, Any] = {"defence": defence(code, reducer), "aggregator": "", "refused": ""}
    if reducer is None:
        return row | {"aggregator_params": "", "values": None, "tolerated": ""}
    count = code.aggregation_count()
    corrupted = max(code.aggregation_corrupted(liars) for liars in sets)
    beyond = reducer.byzantine_refusal(count, corrupted)
    return row | {
        "aggregator": reducer.name,
        "aggregator_params": reducer.params(),
        "values": count,
        "corrupted_values": corrupted,
        "tolerated": "yes" if beyond is None else beyond,
        "refused": reducer.refusal(count) or "",
    }


def run_cell(
    code: GradientCode,
    attack: Attack,
    sets: Sequence[tuple[int, ...]],
    step: Step,
    rng: np.random.Generator,
) -> list[dict[str, Any]]:
    """One row per reducer of ``code`` for ``attack`` by the liars ``sets[p]`` in pattern
    ``p``."""
    liars = len(sets[0])
    heads = [(reducer, reducer_row(code, reducer, sets)) for reducer in reducers(code, liars)]
    keys = len(code.all_message_keys())
    lying = sum(len(code.message_keys(w)) for w in sets[0])
    refused = attack.refusal(keys - lying)
    if refused:
        return [head | {"refused": refused} for _, head in heads]
    names = code.capabilities.corrects_adversaries and code.a > 0
    tallies = [Tally() for _ in heads]
    length = FEATURES
    for pattern, bad in enumerate(sets):
        partials, reference = step.honest(code, pattern)
        liar_keys = [key for w in bad for key in code.message_keys(w)]
        forged = attack.apply(all_messages(code, partials), liar_keys, rng)
        for (reducer, head), tally in zip(heads, tallies, strict=True):
            if head["refused"]:
                continue
            gradient, named, seconds = reduce(code, reducer, forged, length)
            tally.add(gradient, reference, seconds)
            tally.named += gradient is not None and named == set(bad)
    rows = []
    for (reducer, head), tally in zip(heads, tallies, strict=True):
        if head["refused"]:
            rows.append(head)
        else:
            rows.append(head | tally.columns(len(sets), names and reducer is None))
    return rows


def simulate(patterns: int, seed: int, progress: Progress) -> list[dict[str, Any]]:
    """Every row of the analysis with ``patterns`` placements (and gradients) per cell."""
    rng = np.random.default_rng(seed)
    step = Step(Problem.draw(rng), rng.standard_normal((patterns, FEATURES)) / math.sqrt(FEATURES))
    variants = attack_variants()
    rows: list[dict[str, Any]] = []
    for name, params in schemes():
        code = build(name, **params)
        progress(f"{name} n={code.n} k={code.k} a={code.a}")
        for liars in LIARS:
            for placement, sets in liar_sets(code, liars, patterns, rng):
                for attack in variants:
                    base = base_row(code, attack, liars, placement)
                    rows += [base | row for row in run_cell(code, attack, sets, step, rng)]
    return rows


def compute(*, trials: int, seed: int, progress: Progress) -> Analysis:
    # ~600 cells; trials / 50 placements each keeps the default trials = 1000 near 10 s
    patterns = max(4, trials // 50)
    rows = simulate(patterns, seed, progress)
    meta = {
        "what": (
            "one gradient step under every attack of gradcode.attacks with a = 1 and 2 liars "
            "among n = 15: exact coded correction (DRACO, paper 004), votes (DETOX, "
            "ByzShield) with and without every aggregator of gradcode.aggregators, the "
            "aggregators over uncoded gradients, and no defence"
        ),
        "schemes": [{"scheme": name, **params} for name, params in schemes()],
        "aggregators": aggregators.available(),
        "attacks": [{"name": a.name, "params": a.params()} for a in attack_variants()],
        "liars": list(LIARS),
        "patterns_per_cell": patterns,
        "gradient_model": (
            f"logistic regression, {ROWS} rows x {FEATURES} standard normal features, planted "
            "labels; partial gradient = sum over a partition's rows at w ~ N(0, 1/features) "
            "drawn per pattern"
        ),
        "aggregator_f": "the most values the liars corrupt (worst placement), >= the default",
        "exact_tolerance": EXACT_TOL,
        "cpu_time": "time.thread_time around one decode_result or aggregation_inputs + aggregate",
    }
    return Analysis(rows, meta)
