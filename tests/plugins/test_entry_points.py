"""Plug-in codes and timing models from an installed distribution's entry points."""

import os
import subprocess
import sys

import pytest

from gradcode.codes import available, build, register, scheme_class
from gradcode.codes.conformance import assert_conforms
from gradcode.codes.registry import SCHEMES, source
from gradcode.errors import UnknownNameError
from gradcode.plugins import PluginError
from gradcode.runfile.stragglers import build_source
from gradcode.sim.spec import load_spec
from gradcode.timing import TIMING_MODELS, model_from_spec, timing_models
from tests.helpers.plugins import REFUSED


def test_a_plugin_code_works_like_a_built_in(fakeplug):
    assert "toy-replica" in available()
    assert source("toy-replica") == "plug-in fakeplug 0.1"
    code = build("toy-replica", n=4)
    assert code.loads().tolist() == [4, 4, 4, 4]
    assert_conforms(code, exhaustive=True)


def test_refused_plugins_leave_every_built_in(fakeplug):
    _, warned = fakeplug
    assert set(SCHEMES) <= set(available())
    assert scheme_class("crc").__module__ == "gradcode.codes.crc"
    for name, reason in REFUSED.items():
        lines = [line for line in warned if line.startswith(f"plug-in {name!r} ")]
        assert len(lines) == 1, (name, warned)
        assert "from distribution 'fakeplug 0.1' left out: " in lines[0]
        assert reason in lines[0]
        assert "\n" not in lines[0]
        if name != "crc":
            assert name not in available()


@pytest.mark.parametrize("name", sorted(set(REFUSED) - {"crc"}))
def test_asking_for_a_refused_plugin_says_why(fakeplug, name):
    with pytest.raises(PluginError, match=f"plug-in '{name}' .* from distribution 'fakeplug 0.1'"):
        build(name, n=3)


def test_unknown_names_still_list_the_known_ones(fakeplug):
    with pytest.raises(UnknownNameError, match="toy-replica") as caught:
        build("nope")
    assert set(SCHEMES) | {"toy-replica"} == set(caught.value.known)


def test_register_refuses_a_plugin_name_and_unfit_classes(fakeplug):
    toy = scheme_class("toy-replica")
    with pytest.raises(ValueError, match="a scheme of that name exists"):
        register("toy-replica", toy)
    with pytest.raises(ValueError, match="is named 'toy-replica', not 'other'"):
        register("other", toy)
    with pytest.raises(ValueError, match="is not a GradientCode subclass"):
        register("other", dict)


def test_a_plugin_timing_model_serves_specs_and_run_files(fakeplug):
    assert set(TIMING_MODELS) < set(timing_models())
    assert "broken-model" not in timing_models()
    params = {"lambda1": 0.8, "t1": 1.6}
    assert model_from_spec("toy-model", params).params() == params
    spec = load_spec(
        {
            "model": "toy-model",
            "parameters": params,
            "schemes": [{"scheme": "toy-replica", "params": {"n": 3}}],
        },
        origin="spec.yaml",
    )
    assert spec.model_name == "toy-model"
    delays = build_source("toy-model", params, workers=3, partitions=3, seed=0, time_unit=0.01)
    assert delays.delays(0).compute.shape == (3,)
    with pytest.raises(ValueError, match=r"stragglers\.model: plug-in 'broken-model'"):
        build_source("broken-model", {}, workers=3, partitions=3, seed=0, time_unit=0.01)


def test_without_the_distribution_only_built_ins_remain():
    assert set(available()) == set(SCHEMES)
    assert set(timing_models()) == set(TIMING_MODELS)


def _gradcode(site, *args):
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run(
        [sys.executable, "-m", "gradcode", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )


def test_command_line_lists_plugins_and_warns_in_one_line_each(fakeplug):
    site, _ = fakeplug
    result = _gradcode(site, "codes", "list")
    assert result.returncode == 0, result.stderr
    assert "toy-replica" in result.stdout and "[plug-in fakeplug 0.1]" in result.stdout
    assert all(name in result.stdout for name in SCHEMES)
    warnings = result.stderr.strip().splitlines()
    assert len(warnings) == len(REFUSED)  # codes list reads no timing model
    assert all(line.startswith("gradcode: warning: plug-in '") for line in warnings)


def test_command_line_verifies_a_plugin_and_refuses_a_broken_one(fakeplug):
    site, _ = fakeplug
    result = _gradcode(site, "codes", "verify", "toy-replica", "--n", "5", "--exhaustive")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "verdict              PASS" in result.stdout
    result = _gradcode(site, "codes", "verify", "broken-import", "--n", "5")
    assert result.returncode == 2
    error = [line for line in result.stderr.splitlines() if line.startswith("gradcode: error:")]
    assert error == [
        "gradcode: error: plug-in 'broken-import' (fakeplug.missing:Nothing) from distribution"
        " 'fakeplug 0.1' left out: import failed: ModuleNotFoundError: No module named"
        " 'fakeplug.missing'"
    ]


def test_a_plugin_attack_serves_verify_and_run_files_and_cannot_take_a_built_in_name(fakeplug):
    import warnings

    import pytest as _pytest

    from gradcode import attacks
    from gradcode.attacks import AttackError
    from gradcode.codes.verify import verify
    from gradcode.runfile.config import parse_config

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert "toy-zero" in attacks.available()
    assert any("plug-in 'noise'" in str(w.message) and "built-in" in str(w.message) for w in caught)
    assert attacks.source("toy-zero") == "plug-in fakeplug 0.1"
    assert attacks.source("noise") == "built-in"
    zero = attacks.build("toy-zero")
    report = verify(build("draco-cyclic", n=9, a=2), exhaustive=True, attack=zero)
    assert not report.failures and report.liars_named == report.patterns_with_liars
    with _pytest.raises(AttackError, match="attack toy-zero needs at least 3 honest messages"):
        verify(build("draco-repetition", n=3, a=1), attack=zero)
    run = {
        "iterations": 2,
        "data": {"prepared": "/nowhere"},
        "model": {"kind": "logistic"},
        "scheme": {"name": "draco-cyclic", "params": {"n": 9, "a": 2}},
        "optimizer": {"step": 0.5},
        "adversaries": {"workers": [0, 4], "attack": "toy-zero"},
    }
    assert parse_config(run).adversaries.plan().attack().name == "toy-zero"


def test_a_plugin_aggregator_serves_run_files_and_cannot_take_a_built_in_name(fakeplug):
    import warnings

    import numpy as np
    import pytest as _pytest

    from gradcode import aggregators
    from gradcode.runfile.config import ConfigError, parse_config
    from gradcode.runfile.plan import build_plan

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert "toy-first" in aggregators.available()
    assert any(
        "plug-in 'median'" in str(w.message) and "built-in" in str(w.message) for w in caught
    )
    assert aggregators.source("toy-first") == "plug-in fakeplug 0.1"
    assert aggregators.source("median") == "built-in"
    toy = aggregators.build("toy-first")
    assert toy.aggregate(np.arange(6.0).reshape(3, 2)).selected == (0,)
    run = {
        "iterations": 2,
        "data": {"prepared": "/nowhere"},
        "model": {"kind": "logistic"},
        "scheme": {"name": "uncoded", "params": {"n": 1}},
        "optimizer": {"step": 0.5},
        "aggregator": {"name": "toy-first"},
    }
    refused = r"^aggregator.params: aggregator toy-first needs n >= 2"
    with _pytest.raises(ConfigError, match=refused):
        build_plan(parse_config(run))
    run["scheme"]["params"] = {"n": 3}
    assert build_plan(parse_config(run)).config.aggregator.build().name == "toy-first"
