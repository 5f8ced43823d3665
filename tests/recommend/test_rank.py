"""The ranking: paper 000's theory decides the winner where it can, and the numbers are those
of an independent ``gradcode.sim.montecarlo.simulate`` run of the same codes."""

from __future__ import annotations

import math

import pytest

from gradcode.jsonable import to_jsonable
from gradcode.recommend import RecommendError, recommend
from gradcode.recommend.recommendation import FINAL, SCREENING
from gradcode.sim import load_spec, simulate
from gradcode.timing import model_from_spec
from tests.recommend.conftest import FAST, TABLE3, ranking_value


def test_strong_stragglers_favour_coded_schemes_over_uncoded(table3_rec):
    """Paper 000 Table 3's model: a coded scheme beats uncoded by far (the paper's codes alone
    by at least 32%); ``uncoded`` is the reference at ratio 1."""
    rec = table3_rec
    assert rec.best is not None and rec.best.code.s >= 1
    assert rec.best.ratio < 0.68
    assert rec.reference.scheme == "uncoded" and rec.reference.ratio == 1.0
    assert rec.reference.within_limits and rec.reference in rec.ranked
    assert rec.ranked.index(rec.reference) > 20  # far down: many codes beat it


def test_ye_abbe_table3_value_is_reproduced():
    """The (8, 4, 1, 3) code's mean under Table 3's model, 21.3697 in the paper, is inside the
    final interval when the code is a finalist."""
    model = model_from_spec("master-worker", TABLE3)
    rec = recommend(model, 8, trials=20000, screen_trials=20000, limits=None)
    row = next(r for r in rec.ranked if r.scheme == "ye-abbe" and r.params["d"] == 4
               and r.params["s"] == 1 and r.params["m"] == 3)  # fmt: skip
    assert row.result.ci_low <= 21.3697 <= row.result.ci_high


def test_without_straggling_the_least_loaded_codes_win():
    """Deterministic computation (huge lambda1), no link cost: a worker's time is the data its
    message needs, so the codes of load 1/n (uncoded among them) tie for first and every code
    whose one message per worker needs more is slower (a code sending after each partial,
    GC-MMC, finishes as early)."""
    model = model_from_spec("master-worker", {"lambda1": 1e9, "t1": 1.0})
    rec = recommend(model, 6, **FAST)
    best = rec.best
    assert best.load == pytest.approx(1 / 6) and best.result.mean_time == pytest.approx(1.0)
    assert "uncoded" in {best.scheme, *(row.scheme for row in rec.equivalents)}
    heavier = [
        row
        for row in rec.ranked
        if row.load > 1 / 6 + 1e-9 and len(row.code.all_message_keys()) == row.code.n
    ]
    assert heavier and all(row.result.mean_time > 1.3 for row in heavier)
    assert all(row.stage == FINAL for row in [best, *rec.equivalents])


def test_ranking_matches_an_independent_simulate_run(table3, table3_rec):
    """Final rows are exactly what ``simulate`` gives for the same codes, trials and seed, and
    they are ordered by exact expected time where the code has one, else by those means."""
    finals = [row for row in table3_rec.ranked if row.stage == FINAL]
    assert len(finals) >= 5
    spec = load_spec(
        {
            "model": "master-worker",
            "parameters": TABLE3,
            "schemes": [{"scheme": r.scheme, "params": to_jsonable(r.params)} for r in finals],
        },
        origin="independent",
    )
    rows = simulate(spec, trials=FAST["trials"], seed=0)
    for mine, theirs in zip(finals, rows, strict=True):
        assert (mine.result.mean_time, mine.result.ci_low, mine.result.ci_high) == (
            theirs.mean_time,
            theirs.ci_low,
            theirs.ci_high,
        )
        assert mine.result.messages == theirs.messages
    # ordered by exact expected time where the code has one, else by these means
    keys = [ranking_value(mine, table3_rec) for mine in finals]
    assert keys == sorted(keys)


def test_two_stages_say_which_row_had_how_many_trials(table3_rec):
    rec = table3_rec
    stages = {row.stage: row.result.trials for row in [*rec.ranked, *rec.approximate]}
    assert stages == {FINAL: FAST["trials"], SCREENING: FAST["screen_trials"]}
    assert rec.best.stage == FINAL and rec.reference.stage == FINAL
    # no screened code's interval reaches the final leader's: the CIs decided the leaders
    bound = rec.best.result.ci_high
    assert all(r.result.ci_low > bound for r in rec.ranked if r.stage == SCREENING)
    assert rec.screen_trials == FAST["screen_trials"] and rec.trials == FAST["trials"]


def test_equal_codes_are_named_and_the_tie_compares_the_next_different_one(table3_rec):
    """FRC with s = 3 and the depth-1 CodedReduce tree over it finish together in every trial:
    they are equivalents, the flat one first; the tie verdict is against a different code."""
    rec = table3_rec
    by_key = {(r.scheme, str(r.params)): r for r in rec.ranked}
    frc = by_key[("frc", str({"n": 8, "s": 3}))]
    tree = by_key[("coded-reduce", str({"n": 8, "L": 1, "s": 3, "inner": "frc"}))]
    assert frc.result.mean_time == tree.result.mean_time and frc.rank < tree.rank
    if rec.best is frc:
        assert tree in rec.equivalents
    second = rec.runner_up
    assert second.result.mean_time != rec.best.result.mean_time
    if rec.best.exact_time is not None and second.exact_time is not None:
        assert rec.tie == (second.exact_time == pytest.approx(rec.best.exact_time, rel=1e-9))
    else:
        assert rec.tie == (second.result.ci_low <= rec.best.result.ci_high)


def test_approximate_codes_are_apart_and_unranked(table3_rec):
    rec = table3_rec
    assert rec.approximate and all(not r.code.exact and r.rank is None for r in rec.approximate)
    assert {r.scheme for r in rec.approximate} == {"berrut", "ignore-stragglers"}
    assert all(r.code.exact for r in rec.ranked)
    assert [r.rank for r in rec.ranked] == list(range(1, len(rec.ranked) + 1))
    keys = [ranking_value(r, rec) for r in rec.ranked]
    assert keys == sorted(keys)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"n": 0}, "n must be an integer >= 1"),
        ({"n": 8, "trials": 1}, "trials must be an integer >= 2"),
        ({"n": 8, "confidence": 1.0}, "confidence must be a number in (0, 1)"),
        ({"n": 8, "finalists": 0}, "finalists must be an integer >= 1"),
    ],
)
def test_bad_arguments_are_one_line_errors(table3, kwargs, message):
    with pytest.raises(RecommendError) as error:
        recommend(table3, **kwargs)
    assert message in str(error.value) and "\n" not in str(error.value)


def test_n_must_match_the_per_worker_parameter_lists():
    model = model_from_spec("master-worker", {"lambda1": [0.8] * 4, "t1": 1.6})
    with pytest.raises(RecommendError, match=r"parameters.lambda1: describes 4 workers but n is 6"):
        recommend(model, 6)


def test_a_never_decodable_row_sorts_last_without_breaking_the_ratios(table3_rec):
    assert all(math.isfinite(r.ratio) for r in table3_rec.ranked)
