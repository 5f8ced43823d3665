"""``recommend(model, n, ...)``: the candidate codes ranked by expected time per iteration.

Steps:

1. ``n`` is checked against the model's per-worker parameters, and with workers of unequal
   speed their relative times per data subset are measured (``speeds.worker_times``);
2. the candidates (``candidates.enumerate_candidates``: every registered scheme's grid at ``n``
   workers, plus the heterogeneous allocations for those times), minus what the ``Limits``
   exclude (counted per limit and scheme);
3. two-stage Monte Carlo with common random numbers (``gradcode.sim.montecarlo``):

   - screening: every candidate gets ``screen_trials`` trials;
   - final: per section, the ``finalists`` fastest (by exact expected time where known, else
     by screening mean: step 4), and every other whose screening interval reaches below the
     leader's upper bound (it might still be the fastest), and the reference get the full
     ``trials``; then, once, every code still screened whose screening interval reaches
     below the section's final leader's upper bound (so a screened code cannot be ahead of
     the best final one unless the cap stopped it). Codes with the very same screening
     times (one code under this model, by another name) count once and go together; at most
     ``MAX_FINALISTS`` such groups per pass. The final rows equal what ``gradcode simulate``
     gives for these codes at ``trials`` and ``seed`` (their draws do not depend on which
     other codes are simulated).

   With ``screen_trials >= trials`` there is one stage.
4. Exact expected times (``gradcode.recommend.exact``). Under the ``master-worker`` model
   with identical workers, a code that declares a ``completion_rule()`` (any ``r`` of the
   ``n`` workers: uncoded, cyclic repetition, Ye-Abbe, LCC, the heterogeneous codes, Berrut,
   ignore-stragglers; one of each group: fractional repetition) and sends one message per
   worker gets its exact expected time per iteration (``Row.exact_time``; the model's
   ``overhead`` included) beside its Monte Carlo mean and interval, which are kept: they are
   what ``gradcode simulate`` gives, they carry the messages and the ratio to the reference,
   and they check the formula. Other models, workers of unequal parameters, and codes with no
   declared rule or several messages per worker (GC-MMC, trees, binary) have none.

   Rows are ordered by the best value there is of each code's expectation: its exact time;
   else the exact time of a code with the very same Monte Carlo times (the same code under
   this model by another construction, so that they stay together); else its Monte Carlo
   mean (``Row.ranked_by`` says which). An exact time is the expectation itself, a mean only
   its estimate, so where every code has one the order is certain, and in a mixed table each
   code is placed by its best estimate. Codes of equal order value are ordered flat before
   trees, then by fewer messages, fewer partitions, shorter parameters.
5. Sections. Exact codes that decode the gradient are ranked (``Recommendation.ranked``);
   ``best`` is the first, ``equivalents`` the codes with its very times (equal in every
   trial), ``tie`` whether the next different code may be as fast: with exact times for both,
   whether they are equal; otherwise whether its interval reaches the best's.
   Approximate codes (``code.exact is False``) decode an estimate, so their time per
   iteration alone does not compare with an exact code's: they are listed apart, by time,
   unranked; their time to a target loss, which does compare, is ranked by step 7.
6. The reference, ``uncoded`` with ``n`` workers, is always simulated (outside the limits too,
   then marked so) and every row gets its mean over the reference's mean of the same stage.
7. With ``target`` (a ``TargetLoss``: the user's training problem from a run file and a loss to
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
from gradcode.recommend.candidates import Candidate, Pool, Skip, enumerate_candidates
from gradcode.recommend.errors import RecommendError
from gradcode.recommend.exact import ExactTimes
from gradcode.recommend.limits import Limits
from gradcode.recommend.recommendation import (
    EQUAL_TIMES,
    EXACT_TIME,
    FINAL,
    MONTE_CARLO,
    SCREENING,
    Exclusion,
    Recommendation,
    Row,
    same_times_key,
)
from gradcode.recommend.simulation import estimate_codes
from gradcode.recommend.speeds import WorkerTimes, worker_times
from gradcode.recommend.target import TargetLoss, rank_to_target
from gradcode.recommend.workers import check_workers
from gradcode.sim.table import ResultRow
from gradcode.timing import TimingModel
from gradcode.topology import topology_of

#: the scheme every row is compared with (built by name, as the presets do: data, not dispatch)
REFERENCE_SCHEME = "uncoded"
DEFAULT_TRIALS = 20_000
DEFAULT_SCREEN_TRIALS = 1_000
DEFAULT_FINALISTS = 5
#: at most this many groups of codes (equal screening times) per section and pass get the
#: full trials, however many tie at screening
MAX_FINALISTS = 25


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


def _finalists(
    results: Sequence[ResultRow],
    top: int,
    bound: float | None = None,
    exact: Sequence[float | None] | None = None,
) -> list[int]:
    """Indices of ``results`` that go to the final stage (module docstring, step 3).

    Codes with the very same screening times form one group (one code under this model): a
    group counts once towards ``top`` and towards ``MAX_FINALISTS`` and is never split. A group
    is chosen when it is among the ``top`` fastest (by ``exact`` expected time where given,
    else by screening mean) or its interval reaches below ``bound`` (default: the upper bound
    of the fastest's screening interval).
    """
    order = sorted(range(len(results)), key=lambda i: (_key(results[i], exact, i), i))
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


def _key(result: ResultRow, exact: Sequence[float | None] | None, index: int) -> float:
    """What orders a code: its exact expected time where known, else its Monte Carlo mean."""
    value = None if exact is None else exact[index]
    return result.mean_time if value is None else value


def _simpler(code: GradientCode) -> tuple[bool, int, int, int]:
    """Orders codes of equal time: flat before trees, fewer messages, fewer partitions, the
    shorter parameters (a named construction before an explicit placement)."""
    size = len(json.dumps(to_jsonable(code.params()), separators=(",", ":")))
    return (not topology_of(code).direct, len(code.all_message_keys()), code.k, size)


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
    exact: Sequence[float | None] | None = None,
) -> _Runs:
    """Screening of every code, then the full trials for each section's finalists and the
    reference, then for every code still screened whose interval reaches the section's final
    leader's (one stage when ``screen_trials >= trials``). ``exact``: the codes' exact
    expected times (``None`` where unknown), which order them where given."""
    if screen_trials >= trials:
        say(f"simulating {len(codes)} configurations x {trials} trials")
        results = estimate_codes(model, codes, trials=trials, **options)
        return _Runs([], dict(enumerate(results)), reference)
    say(f"screening {len(codes)} configurations x {screen_trials} trials")
    screening = estimate_codes(model, codes, trials=screen_trials, **options)
    chosen = {reference} if reference is not None else set()
    for section in sections:
        known = None if exact is None else [exact[j] for j in section]
        chosen |= {
            section[i] for i in _finalists([screening[j] for j in section], finalists, exact=known)
        }
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
            done = [i for i in section if i in final]
            if done:
                leader = min(done, key=lambda i: (_key(final[i], exact, i), i))
                bound = final[leader].ci_high
                left = [i for i in section if i not in final]
                late = _finalists([screening[i] for i in left], 0, bound)
                chosen |= {left[j] for j in late}
    return _Runs(screening, final, reference)


def _ranking_keys(runs: _Runs, exact: Sequence[float | None]) -> list[tuple[float, str]]:
    """Per simulated code, the value that orders it and what it is (module docstring, step 4):
    its exact expected time; else that of a code with the very same Monte Carlo times (the
    same code under this model, e.g. a depth-1 tree over a flat code: so equal codes stay
    together); else its Monte Carlo mean."""
    shared: dict[tuple[int, float, float], float] = {}
    for i, value in enumerate(exact):
        if value is not None:
            shared.setdefault(same_times_key(runs.result(i)), value)
    keys = []
    for i, value in enumerate(exact):
        result = runs.result(i)
        if value is not None:
            keys.append((value, EXACT_TIME))
        elif same_times_key(result) in shared:
            keys.append((shared[same_times_key(result)], EQUAL_TIMES))
        else:
            keys.append((result.mean_time, MONTE_CARLO))
    return keys


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
    training loss (module docstring, step 7). Rows carry exact expected times where the model
    and the code allow, and are ordered by them (step 4). Raises ``RecommendError`` (one line)
    for a bad argument, e.g. ``n`` against a per-worker parameter list of the model, and
    ``ConfigError`` for a run file whose data cannot be loaded.
    """
    _check_arguments(n, trials, screen_trials, finalists, seed, confidence)
    limits = limits if limits is not None else Limits()
    check_workers(model, n)
    if target is not None:
        target.problem.split(n)  # the data load (or fail) before the long part
    say = progress if progress is not None else (lambda line: None)

    times = worker_times(model, n, seed=seed)
    pool, skipped, reference = _candidates(model, n, limits, times)
    exact, approximate, excluded = _sections(pool.candidates, limits)
    ranking = _simulated_rows(
        model,
        exact,
        approximate,
        reference,
        trials=trials,
        screen_trials=screen_trials,
        finalists=finalists,
        options={"seed": seed, "confidence": confidence, "length": length},
        say=say,
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
        ranked=ranking.ranked,
        approximate=ranking.approximate,
        reference=ranking.reference,
        skipped=skipped,
        excluded=[Exclusion(limit, dict(counts)) for limit, counts in excluded.items()],
        duplicates=pool.duplicates,
        worker_times=times,
        exact_unavailable=ranking.exact_unavailable,
    )
    if target is None:
        return rec
    section = rank_to_target(
        rec, model, target, finalists=finalists, seed=seed, confidence=confidence, progress=say
    )
    return replace(rec, to_target=section)


def _candidates(
    model: TimingModel, n: int, limits: Limits, times: WorkerTimes | None
) -> tuple[Pool, list[Skip], Candidate | None]:
    """Every candidate of the schemes the limits allow (module docstring, step 2), what was
    skipped and why, and the reference (``None``: the model cannot simulate it)."""
    schemes = limits.schemes if limits.schemes is not None else tuple(available())
    pool = enumerate_candidates(model, n, schemes, times=times.times if times is not None else None)
    skipped = list(pool.skipped)
    if times is not None and times.times is None:
        skipped.append(Skip("allocations for the worker times", str(times.reason)))
    reference = _reference(model, n, pool.candidates)
    if reference is None:
        skipped.append(Skip(REFERENCE_SCHEME, "the reference: the model cannot simulate it"))
    return pool, skipped, reference


def _sections(
    candidates: Sequence[Candidate], limits: Limits
) -> tuple[list[Candidate], list[Candidate], defaultdict[str, Counter[str]]]:
    """The exact and the approximate candidates within the limits, and per limit the number
    of configurations it excluded per scheme."""
    sections: dict[bool, list[Candidate]] = {True: [], False: []}
    excluded: defaultdict[str, Counter[str]] = defaultdict(Counter)
    for candidate in candidates:
        limit = limits.exclusion(candidate.code)
        if limit is not None:
            excluded[limit][candidate.code.name] += 1
        else:
            sections[candidate.code.exact].append(candidate)
    return sections[True], sections[False], excluded


@dataclass(frozen=True)
class _Ranking:
    """The rows of both sections, ordered, the reference's, and why no code has an exact
    expected time (``None``: some may)."""

    ranked: list[Row]
    approximate: list[Row]
    reference: Row | None
    exact_unavailable: str | None


def _simulated_rows(
    model: TimingModel,
    exact: Sequence[Candidate],
    approximate: Sequence[Candidate],
    reference: Candidate | None,
    *,
    trials: int,
    screen_trials: int,
    finalists: int,
    options: dict[str, Any],
    say: Callable[[str], None],
) -> _Ranking:
    """The sections' candidates and the reference simulated in two stages (module docstring,
    step 3) and ordered by their best estimate of the expected time (step 4); the reference
    is simulated outside the limits too (step 6)."""
    everyone = [*exact, *approximate]
    reference_inside = reference is not None and any(c is reference for c in exact)
    if reference is not None and not reference_inside:
        everyone.append(reference)

    codes = [candidate.code for candidate in everyone]
    exact_values = ExactTimes(model)
    exact_times = [exact_values(code) for code in codes]
    runs = _two_stages(
        model,
        codes,
        sections=(range(len(exact)), range(len(exact), len(exact) + len(approximate))),
        reference=next((i for i, c in enumerate(everyone) if c is reference), None),
        trials=trials,
        screen_trials=screen_trials,
        finalists=finalists,
        options=options,
        say=say,
        exact=exact_times,
    )
    keys = _ranking_keys(runs, exact_times)

    def rows(indices: range, *, ranked: bool) -> list[Row]:
        order = sorted(indices, key=lambda i: (keys[i][0], *_simpler(codes[i]), i))
        return [
            Row(
                everyone[i].code,
                everyone[i].origin,
                runs.result(i),
                runs.stage(i),
                runs.ratio(i),
                rank=place if ranked else None,
                exact_time=exact_times[i],
                ranked_by=keys[i][1],
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
            exact_time=exact_times[index],
            ranked_by=keys[index][1],
        )
    return _Ranking(ranked, approximate_rows, reference_row, exact_values.reason)
