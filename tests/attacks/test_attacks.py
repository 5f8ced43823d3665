"""Attacks: what each forges, the refusals, run files' adversaries block, and exact decoding
with the liars named under every attack (DRACO's codes and paper 004's)."""

from __future__ import annotations

import numpy as np
import pytest

from gradcode import attacks
from gradcode.attacks import Attack, AttackError, AttackPlan, attack_rng
from gradcode.codes import build
from gradcode.codes.verify import verify
from gradcode.errors import ParameterError, UnknownNameError, UserError
from gradcode.runfile.config import ConfigError, parse_config
from gradcode.runfile.plan import build_plan
from tests.codes.harness import independent_sum

BUILT_IN = ("noise", "reversed", "constant", "alie", "ipm")


def test_noise_draws_what_the_runtime_drew_before_attacks_were_plug_ins():
    """The worker's old ``_corrupt``, written out: the same bits for the same seed."""
    payload = np.random.default_rng(5).standard_normal(33)
    old = payload.copy()
    rng = np.random.default_rng([7, 0xAD5, 3, 2])
    rms = float(np.sqrt(np.mean(old * old))) or 1.0
    old += rng.standard_normal(old.size) * (2.5 * rms)
    new = attacks.build("noise", {"scale": 2.5}).forge(
        payload, np.empty((0, 33)), attack_rng(7, 3, 2)
    )
    assert np.array_equal(new, old)


def test_each_attack_forges_what_its_paper_says():
    rng = np.random.default_rng(0)
    own, honest = rng.standard_normal(5), rng.standard_normal((4, 5))
    forge = {
        name: attacks.build(name, params)
        for name, params in [
            ("reversed", {"scale": 3}),
            ("constant", {"value": -2}),
            ("alie", {"z": 1.5}),
            ("ipm", {"epsilon": 0.5}),
        ]
    }
    assert np.array_equal(forge["reversed"].forge(own, honest, rng), -3 * own)
    assert np.array_equal(forge["constant"].forge(own, honest, rng), np.full(5, -2.0))
    expected = honest.mean(axis=0) + 1.5 * honest.std(axis=0)
    assert np.allclose(forge["alie"].forge(own, honest, rng), expected)
    assert np.allclose(forge["ipm"].forge(own, honest, rng), -0.5 * honest.mean(axis=0))
    declared = {
        name: (attacks.attack_class(name).omniscient, attacks.build(name).honest_needed())
        for name in BUILT_IN
    }
    assert declared == {
        "noise": (False, 0),
        "reversed": (False, 0),
        "constant": (False, 0),
        "alie": (True, 2),
        "ipm": (True, 1),
    }


def test_omniscient_attacks_forge_from_the_others_honest_messages_only():
    messages = {0: np.ones(3), 1: 3 * np.ones(3), 2: 100 * np.ones(3)}
    forged = attacks.build("ipm", {"epsilon": 1}).apply(messages, [2], np.random.default_rng(0))
    assert np.array_equal(forged[2], -2 * np.ones(3)) and forged[0] is messages[0]


def test_refusals_are_one_line_naming_the_attack_and_the_constraint():
    alie = attacks.build("alie")
    with pytest.raises(
        AttackError,
        match=r"^attack alie needs at least 2 honest messages to "
        r"forge from \(got 1\)$",
    ):
        alie.apply({0: np.ones(2), 1: np.zeros(2)}, [1], np.random.default_rng(0))
    with pytest.raises(
        ParameterError, match="attack reversed needs scale to be a finite number > 0"
    ):
        attacks.build("reversed", {"scale": -1})
    with pytest.raises(ParameterError, match=r"attack alie: .*unexpected keyword argument 'q'"):
        attacks.build("alie", {"q": 1})
    with pytest.raises(UnknownNameError, match=r"unknown attack 'nope' \(available: alie, "):
        attacks.build("nope")
    with pytest.raises(AttackError, match=r"attack ipm: crc .* corrects no adversaries"):
        verify(build("crc", n=4, s=1), attack=attacks.build("ipm"))


class Greedy(Attack):
    """Needs more honest messages than any small code has."""

    name = "greedy"
    omniscient = True
    min_honest = 50

    def forge(self, own, honest, rng):
        return honest.mean(axis=0)


@pytest.fixture
def greedy():
    attacks.register("greedy", Greedy)
    yield Greedy()
    attacks.unregister("greedy")


def test_an_attack_the_decoding_cannot_feed_is_refused_in_verify_and_run_files(greedy):
    code = build("draco-repetition", n=6, a=1)
    with pytest.raises(
        AttackError,
        match=r"^attack greedy needs at least 50 honest messages "
        r"to forge from \(got 5\): draco-repetition decodes from 6 responders, "
        r"a = 1 of them liars$",
    ):
        verify(code, attack=greedy)
    run = _run(adversaries={"workers": [2], "attack": "greedy"})
    with pytest.raises(ConfigError, match=r"^adversaries.attack: attack greedy needs at least 50"):
        build_plan(parse_config(run))


def _run(**overrides):
    run = {
        "iterations": 3,
        "data": {"prepared": "/nowhere"},
        "model": {"kind": "logistic"},
        "scheme": {"name": "draco-repetition", "params": {"n": 6, "a": 1}},
        "optimizer": {"step": 0.5},
    }
    return run | overrides


def test_run_files_old_form_means_noise_and_keeps_its_fingerprint():
    old = parse_config(_run(adversaries={"workers": [2], "scale": 10.0}))
    plan = old.adversaries.plan()
    assert (plan.attack_name, plan.attack_params, plan.workers) == ("noise", {"scale": 10.0}, (2,))
    assert old.adversaries.fingerprint_fields() == {"workers": [2], "scale": 10.0}
    new = parse_config(
        _run(
            adversaries={
                "workers": [2],
                "attack": "alie",
                "params": {"z": 2},
                "iterations": {"start": 1, "every": 2},
            }
        )
    )
    schedule = new.adversaries.plan()
    assert [schedule.lies(2, t) for t in range(5)] == [False, True, False, True, False]
    assert not schedule.lies(1, 1) and new.fingerprint() != old.fingerprint()
    build_plan(new)  # alie has n - 1 = 5 honest messages at least


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        ({"workers": [2], "scale": 2, "attack": "noise"}, "adversaries.scale: the old form's"),
        ({"workers": [2], "attack": "nope"}, "adversaries.attack: unknown attack 'nope'"),
        (
            {"workers": [2], "attack": "alie", "params": {"z": "x"}},
            "adversaries.params: attack alie needs a number z",
        ),
        (
            {"workers": [2], "iterations": {"start": 3, "stop": 2}},
            "adversaries.iterations.stop: must be > start",
        ),
        (
            {"workers": [2], "iterations": {"every": 0}},
            "adversaries.iterations.every: must be >= 1",
        ),
        ({"workers": [2], "iterations": {"when": 1}}, "adversaries.iterations.when: unknown key"),
        ({"workers": [2], "how": 1}, "adversaries.how: unknown key"),
        ({"workers": [1, 2]}, "adversaries.workers: 2 adversaries but the code corrects a = 1"),
    ],
)
def test_bad_adversaries_blocks_are_one_line_naming_the_key(block, expected):
    with pytest.raises(UserError) as caught:
        build_plan(parse_config(_run(adversaries=block)))
    assert expected in str(caught.value) and "\n" not in str(caught.value)


CODES = [
    ("draco-repetition", {"n": 6, "a": 1}),
    ("draco-repetition", {"n": 10, "a": 2}),
    ("draco-cyclic", {"n": 9, "a": 2}),
    ("draco-cyclic", {"n": 8, "a": 1, "s": 1}),
    (
        "heterogeneous",
        {"placement": [[(w + j) % 6 for j in range(4)] for w in range(6)], "s": 1, "a": 1},
    ),
]


@pytest.mark.parametrize("attack", BUILT_IN)
@pytest.mark.parametrize(("name", "params"), CODES, ids=lambda x: str(x))
def test_every_attack_decodes_exactly_and_names_the_liars(name, params, attack):
    code = build(name, **params)
    report = verify(code, exhaustive=True, attack=attacks.build(attack))
    assert not report.failures, report.failures[:3]
    assert report.max_relative_error <= 1e-9
    assert report.patterns_checked == report.patterns_total
    assert report.liars_named == report.patterns_with_liars > 0


@pytest.mark.parametrize("attack", BUILT_IN)
def test_draco_against_an_independent_sum_with_every_placement_of_a_liars(attack):
    """Outside the harness: ``a`` liars at every place, the sum by compensated summation."""
    import itertools

    rng = np.random.default_rng(1)
    code = build("draco-cyclic", n=11, a=2)
    partials = rng.standard_normal((code.k, 29))
    reference = independent_sum(partials)
    honest = {w: code.encode(w, partials[list(code.partitions(w))]) for w in range(code.n)}
    forger = attacks.build(attack)
    for liars in itertools.combinations(range(code.n), 2):
        result = code.decode_result(forger.apply(honest, list(liars), rng), 29)
        assert np.allclose(result.gradient, reference, rtol=0, atol=1e-9 * np.abs(reference).max())
        assert sorted(result.adversaries) == list(liars)


def test_attack_plans_schedule_workers_and_iterations():
    plan = AttackPlan((1, 3), "reversed", {"scale": 2}, start=2, stop=7, every=2)
    assert [t for t in range(10) if plan.lies(3, t)] == [2, 4, 6]
    assert not plan.lies(0, 2) and plan.attack().params() == {"scale": 2.0}
