"""DETOX (Rajput et al., NeurIPS 2019): the vote part conforms and is verified on every
placement of up to ``a = (r - 1) / 2`` liars under every attack (``gradcode codes verify
--attack``); beyond that, an aggregator over the groups' votes keeps the estimate within its
bound; the run file accepts more liars than ``a`` only with an aggregator that tolerates the
votes they can corrupt."""

from __future__ import annotations

import numpy as np
import pytest

from gradcode import aggregators, attacks
from gradcode.cli import main
from gradcode.codes import build
from gradcode.codes.conformance import assert_conforms
from gradcode.codes.verify import verify
from gradcode.errors import ParameterError
from gradcode.runfile.config import ConfigError, parse_config
from gradcode.runfile.plan import build_plan


@pytest.mark.parametrize("params", [{"n": 3, "r": 3}, {"n": 9, "r": 3}, {"n": 10, "r": 5}])
def test_the_vote_conforms_and_corrects_every_placement_of_a_liars(params):
    code = build("detox", **params)
    assert code.a == (params["r"] - 1) // 2 and code.s == 0
    report = assert_conforms(code, exhaustive=True, subsets=40, trials=40).verification
    assert report is not None and report.liars_named == report.patterns_with_liars > 0
    for attack in ("reversed", "constant", "alie", "ipm", "noise"):
        checked = verify(code, exhaustive=True, attack=attacks.build(attack))
        assert not checked.failures, (attack, checked.failures[:1])


def test_verify_attack_on_the_command_line(capsys):
    assert main(["codes", "verify", "detox", "--n", "9", "--r", "3", "--exhaustive",
                 "--attack", "reversed", "--attack-params", "{scale: 100}"]) == 0  # fmt: skip


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"n": 6, "r": 2}, "detox needs an odd r (got r=2)"),
        ({"n": 7, "r": 3}, "detox needs r | n (got n=7, r=3)"),
    ],
)
def test_bad_parameters_are_one_line(params, expected):
    with pytest.raises(ParameterError, match=expected.replace("(", r"\(").replace(")", r"\)")):
        build("detox", **params)


def test_an_aggregator_over_the_votes_withstands_a_group_taken_over():
    """Two colluding liars in group 0 of three outvote its honest member: the vote is theirs,
    DRACO's decoder would return a wrong sum, and the median of the three votes stays within
    its bound of the honest groups' mean."""
    code = build("detox", n=9, r=3)
    rng = np.random.default_rng(3)
    g = rng.standard_normal((code.k, 6)) + 1.0
    honest = {w: code.encode(w, g[list(code.partitions(w))]) for w in range(code.n)}
    forged = attacks.build("reversed", {"scale": 50.0}).apply(honest, [0, 1], rng)
    inputs = code.aggregation_inputs(forged, 6)
    assert inputs.total == 3 and len(inputs.values) == code.aggregation_count() == 3
    assert inputs.keys[0] == (0, 1) and inputs.adversaries == ()
    assert code.aggregation_corrupted([0, 1]) == 1 and code.aggregation_corrupted([0, 3, 6]) == 0
    votes = np.stack([honest[3 * group] for group in range(3)])
    median = aggregators.build("median")
    estimate = median.aggregate(inputs.values).value * inputs.total
    error = np.linalg.norm(estimate / 3 - votes[1:].mean(axis=0))
    assert error <= median.error_bound(votes[1:], 3) * (1 + 1e-12)  # the bound is attained
    # without liars the aggregated votes are the exact gradient (three equal-weight groups)
    exact = code.aggregation_inputs(honest, 6)
    mean = aggregators.build("trimmed-mean", {"beta": 0.0}).aggregate(exact.values).value
    assert np.allclose(mean * exact.total, g.sum(axis=0))


def run(**overrides):
    raw = {
        "iterations": 2,
        "data": {"prepared": "/nowhere"},
        "model": {"kind": "logistic"},
        "scheme": {"name": "detox", "params": {"n": 9, "r": 3}},
        "optimizer": {"step": 0.5},
    }
    raw.update(overrides)
    return raw


def test_more_liars_than_the_vote_corrects_need_an_aggregator_that_tolerates_their_groups():
    two = {"workers": [0, 1]}
    with pytest.raises(ConfigError, match="2 adversaries but the code corrects a = 1"):
        build_plan(parse_config(run(adversaries=two)))
    build_plan(parse_config(run(adversaries=two, aggregator={"name": "median"})))
    # four liars take two groups of three: too many for the median of three votes
    four = {"workers": [0, 1, 3, 4]}
    with pytest.raises(ConfigError) as caught:
        build_plan(parse_config(run(adversaries=four, aggregator={"name": "median"})))
    assert str(caught.value) == (
        "adversaries.workers: aggregator median tolerates 1 Byzantine input among n=3 (got 2: "
        "n >= 2f + 1) (detox hands it 3 values, 2 of them from workers [0, 1, 3, 4])"
    )
