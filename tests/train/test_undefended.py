"""``adversaries.undefended``: liars against a code without defence, the comparison's baseline,
refused where the run has a defence; absent, the block's fingerprint is what it was."""

from __future__ import annotations

import pytest

from gradcode.runfile.config import ConfigError, parse_config
from gradcode.runfile.plan import build_plan

RUN = {
    "iterations": 4,
    "data": {"dataset": "synthetic-logistic", "variant": "small"},
    "model": {"kind": "logistic"},
    "scheme": {"name": "uncoded", "params": {"n": 6}},
    "optimizer": {"kind": "gd", "step": 1.0},
}


def _run(**overrides):
    return parse_config({**RUN, **overrides}, default_name="undefended")


def test_liars_against_uncoded_need_the_flag():
    liars = {"workers": [1], "attack": "reversed", "params": {"scale": 100}}
    with pytest.raises(ConfigError, match="undefended: true runs it without defence"):
        build_plan(_run(adversaries=liars))
    plan = build_plan(_run(adversaries={**liars, "undefended": True}))
    assert plan.config.adversaries.undefended
    assert plan.config.adversaries.plan().workers == (1,)


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"aggregator": {"name": "median"}}, "the run has aggregator median, a defence"),
        (
            {"scheme": {"name": "draco-repetition", "params": {"n": 6, "a": 1}}},
            "draco-repetition corrects a = 1 adversaries, a defence",
        ),
    ],
)
def test_a_run_with_a_defence_is_not_undefended(overrides, message):
    liars = {"workers": [1], "attack": "noise", "undefended": True}
    with pytest.raises(ConfigError, match=f"^adversaries.undefended: {message}$"):
        build_plan(_run(adversaries=liars, **overrides))


def test_the_flag_is_a_boolean():
    with pytest.raises(ConfigError, match=r"adversaries\.undefended"):
        _run(adversaries={"workers": [1], "attack": "noise", "undefended": "yes"})


def test_the_fingerprint_without_the_flag_is_unchanged():
    liars = {"workers": [1], "attack": "reversed", "params": {"scale": 100}}
    fields = _run(adversaries=liars).adversaries.fingerprint_fields()
    assert "undefended" not in fields
    flagged = _run(adversaries={**liars, "undefended": True}).adversaries
    assert flagged.fingerprint_fields() == {**fields, "undefended": True}
