"""An aggregator's tolerance checked per aggregation against the values it got
(``gradcode.train.tolerance``) and the run file's ``aggregator.below_tolerance``."""

from __future__ import annotations

import pytest

from gradcode.aggregators import build as build_aggregator
from gradcode.codes import NotDecodableError
from gradcode.codes import build as build_code
from gradcode.runfile.config import ConfigError, parse_config
from gradcode.train.tolerance import Tolerance


def _always(worker: int, t: int) -> bool:
    return True


def _tolerance(policy: str, aggregator=("trimmed-mean", {"beta": 0.2}), n: int = 5):
    return Tolerance(
        build_aggregator(*aggregator), build_code("uncoded", n=n), [1], _always, policy
    )


def _rows(*workers: int) -> list[set[int]]:
    """One value per worker (uncoded: each its own partial gradient)."""
    return [{w} for w in workers]


def test_within_the_bound_nothing_is_said():
    # five values, floor(0.2 * 5) = 1 trimmed at each end, one liar among the senders
    assert _tolerance("stop").check(0, _rows(0, 1, 2, 3, 4)) is None
    # four values trim none; the liar is not among them: nothing corrupted
    assert _tolerance("stop").check(0, _rows(0, 2, 3, 4)) is None


def test_below_the_bound_stop_refuses_the_aggregation_in_one_line():
    with pytest.raises(NotDecodableError) as caught:
        _tolerance("stop").check(3, _rows(0, 1, 2, 4))
    line = str(caught.value)
    assert caught.value.needed is None and "\n" not in line
    assert line.startswith("below tolerance: aggregator trimmed-mean tolerates 0 Byzantine")
    assert "handed it 4 of 5 values, 1 of them from workers [1]" in line
    assert line.endswith("aggregator.below_tolerance: stop")


def test_below_the_bound_continue_returns_the_line_to_log():
    line = _tolerance("continue").check(3, _rows(0, 1, 2, 4))
    assert line is not None and "tolerates 0 Byzantine inputs among n=4 (got 1" in line


def test_a_liar_outside_its_schedule_corrupts_nothing():
    check = Tolerance(
        build_aggregator("trimmed-mean", {"beta": 0.2}),
        build_code("uncoded", n=5),
        [1],
        lambda worker, t: t >= 2,
        "stop",
    )
    assert check.check(1, _rows(0, 1, 2, 4)) is None
    with pytest.raises(NotDecodableError):
        check.check(2, _rows(0, 1, 2, 4))


def test_a_vote_counts_as_corrupted_only_when_a_liar_is_behind_it():
    """DETOX (groups 0-2, 3-5, 6-8) under the median, liars 1 and 2: a liar outvoted in its
    group is behind no vote; a group whose majority lies is one corrupted value, and with a
    group lost the two votes left tolerate none."""
    check = Tolerance(
        build_aggregator("median"), build_code("detox", n=9, r=3), [1, 2], _always, "stop"
    )
    assert check.check(0, [{0, 2}, {3, 4, 5}, {6, 7, 8}]) is None  # 1 outvoted in group 0
    assert check.check(0, [{1, 2}, {3, 4, 5}, {6, 7, 8}]) is None  # one of three corrupted
    with pytest.raises(NotDecodableError, match="2 of 3 values, 1 of them from workers \\[1, 2\\]"):
        check.check(0, [{1, 2}, {3, 4, 5}])


def test_a_count_the_aggregator_cannot_take_is_refused_under_either_policy():
    # multi-krum f = 1 needs n >= 2f + 3 = 5 values: four cannot be aggregated at all
    for policy in ("stop", "continue"):
        check = _tolerance(policy, aggregator=("multi-krum", {"f": 1}))
        with pytest.raises(NotDecodableError, match="needs n >= 2f \\+ 3"):
            check.check(0, _rows(0, 2, 3, 4))


def _run(**aggregator):
    return {
        "iterations": 3,
        "data": {"prepared": "/nowhere"},
        "model": {"kind": "logistic"},
        "scheme": {"name": "uncoded", "params": {"n": 5}},
        "optimizer": {"step": 0.5},
        "aggregator": {"name": "median", **aggregator},
    }


def test_the_policy_is_read_checked_and_kept_out_of_the_fingerprint():
    assert parse_config(_run()).aggregator.below_tolerance == "stop"
    going = parse_config(_run(below_tolerance="continue"))
    assert going.aggregator.below_tolerance == "continue"
    assert going.fingerprint() == parse_config(_run()).fingerprint()
    with pytest.raises(ConfigError) as caught:
        parse_config(_run(below_tolerance="carry-on"))
    assert "aggregator.below_tolerance" in str(caught.value) and "\n" not in str(caught.value)
    with pytest.raises(ConfigError, match="aggregator"):
        parse_config(_run(below=1))
