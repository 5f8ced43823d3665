"""Experiment files: base + overrides, validated like run files, naming file, run and key."""

import functools
from pathlib import Path

import pytest

from gradcode.runfile.config import ConfigError
from gradcode.runfile.experiment import load_experiment, merge, parse_experiment
from gradcode.runfile.plan import build_plan
from gradcode.timing.exact import ye_abbe_expected_time

ROOT = Path(__file__).resolve().parents[2]
EXPERIMENTS = sorted((ROOT / "config" / "experiments").rglob("*.yaml"))

BASE = {
    "iterations": 3,
    "data": {"dataset": "synthetic-logistic", "variant": "small"},
    "model": {"kind": "logistic"},
    "optimizer": {"kind": "gd", "step": 1.0},
    "stragglers": {"model": "fixed", "params": {"compute": 0.0}},
}


def test_merge_is_deep_for_mappings_and_replaces_the_rest():
    base = {"a": {"x": 1, "y": {"z": 2}}, "b": [1, 2], "c": 3}
    merged = merge(base, {"a": {"y": {"w": 4}}, "b": [3]})
    assert merged == {"a": {"x": 1, "y": {"z": 2, "w": 4}}, "b": [3], "c": 3}
    assert base == {"a": {"x": 1, "y": {"z": 2}}, "b": [1, 2], "c": 3}  # not mutated


def test_runs_are_named_after_experiment_and_inherit_the_base():
    experiment = parse_experiment(
        {
            "base": BASE,
            "runs": {
                "u": {"scheme": {"name": "uncoded", "params": {"n": 4}}},
                "f": {"scheme": {"name": "frc", "params": {"n": 4, "s": 1}}, "iterations": 5},
            },
        },
        default_name="demo",
    )
    assert list(experiment.runs) == ["u", "f"]
    assert experiment.runs["u"]["name"] == "demo/u"
    assert experiment.config("f").iterations == 5
    assert experiment.config("u").iterations == 3
    assert build_plan(experiment.config("f")).world_size == 5


def test_a_sweep_runs_every_run_once_per_value():
    experiment = parse_experiment(
        {
            "base": {**BASE, "network": {"links": {"rate": "100mbit"}}},
            "runs": {
                "u": {"scheme": {"name": "uncoded", "params": {"n": 4}}},
                "f": {"scheme": {"name": "frc", "params": {"n": 4, "s": 1}}},
            },
            "sweep": {"key": "network.links.latency", "values": ["0ms", "1ms"]},
        },
        default_name="demo",
    )
    assert list(experiment.runs) == ["u-0ms", "u-1ms", "f-0ms", "f-1ms"]
    assert experiment.runs["f-1ms"]["name"] == "demo/f-1ms"
    links = experiment.config("f-1ms").network.links
    assert links.latency == 0.001 and links.rate_text == "100mbit"  # merged over the base
    assert experiment.world_sizes["u-0ms"] == 5


@pytest.mark.parametrize(
    ("sweep", "message"),
    [
        ({"key": "network.links.latency"}, "sweep: must be a mapping with key"),
        ({"key": "a b", "values": [1]}, "sweep.key: must be a dotted run key"),
        ({"key": "iterations", "values": []}, "sweep.values: must be a non-empty list"),
        ({"key": "iterations", "values": [2, 2]}, "sweep.values: a value is given twice"),
        ({"key": "iterations", "values": ["a b"]}, "makes the run name 'u-a b' unsafe"),
        ({"key": "network.links.latency", "values": [1]}, "runs.u-1: .*no unit"),
    ],
)
def test_bad_sweeps_fail_naming_the_key(sweep, message):
    raw = {
        "base": {**BASE, "network": {"links": {"rate": "100mbit"}}},
        "runs": {"u": {"scheme": {"name": "uncoded", "params": {"n": 4}}}},
        "sweep": sweep,
    }
    with pytest.raises(ConfigError, match=message):
        parse_experiment(raw, default_name="demo")


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"base": BASE, "runs": {}}, "runs: must be a non-empty mapping"),
        ({"base": BASE, "runs": {"a": {}}, "colour": 1}, "colour: unknown key"),
        ({"base": {**BASE, "name": "x"}, "runs": {"a": {}}}, "base: may not set name"),
        ({"base": BASE, "runs": {"a b": {}}}, "must be file-name safe"),
        ({"base": BASE, "runs": {"a": {"output": "x"}}}, "runs.a: may not set name or output"),
        ({"base": BASE, "runs": {"a": {}}}, "runs.a: scheme"),
        (
            {"base": BASE, "runs": {"a": {"scheme": {"name": "frc", "params": {"n": 4}}}}},
            "runs.a",
        ),
        (
            {"base": BASE, "runs": {"a": {"model": {"kind": "svm"}}}},
            "runs.a: model.kind",
        ),
    ],
)
def test_bad_experiments_fail_naming_the_key(raw, message):
    with pytest.raises(ConfigError, match=message):
        parse_experiment(raw, default_name="demo")


def test_file_errors_name_the_file(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("base: {iterations: 1}\nruns: {a: {iterations: 0}}\n")
    with pytest.raises(ConfigError, match=r"broken\.yaml: runs\.a: "):
        load_experiment(path)


@pytest.mark.parametrize("path", EXPERIMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_shipped_experiments_are_valid(path):
    experiment = load_experiment(path)
    for run in experiment.runs:
        assert build_plan(experiment.config(run)).world_size >= 2


@functools.cache
def _expected_times(n: int, model: tuple) -> dict[tuple[int, int, int], float]:
    return {
        (d, d - m, m): ye_abbe_expected_time(n, d, m, **dict(model))
        for m in range(1, n + 1)
        for d in range(m, n + 1)
    }


@pytest.mark.parametrize("variant", ["", "paper/"])
def test_fig3_codes_are_the_models_best(variant):
    """Per n: uncoded, the best m = 1 code and the two best m > 1 codes of Section 5's model."""
    experiment = load_experiment(ROOT / f"config/experiments/{variant}ye-abbe-amazon.yaml")
    model = experiment.paper["model"]
    chosen: dict[int, set[tuple[int, int, int]]] = {}
    for run in experiment.runs.values():
        scheme = run["scheme"]
        params = scheme["params"]
        if scheme["name"] == "uncoded":
            code = (1, 0, 1)
        else:
            assert params["s"] == params["d"] - params["m"]
            code = (params["d"], params["s"], params["m"])
        chosen.setdefault(params["n"], set()).add(code)
    assert sorted(chosen) == [10, 15, 20]
    for n, codes in chosen.items():
        times = _expected_times(n, tuple(sorted(model.items())))
        m1 = sorted((t, code) for code, t in times.items() if code[2] == 1 and code[0] > 1)
        mm = sorted((t, code) for code, t in times.items() if code[2] > 1)
        expected = {(1, 0, 1), m1[0][1], mm[0][1], mm[1][1]}
        assert codes == expected, (n, sorted(codes), sorted(expected))
