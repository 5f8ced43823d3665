"""What ``recommend`` returns: the ``Recommendation`` (its ``Row``s, ranked by time per
iteration, and the limits' ``Exclusion``s) and its time-to-target section (``TargetSection``,
of ``TargetRow``s).

They are computed by ``gradcode.recommend.rank`` and ``gradcode.recommend.target``; here apart
because ``target`` reads a ``Recommendation`` and a ``Recommendation`` holds a
``TargetSection``, so that neither of those modules imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gradcode.codes import GradientCode
from gradcode.recommend.candidates import WORKER_TIMES, Skip
from gradcode.recommend.convergence import ExactTrace
from gradcode.recommend.limits import Limits, load_fraction, message_fraction
from gradcode.recommend.speeds import WorkerTimes
from gradcode.sim.table import ResultRow
from gradcode.topology import topology_of

#: the stage that produced a row's estimate
FINAL, SCREENING = "final", "screening"
#: what ordered a row (``Row.ranked_by``): its own exact expected time, the exact time of a
#: code with the very same Monte Carlo times (the same code under this model), its MC mean
EXACT_TIME, EQUAL_TIMES, MONTE_CARLO = "exact", "exact of an equal-times code", "monte carlo"
#: relative difference below which two exact expected times are equal (quadrature accuracy)
EXACT_TOLERANCE = 1e-9
#: how a ``TargetRow``'s time to target was had (``TargetRow.method``)
EXACT, SIMULATED = "I x time per iteration", "simulated"
#: the fields of ``Row.record``, in order (the CSV's columns after ``section``)
RECORD_COLUMNS = (
    "rank",
    "scheme",
    "params",
    "workers",
    "exact",
    "s",
    "load",
    "message",
    "stage",
    "trials",
    "mean_time",
    "ci_low",
    "ci_high",
    "exact_time",
    "ranked_by",
    "std_time",
    "ratio_to_reference",
    "messages",
    "vectors",
    "floats",
    "origin",
    "notes",
)
#: the fields of ``TargetRow.record``, in order (CSV columns after the ranking's)
TARGET_COLUMNS = (
    "target_rank",
    "target_loss",
    "target_method",
    "iterations_to_target",
    "replicates",
    "reached",
    "mean_time_to_target",
    "ci_low_to_target",
    "ci_high_to_target",
    "time_per_iteration",
    "ratio_to_best_exact",
    "target_notes",
)


@dataclass(frozen=True)
class Row:
    """One simulated code: its estimate (``result``), the stage that produced it, the mean
    over the reference's mean (``ratio``, same stage), its rank among the exact codes, its
    exact expected time (``exact_time``, ``None`` without a closed form) and what ordered it
    (``ranked_by``: ``EXACT_TIME``, ``EQUAL_TIMES`` or ``MONTE_CARLO``; ``rank``'s module
    docstring, step 4)."""

    code: GradientCode
    origin: str
    result: ResultRow
    stage: str
    ratio: float | None
    rank: int | None = None
    within_limits: bool = True
    exact_time: float | None = None
    ranked_by: str = "monte carlo"

    @property
    def scheme(self) -> str:
        return self.code.name

    @property
    def params(self) -> dict[str, Any]:
        """The constructor parameters (``build(scheme, **params)`` rebuilds the code)."""
        return self.code.params()

    @property
    def load(self) -> float:
        return load_fraction(self.code)

    @property
    def message(self) -> float:
        return message_fraction(self.code)

    def notes(self) -> list[str]:
        """What a reader must know beside the time (from the code's declarations)."""
        caps, out = self.code.capabilities, []
        if not self.code.exact:
            out.append("approximate")
        if self.origin == WORKER_TIMES:
            out.append("sized to the worker times")
        if caps.codes_data:
            out.append(f"codes the data: exact for {'/'.join(caps.codes_data)} models only")
        if caps.corrects_adversaries and self.code.a:
            out.append(f"corrects {self.code.a} adversaries")
        topology = topology_of(self.code)
        if not topology.direct:
            out.append(f"{topology} topology")
        if not self.within_limits:
            out.append("outside the limits")
        return out

    def record(self) -> dict[str, Any]:
        """The row as flat fields (``RECORD_COLUMNS``), for CSV and JSON."""
        result = self.result
        return {
            "rank": self.rank,
            "scheme": self.scheme,
            "params": self.params,
            "workers": self.code.n,
            "exact": self.code.exact,
            "s": self.code.s,
            "load": self.load,
            "message": self.message,
            "stage": self.stage,
            "trials": result.trials,
            "mean_time": result.mean_time,
            "ci_low": result.ci_low,
            "ci_high": result.ci_high,
            "exact_time": self.exact_time,
            "ranked_by": self.ranked_by,
            "std_time": result.std_time,
            "ratio_to_reference": self.ratio,
            "messages": result.messages,
            "vectors": result.vectors,
            "floats": result.floats,
            "origin": self.origin,
            "notes": "; ".join(self.notes()),
        }


@dataclass(frozen=True)
class Exclusion:
    """Configurations a limit excluded, per scheme."""

    limit: str
    counts: dict[str, int]

    @property
    def total(self) -> int:
        return sum(self.counts.values())


@dataclass(frozen=True)
class Recommendation:
    """The result of ``recommend`` (``gradcode.recommend.rank``'s module docstring)."""

    n: int
    model_name: str
    model_params: dict[str, Any]
    limits: Limits
    trials: int
    screen_trials: int
    seed: int
    confidence: float
    ranked: list[Row]
    approximate: list[Row]
    reference: Row | None
    skipped: list[Skip]
    excluded: list[Exclusion]
    duplicates: int
    worker_times: WorkerTimes | None
    #: the ranking by expected time to a target loss (``None``: no ``target`` was given)
    to_target: TargetSection | None = None
    #: why no code has an exact expected time under this model (``None``: codes that declare
    #: a completion rule have one; ``gradcode.recommend.exact``)
    exact_unavailable: str | None = None

    @property
    def best(self) -> Row | None:
        """The fastest exact code within the limits (``None``: none is left)."""
        return self.ranked[0] if self.ranked else None

    @property
    def equivalents(self) -> list[Row]:
        """Codes ranked right after the best with its very times, trial by trial (the same
        code under this model by another name or construction: flat FRC and a depth-1
        CodedReduce tree over it, say)."""
        out: list[Row] = []
        for row in self.ranked[1:]:
            if not _same_times(row.result, self.ranked[0].result):
                break
            out.append(row)
        return out

    @property
    def runner_up(self) -> Row | None:
        """The fastest code after the best and its ``equivalents`` (``None``: there is none)."""
        place = 1 + len(self.equivalents)
        return self.ranked[place] if place < len(self.ranked) else None

    @property
    def tie(self) -> bool | None:
        """Whether the runner-up may be as fast as the best (``None``: no runner-up): with
        exact expected times for both, whether they are equal (to ``EXACT_TOLERANCE``);
        otherwise whether the runner-up's interval reaches the best's."""
        best, second = self.best, self.runner_up
        if best is None or second is None:
            return None
        if best.exact_time is not None and second.exact_time is not None:
            scale = max(abs(best.exact_time), abs(second.exact_time), 1e-300)
            return abs(second.exact_time - best.exact_time) <= EXACT_TOLERANCE * scale
        return second.result.ci_low <= best.result.ci_high

    @property
    def simulated(self) -> int:
        """Configurations simulated (the reference included)."""
        rows = {id(row.code) for row in [*self.ranked, *self.approximate]}
        if self.reference is not None:
            rows.add(id(self.reference.code))
        return len(rows)

    @property
    def finalists(self) -> int:
        rows = [*self.ranked, *self.approximate]
        if self.reference is not None and not self.reference.within_limits:
            rows.append(self.reference)
        return sum(row.stage == FINAL for row in rows)


def _same_times(a: ResultRow, b: ResultRow) -> bool:
    """Equal estimates from the same draws: the two codes finished together in every trial
    (as far as the mean and spread can tell)."""
    return same_times_key(a) == same_times_key(b)


def same_times_key(result: ResultRow) -> tuple[int, float, float]:
    """What makes two estimates one code under the model: equal times, trial by trial (as far
    as the trials, mean and spread tell)."""
    return (result.trials, result.mean_time, result.std_time)


@dataclass(frozen=True)
class TargetRow:
    """One code's time to target: from ``I`` and its time per iteration (``method`` EXACT) or
    simulated (SIMULATED). ``row``: its row of the ranking by time per iteration."""

    row: Row
    method: str
    replicates: int
    reached: int
    iterations: float | None
    mean_time: float | None
    ci_low: float | None
    ci_high: float | None
    time_per_iteration: float
    stops: tuple[str, ...] = ()
    rank: int | None = None
    ratio: float | None = None

    @property
    def code(self) -> GradientCode:
        return self.row.code

    @property
    def complete(self) -> bool:
        """Reached the target in every replicate."""
        return self.reached == self.replicates

    def notes(self) -> list[str]:
        out = [] if self.code.exact else ["approximate"]
        if 0 < self.reached < self.replicates:
            out.append(f"mean of the {self.reached} replicates that reached it")
        for stop in dict.fromkeys(self.stops):
            count = self.stops.count(stop)
            out.append(f"{stop}" + (f" ({count} replicates)" if count > 1 else ""))
        return out

    def record(self, target: float) -> dict[str, Any]:
        """The row as flat fields (``TARGET_COLUMNS``)."""
        return {
            "target_rank": self.rank,
            "target_loss": target,
            "target_method": self.method,
            "iterations_to_target": self.iterations,
            "replicates": self.replicates,
            "reached": self.reached,
            "mean_time_to_target": self.mean_time,
            "ci_low_to_target": self.ci_low,
            "ci_high_to_target": self.ci_high,
            "time_per_iteration": self.time_per_iteration,
            "ratio_to_best_exact": self.ratio,
            "target_notes": "; ".join(self.notes()),
        }


@dataclass(frozen=True)
class TargetSection:
    """The time-to-target section (``gradcode.recommend.target``): ranked ``rows``, the exact
    trajectories' ``exact`` traces (one per number of training rows), what was not simulated
    and why, and the wall-clock ``seconds`` it took."""

    loss: float
    max_iterations: int
    replicates: int
    problem: str
    source: str
    rows: list[TargetRow]
    exact: list[ExactTrace]
    skipped: list[Skip]
    not_simulated: int
    simulated: int
    seconds: float

    @property
    def best(self) -> TargetRow | None:
        """The code of least expected time to target (``None``: none reached it always)."""
        return self.rows[0] if self.rows and self.rows[0].rank is not None else None

    def as_json(self) -> dict[str, Any]:
        return {
            "target_loss": self.loss,
            "max_iterations": self.max_iterations,
            "replicates": self.replicates,
            "run": self.source,
            "problem": self.problem,
            "exact_iterations": [
                {"rows": trace.rows, "iterations": trace.iterations, "loss": trace.loss}
                for trace in self.exact
            ],
            "simulated": self.simulated,
            "not_simulated": self.not_simulated,
            "seconds": self.seconds,
            "skipped": [vars(skip) for skip in self.skipped],
        }
