"""``GradientCode.completion_rule``: what the declared rules say, that they give the codes'
own completion times, and that the conformance kit catches a rule that lies."""

import numpy as np
import pytest

from gradcode.codes import CompletionRule, GradientCode, available, build, scheme_class
from gradcode.codes.conformance import check_conformance
from gradcode.codes.frc import FractionalRepetition

#: schemes whose codes declare a rule (the others' may not be of the groups-and-counts form)
DECLARING = {
    "uncoded",
    "crc",
    "ye-abbe",
    "frc",
    "lcc",
    "heterogeneous",
    "heterogeneous-poly",
    "berrut",
    "ignore-stragglers",
}


def test_the_default_is_none():
    assert GradientCode.completion_rule(build("binary", n=6, s=1)) is None
    several = build("gc-mmc", n=6, r=3, clusters=2, design="correlated", order=3)
    assert several.completion_rule() is None


def test_what_the_rules_say():
    assert build("uncoded", n=5).completion_rule() == CompletionRule(((0, 1, 2, 3, 4),), (5,))
    assert build("crc", n=6, s=2).completion_rule() == CompletionRule.any_of(range(6), 4)
    assert build("ye-abbe", n=8, d=4, s=1, m=3).completion_rule().needed == (7,)
    assert build("lcc", n=8, k=3).completion_rule().needed == (5,)
    frc = build("frc", n=6, s=2).completion_rule()
    assert frc.groups == ((0, 1, 2), (3, 4, 5)) and frc.needed == (1, 1)


@pytest.mark.parametrize("name", sorted(DECLARING & set(available())))
def test_declared_rules_give_the_codes_completion_times(name):
    rng = np.random.default_rng(11)
    for params in list(scheme_class(name).parameter_grid(7))[:40]:
        code = build(name, **params)
        rule = code.completion_rule()
        assert rule is not None, code
        keys = code.all_message_keys()
        arrivals = rng.exponential(size=(50, len(keys)))
        arrivals[rng.random(arrivals.shape) < 0.2] = np.inf
        np.testing.assert_array_equal(
            rule.completion_times(keys, arrivals), code.completion_times(arrivals), repr(code)
        )


@pytest.mark.parametrize(
    "groups, needed",
    [((), ()), (((0, 1),), (3,)), (((0, 1),), (0,)), (((0, 1), (1, 2)), (1, 1)), (((0,),), (1, 1))],
)
def test_malformed_rules_are_refused(groups, needed):
    with pytest.raises(ValueError, match="completion rule"):
        CompletionRule(groups, needed)


class ClaimsAnyNMinusS(FractionalRepetition):
    """Declares "any n - s workers": enough for its own rule (one of each group), but later
    than it in most trials, so an exact time from it would be wrong."""

    def completion_rule(self):
        return CompletionRule.any_of(self.all_message_keys(), self.n - self.s)


class NamesAStranger(FractionalRepetition):
    def completion_rule(self):
        return CompletionRule.any_of((*self.all_message_keys(), "stranger"), 1)


@pytest.mark.parametrize("cls", [ClaimsAnyNMinusS, NamesAStranger])
def test_conformance_catches_a_rule_that_is_not_the_codes(cls):
    report = check_conformance(cls(n=6, s=1), subsets=40, trials=80)
    failed = {check.name for check in report.checks if not check.passed}
    assert failed == {"completion rule"}


def test_conformance_passes_a_true_rule_and_a_missing_one():
    for code in (build("frc", n=6, s=2), build("binary", n=6, s=1)):
        check = next(
            c for c in check_conformance(code, trials=40).checks if c.name == "completion rule"
        )
        assert check.passed, check
