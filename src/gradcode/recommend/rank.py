"""``recommend(model, n, ...)``: the candidate codes ranked by expected time per iteration.

Steps:

1. ``n`` is checked against the model's per-worker parameters, and with workers of unequal
   speed their relative times per data subset are measured (``speeds.worker_times``);
2. the candidates (``candidates.enumerate_candidates``: every registered scheme's grid at ``n``
   workers, plus the heterogeneous allocations for those times), minus what the ``Limits``
   exclude (counted per limit and scheme);
3. two-stage Monte Carlo with common random numbers (``gradcode.sim.montecarlo``):

   - screening: every candidate gets ``screen_trials`` trials;
   - final: per section, the ``finalists`` fastest by screening mean, and every other whose
     screening interval reaches below the screening leader's upper bound (it might still
     be the fastest), and the reference get the full ``trials``; then, once, every code still
     screened whose screening interval reaches below the section's final leader's upper
     bound (so a screened code cannot be ahead of the best final one unless the cap stopped
     it). Codes with the very same screening times (one code under this model, by another
     name) count once and go together; at most ``MAX_FINALISTS`` such groups per pass. The
     final rows equal what ``gradcode simulate`` gives for these codes at ``trials`` and
     ``seed`` (their draws do not depend on which other codes are simulated).

   Rows are ordered by mean (each says its stage and trials); codes of exactly equal times
   are ordered flat before trees, then by fewer messages, fewer partitions, shorter
   parameters. With ``screen_trials >= trials`` there is one stage.
4. Sections. Exact codes that decode the gradient are ranked (``Recommendation.ranked``);
   ``best`` is the first, ``equivalents`` the codes with its very times (equal in every
   trial), ``tie`` whether the next different code's interval reaches the best's.
   Approximate codes (``code.exact is False``) decode an estimate, so their time per
   iteration alone does not compare with an exact code's: they are listed apart, by time,
   unranked; their time to a target loss, which does compare, is ranked by step 6.
5. The reference, ``uncoded`` with ``n`` workers, is always simulated (outside the limits too,
   then marked so) and every row gets its mean over the reference's mean of the same stage.
6. With ``target`` (a ``TargetLoss``: the user's training problem from a run file and a loss to
   reach), ``Recommendation.to_target`` ranks the best exact codes and the approximate ones by
   expected time to that training loss (``gradcode.recommend.target``); the problem's data are
   loaded before anything is simulated, so a bad run file fails at once.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from gradcode.codes import GradientCode, available, build
from gradcode.jsonable import to_jsonable
from gradcode.recommend.candidates import WORKER_TIMES, Candidate, Skip, enumerate_candidates
from gradcode.recommend.errors import RecommendError
from gradcode.recommend.limits import Limits, load_fraction, message_fraction
from gradcode.recommend.simulation import estimate_codes
from gradcode.recommend.speeds import WorkerTimes, worker_times
from gradcode.recommend.target import TargetLoss, TargetSection, rank_to_target
from gradcode.recommend.workers import check_workers
from gradcode.sim.table import ResultRow
from gradcode.timing import TimingModel

#: the scheme every row is compared with (built by name, as the presets do: data, not dispatch)
REFERENCE_SCHEME = "uncoded"
DEFAULT_TRIALS = 20_000
DEFAULT_SCREEN_TRIALS = 1_000
DEFAULT_FINALISTS = 5
#: at most this many groups of codes (equal screening times) per section and pass get the
#: full trials, however many tie at screening
MAX_FINALISTS = 25
FINAL, SCREENING = "final", "screening"
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
    "std_time",
    "ratio_to_reference",
    "messages",
    "vectors",
    "floats",
    "origin",
    "notes",
)


@dataclass(frozen=True)
class Row:
    """One simulated code: its estimate (``result``), the stage that produced it, the mean
    over the reference's mean (``ratio``, same stage), its rank among the exact codes."""

    code: GradientCode
    origin: str
    result: ResultRow
    stage: str
    ratio: float | None
    rank: int | None = None
    within_limits: bool = True

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
        if caps.topology != "flat":
            out.append(f"{caps.topology} topology")
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
    """The result of ``recommend`` (module docstring)."""

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
        """Whether the runner-up's interval reaches the best's (``None``: no runner-up)."""
        best, second = self.best, self.runner_up
        if best is None or second is None:
            return None
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
    return (a.trials, a.mean_time, a.std_time) == (b.trials, b.mean_time, b.std_time)


def _count(name: str, value: Any, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise RecommendError(f"{name} must be an integer >= {minimum} (got {value!r})")
    return value


def _check_arguments(
    n: int, trials: int, screen_trials: int, finalists: int, seed: int, confidence: float
) -> None:
    _count("n", n, 1)
    _count("trials", trials, 2)
    _count("screen_trials", screen_trials, 2)
    _count("finalists", finalists, 1)
    _count("seed", seed, 0)
    if (
        isinstance(confidence, bool)
        or not isinstance(confidence, int | float)
        or not 0 < confidence < 1
    ):
        raise RecommendError(f"confidence must be a number in (0, 1) (got {confidence!r})")


def _times(row: ResultRow) -> tuple[float, float]:
    """What makes two screening rows one code under the model: equal mean and spread."""
    return (row.mean_time, row.std_time)


def _finalists(results: Sequence[ResultRow], top: int, bound: float | None = None) -> list[int]:
    """Indices of ``results`` that go to the final stage (module docstring, step 3).

    Codes with the very same screening times form one group (one code under this model): a
    group counts once towards ``top`` and towards ``MAX_FINALISTS`` and is never split. A group
    is chosen when it is among the ``top`` fastest or its interval reaches below ``bound``
    (default: the screening leader's upper bound).
    """
    order = sorted(range(len(results)), key=lambda i: (results[i].mean_time, i))
    if not order:
        return []
    bound = results[order[0]].ci_high if bound is None else bound
    groups: dict[tuple[float, float], list[int]] = {}
    for i in order:
        groups.setdefault(_times(results[i]), []).append(i)
    chosen: list[int] = []
    for place, members in enumerate(groups.values()):
        if place >= MAX_FINALISTS:
            break
        if place < top or results[members[0]].ci_low <= bound:
            chosen += members
    return chosen


def _simpler(code: GradientCode) -> tuple[bool, int, int, int]:
    """Orders codes of equal time: flat before trees, fewer messages, fewer partitions, the
    shorter parameters (a named construction before an explicit placement)."""
    size = len(json.dumps(to_jsonable(code.params()), separators=(",", ":")))
    return (code.capabilities.topology != "flat", len(code.all_message_keys()), code.k, size)


def _reference(model: TimingModel, n: int, pool: Sequence[Candidate]) -> Candidate | None:
    code = build(REFERENCE_SCHEME, n=n)
    key = Candidate(code, "reference").key
    for candidate in pool:
        if candidate.key == key:
            return candidate
    try:
        model.check(code)
    except ValueError:
        return None
    return Candidate(code, "reference")


@dataclass(frozen=True)
class _Runs:
    """The estimates of both stages, by index into the simulated codes."""

    screening: list[ResultRow]
    final: dict[int, ResultRow]
    reference: int | None

    def result(self, index: int) -> ResultRow:
        return self.final[index] if index in self.final else self.screening[index]

    def stage(self, index: int) -> str:
        return FINAL if index in self.final else SCREENING

    def ratio(self, index: int) -> float | None:
        """Mean over the reference's mean in the same stage (the same draws)."""
        if self.reference is None:
            return None
        base = self.final[self.reference] if index in self.final else self.screening[self.reference]
        return self.result(index).mean_time / base.mean_time


def _two_stages(
    model: TimingModel,
    codes: Sequence[GradientCode],
    *,
    sections: Sequence[range],
    reference: int | None,
    trials: int,
    screen_trials: int,
    finalists: int,
    options: dict[str, Any],
    say: Callable[[str], None],
) -> _Runs:
    """Screening of every code, then the full trials for each section's finalists and the
    reference, then for every code still screened whose interval reaches the section's final
    leader's (one stage when ``screen_trials >= trials``)."""
    if screen_trials >= trials:
        say(f"simulating {len(codes)} configurations x {trials} trials")
        results = estimate_codes(model, codes, trials=trials, **options)
        return _Runs([], dict(enumerate(results)), reference)
    say(f"screening {len(codes)} configurations x {screen_trials} trials")
    screening = estimate_codes(model, codes, trials=screen_trials, **options)
    chosen = {reference} if reference is not None else set()
    for section in sections:
        chosen |= {section[i] for i in _finalists([screening[j] for j in section], finalists)}
    final: dict[int, ResultRow] = {}
    for round_ in ("final stage", "final stage, late entrants"):
        indices = sorted(chosen - set(final))
        if not indices:
            break
        say(f"{round_}: {len(indices)} configurations x {trials} trials")
        rows = estimate_codes(model, [codes[i] for i in indices], trials=trials, **options)
        final |= dict(zip(indices, rows, strict=True))
        chosen = set()
        for section in sections:
            done = [final[i] for i in section if i in final]
            if done:
                bound = min(done, key=lambda row: row.mean_time).ci_high
                left = [i for i in section if i not in final]
                late = _finalists([screening[i] for i in left], 0, bound)
                chosen |= {left[j] for j in late}
    return _Runs(screening, final, reference)


def recommend(
    model: TimingModel,
    n: int,
    *,
    limits: Limits | None = None,
    trials: int = DEFAULT_TRIALS,
    screen_trials: int = DEFAULT_SCREEN_TRIALS,
    finalists: int = DEFAULT_FINALISTS,
    seed: int = 0,
    confidence: float = 0.95,
    length: int | None = None,
    progress: Callable[[str], None] | None = None,
    target: TargetLoss | None = None,
) -> Recommendation:
    """Rank the codes for ``n`` workers under ``model`` by expected time per iteration.

    ``limits``: what a code may cost (``Limits``); ``trials``, ``screen_trials`` and
    ``finalists``: the two stages (module docstring); ``seed``: of every draw; ``confidence``:
    level of the intervals; ``length``: gradient length, for the ``floats`` column;
    ``progress`` receives a line per stage; ``target``: also rank by expected time to that
    training loss (module docstring, step 6). Raises ``RecommendError`` (one line) for a bad
    argument, e.g. ``n`` against a per-worker parameter list of the model, and ``ConfigError``
    for a run file whose data cannot be loaded.
    """
    _check_arguments(n, trials, screen_trials, finalists, seed, confidence)
    limits = limits if limits is not None else Limits()
    check_workers(model, n)
    if target is not None:
        target.problem.split(n)  # the data load (or fail) before the long part
    say = progress if progress is not None else (lambda line: None)

    times = worker_times(model, n, seed=seed)
    schemes = limits.schemes if limits.schemes is not None else tuple(available())
    pool = enumerate_candidates(model, n, schemes, times=times.times if times is not None else None)
    skipped = list(pool.skipped)
    if times is not None and times.times is None:
        skipped.append(Skip("allocations for the worker times", str(times.reason)))
    reference = _reference(model, n, pool.candidates)
    if reference is None:
        skipped.append(Skip(REFERENCE_SCHEME, "the reference: the model cannot simulate it"))

    sections: dict[bool, list[Candidate]] = {True: [], False: []}
    excluded: defaultdict[str, Counter[str]] = defaultdict(Counter)
    for candidate in pool.candidates:
        limit = limits.exclusion(candidate.code)
        if limit is not None:
            excluded[limit][candidate.code.name] += 1
        else:
            sections[candidate.code.exact].append(candidate)
    exact, approximate = sections[True], sections[False]
    everyone = [*exact, *approximate]
    reference_inside = reference is not None and any(c is reference for c in exact)
    if reference is not None and not reference_inside:
        everyone.append(reference)

    codes = [candidate.code for candidate in everyone]
    runs = _two_stages(
        model,
        codes,
        sections=(range(len(exact)), range(len(exact), len(exact) + len(approximate))),
        reference=next((i for i, c in enumerate(everyone) if c is reference), None),
        trials=trials,
        screen_trials=screen_trials,
        finalists=finalists,
        options={"seed": seed, "confidence": confidence, "length": length},
        say=say,
    )

    def rows(indices: range, *, ranked: bool) -> list[Row]:
        order = sorted(indices, key=lambda i: (runs.result(i).mean_time, *_simpler(codes[i]), i))
        return [
            Row(
                everyone[i].code,
                everyone[i].origin,
                runs.result(i),
                runs.stage(i),
                runs.ratio(i),
                rank=place if ranked else None,
            )
            for place, i in enumerate(order, start=1)
        ]

    ranked = rows(range(len(exact)), ranked=True)
    approximate_rows = rows(range(len(exact), len(exact) + len(approximate)), ranked=False)
    reference_row = None
    if reference is not None and reference_inside:
        reference_row = next(r for r in ranked if r.code is reference.code)
    elif reference is not None:
        index = len(everyone) - 1  # appended last
        reference_row = Row(
            reference.code,
            reference.origin,
            runs.result(index),
            runs.stage(index),
            runs.ratio(index),
            within_limits=False,
        )
    rec = Recommendation(
        n=n,
        model_name=model.name,
        model_params=model.params(),
        limits=limits,
        trials=trials,
        screen_trials=min(screen_trials, trials),
        seed=seed,
        confidence=confidence,
        ranked=ranked,
        approximate=approximate_rows,
        reference=reference_row,
        skipped=skipped,
        excluded=[Exclusion(limit, dict(counts)) for limit, counts in excluded.items()],
        duplicates=pool.duplicates,
        worker_times=times,
    )
    if target is None:
        return rec
    section = rank_to_target(
        rec, model, target, finalists=finalists, seed=seed, confidence=confidence, progress=say
    )
    return replace(rec, to_target=section)
