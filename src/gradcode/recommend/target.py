"""Codes ranked by expected time to a target training loss on the user's training problem.

``rank_to_target(rec, model, target)`` adds to a ``Recommendation`` (ranked by time per
iteration) the section ``TargetSection``; ``recommend(..., target=TargetLoss(...))`` does both.

What is computed, so that the cost stays bounded:

- exact codes: the ``finalists`` fastest ranked by time per iteration (codes with the very
  same times, one code under this model by other names, count once: the first stands for
  them), and the reference. Each follows exact gradient descent, so its time to target is
  ``I x E[time per iteration]``, ``I`` the exact trajectory's iterations on its training rows
  (``convergence.exact_iterations``), its interval the row's interval times ``I``. No
  simulation.
- approximate codes (``code.exact is False``): per scheme, those of the ranking's approximate
  section at evenly spaced places of their order by time per iteration, ``finalists`` of them
  (the fastest and the slowest included; all when there are no more): the fastest ignore the
  most workers and step along the worst estimates, the slowest wait the longest, and the best
  time to target lies anywhere between. Each is simulated for ``replicates`` replicates of at
  most ``max_iterations`` iterations (``convergence.simulate_to_target``): at most
  ``finalists x schemes x replicates x max_iterations`` iterations in all, each one pass over
  the partitions its responders need and one over the training rows for the loss. The others
  are counted in ``not_simulated``; a code the model cannot simulate or that cannot train the
  problem is in ``skipped`` with the reason.

Ranking: codes that reached the target in every replicate (an exact code: whose ``I`` exists),
by mean time to target; after them, unranked, those that reached it in some replicates (their
mean is over those only, a note says so), then those that never did ("not reached in M
iterations": never dropped).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from gradcode.errors import UserError
from gradcode.recommend.candidates import Skip
from gradcode.recommend.convergence import (
    ExactTrace,
    TrainingProblem,
    exact_iterations,
    simulate_to_target,
    unsupported,
)
from gradcode.recommend.errors import RecommendError
from gradcode.recommend.recommendation import (
    EXACT,
    SIMULATED,
    Recommendation,
    Row,
    TargetRow,
    TargetSection,
    same_times_key,
)
from gradcode.timing import TimingModel

DEFAULT_MAX_ITERATIONS = 300
DEFAULT_REPLICATES = 5


@dataclass(frozen=True)
class TargetLoss:
    """What to reach: ``loss`` on ``problem`` within ``max_iterations``; ``replicates``
    simulated runs per approximate code. Checked here (``RecommendError`` naming the field)."""

    problem: TrainingProblem
    loss: float
    max_iterations: int = DEFAULT_MAX_ITERATIONS
    replicates: int = DEFAULT_REPLICATES

    def __post_init__(self) -> None:
        loss = self.loss
        if isinstance(loss, bool) or not isinstance(loss, int | float) or not math.isfinite(loss):
            raise RecommendError(f"target loss must be a finite number (got {loss!r})")
        for name, value in (
            ("max_iterations", self.max_iterations),
            ("replicates", self.replicates),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise RecommendError(f"{name} must be an integer >= 1 (got {value!r})")

    @classmethod
    def from_run_file(cls, path: str, loss: float, **options: int) -> TargetLoss:
        """The training problem of the run file ``path`` (``ConfigError`` naming the key)."""
        return cls(TrainingProblem.from_file(path), loss, **options)


def spread(rows: Sequence[Row], count: int) -> list[Row]:
    """``count`` of ``rows`` (ordered by time per iteration) at evenly spaced places, the first
    and the last included; all of them when there are no more than ``count``."""
    if len(rows) <= count:
        return list(rows)
    if count == 1:
        return [rows[0]]
    places = sorted({round(i * (len(rows) - 1) / (count - 1)) for i in range(count)})
    return [rows[i] for i in places]


def choose_approximate(rows: Sequence[Row], count: int) -> list[Row]:
    """Per scheme, ``spread(its rows, count)``, in the ranking's order."""
    families: dict[str, list[Row]] = {}
    for row in rows:
        families.setdefault(row.scheme, []).append(row)
    chosen = {id(r) for family in families.values() for r in spread(family, count)}
    return [row for row in rows if id(row) in chosen]


def _exact_row(row: Row, trace: ExactTrace) -> TargetRow:
    result = row.result
    if trace.iterations is None:
        stop = f"not reached in {trace.max_iterations} iterations (loss {trace.loss:.6g})"
        return TargetRow(row, EXACT, 1, 0, None, None, None, None, result.mean_time, (stop,))
    count = trace.iterations
    return TargetRow(
        row,
        EXACT,
        1,
        1,
        float(count),
        count * result.mean_time,
        count * result.ci_low,
        count * result.ci_high,
        result.mean_time,
    )


def _order(rows: list[TargetRow]) -> list[TargetRow]:
    """Ranked (module docstring), with the ratio to the best exact code's time."""

    def key(item: tuple[int, TargetRow]) -> tuple[Any, ...]:
        index, row = item
        group = 0 if row.complete else (1 if row.reached else 2)
        mean = math.inf if row.mean_time is None else row.mean_time
        return (group, -row.reached / row.replicates, mean, not row.code.exact, index)

    ordered = [row for _, row in sorted(enumerate(rows), key=key)]
    exact = [r for r in ordered if r.code.exact and r.complete]
    base = exact[0].mean_time if exact else None
    out, place = [], 0
    for row in ordered:
        rank = None
        if row.complete:
            place += 1
            rank = place
        ratio = None
        if base and row.mean_time is not None:
            ratio = row.mean_time / base
        out.append(replace(row, rank=rank, ratio=ratio))
    return out


def rank_to_target(
    rec: Recommendation,
    model: TimingModel,
    target: TargetLoss,
    *,
    finalists: int,
    seed: int,
    confidence: float,
    progress: Callable[[str], None] | None = None,
) -> TargetSection:
    """The time-to-target section of ``rec`` (module docstring) under ``model`` (the ranking's).

    ``finalists``: exact codes taken, approximate codes simulated per scheme; ``seed``: of the
    replicates; ``confidence``: level of their intervals. A code that cannot train the problem
    (its run-file check or its data split fails: ``UserError``) is left out with the reason;
    ``recommend`` loads the data for ``n`` partitions first, so a bad run file fails at once.
    """
    say = progress if progress is not None else (lambda line: None)
    started = time.perf_counter()
    problem = target.problem
    rows, traces, skipped = _exact_rows(rec, target, finalists)
    chosen = choose_approximate(rec.approximate, finalists)
    runnable, left_out = _runnable(chosen, model, problem)
    skipped += left_out
    if runnable:
        say(
            f"time to target loss {target.loss:g}: simulating {len(runnable)} approximate codes"
            f" x {target.replicates} replicates, at most {target.max_iterations} iterations each"
        )
    for number, row in enumerate(runnable, start=1):
        simulated = _simulated_row(row, model, target, seed=seed, confidence=confidence)
        rows.append(simulated)
        reached = simulated.reached
        say(
            f"[{number}/{len(runnable)}] {row.scheme}: reached in {reached}/{target.replicates}"
            + (f", mean time {simulated.mean_time:.6g}" if reached else "")
        )
    return TargetSection(
        loss=target.loss,
        max_iterations=target.max_iterations,
        replicates=target.replicates,
        problem=problem.describe(),
        source=problem.source,
        rows=_order(rows),
        exact=[traces[rows_] for rows_ in sorted(traces)],
        skipped=_merge(skipped),
        not_simulated=len(rec.approximate) - len(chosen),
        simulated=len(runnable),
        seconds=time.perf_counter() - started,
    )


def _exact_rows(
    rec: Recommendation, target: TargetLoss, finalists: int
) -> tuple[list[TargetRow], dict[int, ExactTrace], list[Skip]]:
    """The times to target of the ``finalists`` fastest exact codes (equal times counted
    once) and the reference; the exact trajectories by number of training rows; the codes
    that cannot train the problem."""
    problem = target.problem
    skipped: list[Skip] = []
    rows: list[TargetRow] = []
    traces: dict[int, ExactTrace] = {}

    def exact(row: Row) -> bool:
        """Add ``row``'s time to target (``False``: it cannot train the problem)."""
        try:
            trace = exact_iterations(problem, row.code, target.loss, target.max_iterations)
        except UserError as error:
            skipped.append(Skip(row.scheme, f"cannot train this problem: {error}"))
            return False
        traces.setdefault(trace.rows, trace)
        rows.append(_exact_row(row, trace))
        return True

    seen: set[tuple[int, float, float]] = set()
    for row in rec.ranked:
        if len(seen) == finalists:
            break
        if same_times_key(row.result) not in seen and exact(row):
            seen.add(same_times_key(row.result))
    reference = rec.reference
    if reference is not None and all(r.code is not reference.code for r in rows):
        exact(reference)
    return rows, traces, skipped


def _runnable(
    chosen: Sequence[Row], model: TimingModel, problem: TrainingProblem
) -> tuple[list[Row], list[Skip]]:
    """The ``chosen`` approximate codes that can be simulated under ``model`` on ``problem``,
    and why the others cannot."""
    skipped: list[Skip] = []
    runnable: list[Row] = []
    for row in chosen:
        reason = unsupported(model, row.code)
        if reason is None:
            try:
                problem.check(row.code)
            except UserError as error:
                reason = f"cannot train this problem: {error}"
        if reason is not None:
            skipped.append(Skip(row.scheme, reason))
        else:
            runnable.append(row)
    return runnable, skipped


def _simulated_row(
    row: Row, model: TimingModel, target: TargetLoss, *, seed: int, confidence: float
) -> TargetRow:
    """An approximate code's time to target from ``target.replicates`` simulated runs."""
    result = simulate_to_target(
        target.problem,
        model,
        row.code,
        target.loss,
        max_iterations=target.max_iterations,
        replicates=target.replicates,
        seed=seed,
    )
    mean, low, high = result.interval(confidence)
    reached = result.reached
    return TargetRow(
        row,
        SIMULATED,
        target.replicates,
        reached,
        result.mean_iterations(),
        mean if reached else None,
        low if reached else None,
        high if reached else None,
        result.time_per_iteration(),
        tuple(result.stops()),
    )


def _merge(skips: list[Skip]) -> list[Skip]:
    """One ``Skip`` per scheme and reason, counted."""
    counts: dict[tuple[str, str], int] = {}
    for skip in skips:
        counts[(skip.scheme, skip.reason)] = counts.get((skip.scheme, skip.reason), 0) + 1
    return [Skip(scheme, reason, count) for (scheme, reason), count in counts.items()]
