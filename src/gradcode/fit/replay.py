"""The goodness of fit of a tree run's computation times, by replaying the tree's decision.

A tree node's computation is censored when the next model comes first (``budget``,
``gradcode.fit.observations``). That moment is when the master decoded, plus the runtime's own
cost, and the master decoded when the tree's rule was met: by the very nodes whose times are
being tested. So the complete times are not independent draws truncated at their budgets, and
the conditional probability transforms that ``gradcode.fit.shifted_exponential`` tests are not
uniform: on fake CodedReduce runs with a quarter of the nodes cut short, the true model's
bootstrap p-value was 0.01.

``tree_ks`` keeps the same distance (the transforms ``F(x) / F(budget / p)`` of the complete
times) and calibrates it by replaying the decision: every replicate draws every node's
computation from the fit, adds the node's logged link delay (observed apart, independent),
finds the tree's completion with ``gradcode.timing.tree`` (instant forwarding, as the
simulator), moves every budget by as much as that completion moved (each node keeps its logged
``budget - completion``: the runtime's cost and forwarding), censors, refits the shift and rate
(closed form) and measures the distance again. The p-value is the share of replicates at least
as far as the data.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from gradcode.codes.tree import TreeCode
from gradcode.fit.shifted_exponential import KS_MARGIN
from gradcode.timing.tree import tree_outcome


@dataclass(frozen=True)
class TreeIterations:
    """A tree run's kept iterations, arrays of shape ``(T, n)`` (node order) unless noted.

    ``subsets``: ``p`` per node, ``(n,)``; ``link``: seconds of each node's drawn link delay;
    ``offset``: its ``budget`` minus the tree's completion on the logged times; ``x``: its time
    per subset (``nan`` where cut short); ``budget``: seconds until the next model came;
    ``present``: it logged a row (a node lost or never answering has none).
    """

    code: TreeCode
    subsets: np.ndarray
    link: np.ndarray
    offset: np.ndarray
    x: np.ndarray
    budget: np.ndarray
    present: np.ndarray


def completion(code: TreeCode, work: np.ndarray, link: np.ndarray, present: np.ndarray):
    """The tree's completion per iteration, ``(T,)``, on ``work + link`` (absent: never)."""
    return tree_outcome(code, np.where(present, work + link, np.inf), 0.0).times


def tree_ks(
    runs: Sequence[TreeIterations],
    shift: float,
    rate: float,
    *,
    workers: Sequence[int] | None = None,
    replicates: int,
    rng: np.random.Generator,
) -> tuple[float, float]:
    """``(distance, p-value)`` of the fit ``shift + Exp(rate)`` to the runs' complete times of
    ``workers`` (default all); the p-value is ``nan`` without ``replicates``."""
    observed = _distance(runs, [_given(run, run.x) for run in runs], shift, rate, workers)
    if replicates == 0 or not math.isfinite(observed):
        return observed, math.nan
    far = valid = 0
    for _ in range(replicates):
        drawn = []
        for run in runs:
            x = shift + rng.standard_exponential(run.x.shape) / rate
            drawn.append(_given(run, x))
        again = _refit(runs, drawn, workers)
        if again is None:
            continue
        distance = _distance(runs, drawn, *again, workers)
        if math.isfinite(distance):
            valid += 1
            far += distance >= observed
    return observed, (1 + far) / (1 + valid) if valid else math.nan


@dataclass(frozen=True)
class _Given:
    x: np.ndarray  # (T, n), nan where censored
    budget: np.ndarray  # (T, n)


def _given(run: TreeIterations, x: np.ndarray) -> _Given:
    """``x`` censored as the run would have: the data itself (``x is run.x``), or a replicate's
    draws against the budgets its own completion times give."""
    if x is run.x:
        return _Given(run.x, run.budget)
    work = run.subsets * x
    budget = completion(run.code, work, run.link, run.present)[:, None] + run.offset
    done = run.present & (work <= budget)
    return _Given(np.where(done, x, np.nan), budget)


def _selected(run: TreeIterations, workers: Sequence[int] | None) -> np.ndarray:
    chosen = np.zeros(run.present.shape[1], dtype=bool)
    chosen[list(range(chosen.size)) if workers is None else list(workers)] = True
    return run.present & chosen[None, :]


def _refit(
    runs: Sequence[TreeIterations], given: Sequence[_Given], workers: Sequence[int] | None
) -> tuple[float, float] | None:
    """The compute-only MLE (``gradcode.fit.shifted_exponential``'s closed form)."""
    complete, shift, pieces = 0, math.inf, []
    for run, data in zip(runs, given, strict=True):
        mask = _selected(run, workers)
        done = mask & np.isfinite(data.x)
        complete += int(done.sum())
        if done.any():
            shift = min(shift, float(data.x[done].min()))
        pieces.append((run, data, mask, done))
    if complete < 2 or not math.isfinite(shift):
        return None
    exposure = 0.0
    for run, data, mask, done in pieces:
        exposure += float((data.x[done] - shift).sum())
        ends = data.budget / run.subsets
        cut = mask & ~done
        exposure += float(np.maximum(ends[cut] - shift, 0.0).sum())
    return (shift, complete / exposure) if exposure > 0 else None


def _distance(
    runs: Sequence[TreeIterations],
    given: Sequence[_Given],
    shift: float,
    rate: float,
    workers: Sequence[int] | None,
) -> float:
    """The KS distance of the complete times' ``F(x) / F(budget / p)`` to the uniform law
    (those within ``KS_MARGIN`` of their budget left out, as the shifted-exponential fit's)."""
    values = []
    for run, data in zip(runs, given, strict=True):
        ends = data.budget / run.subsets
        tested = _selected(run, workers) & np.isfinite(data.x)
        tested &= data.x <= ends * (1.0 - KS_MARGIN)
        x, end = data.x[tested], ends[tested]
        with np.errstate(invalid="ignore", divide="ignore"):
            top = -np.expm1(-rate * np.maximum(end - shift, 0.0))
            values.append(-np.expm1(-rate * np.maximum(x - shift, 0.0)) / top)
    u = np.sort(np.concatenate(values)) if values else np.empty(0)
    u = u[np.isfinite(u)]
    if u.size < 2:
        return math.nan
    i = np.arange(1, u.size + 1)
    return float(np.maximum(i / u.size - u, u - (i - 1) / u.size).max())
