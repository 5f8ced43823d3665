"""Spec validation: strict, one line, naming the key."""

import pytest

from gradcode.sim import SpecError, load_spec, read_spec

BASE = {
    "model": "master-worker",
    "parameters": {"lambda1": 1, "t1": 0},
    "schemes": [{"scheme": "crc", "params": {"n": 4, "s": 1}}],
}


def _with(**changes):
    return {**BASE, **changes}


@pytest.mark.parametrize(
    "data, message",
    [
        ([1], r"test: a spec must be a mapping \(got list\)"),
        (_with(trials=3), r"test: trials: unknown key \(allowed: name, description"),
        ({"model": "master-worker", "schemes": []}, r"test: parameters: missing"),
        (_with(model="queue"), r"test: model: unknown model 'queue' \(available: .*master-worker"),
        (_with(model=3), r"test: model: must be a model name"),
        (_with(parameters={"lambda1": 1}), r"test: parameters\.t1: missing"),
        (_with(parameters={"lambda1": 1, "t1": 0, "x": 1}), r"test: parameters\.x: unknown"),
        (_with(length=0), r"test: length: must be an integer >= 1 \(got 0\)"),
        (_with(confidence=1.5), r"test: confidence: must be a number in \(0, 1\)"),
        (_with(description=3), r"test: description: must be a string"),
        (_with(schemes=[]), r"test: schemes: must be a non-empty list"),
        (_with(schemes=["crc"]), r"test: schemes\[0\]: must be a mapping with a scheme key"),
        (_with(schemes=[{"scheme": "crc", "parms": {}}]), r"test: schemes\[0\]\.parms: unknown"),
        (_with(schemes=[{"scheme": "nope"}]), r"test: schemes\[0\]\.params: unknown scheme"),
        (
            _with(schemes=[{"scheme": "crc", "params": {"n": 4, "s": 7}}]),
            r"test: schemes\[0\]\.params: crc needs",
        ),
        (
            _with(schemes=[{"scheme": "crc", "params": {"n": 4, "t": 1}}]),
            r"test: schemes\[0\]\.params: crc: .*unexpected keyword argument 't'",
        ),
        (
            _with(schemes=[{"scheme": "crc", "params": {"n": 4}, "grid": {"s": 1}}]),
            r"test: schemes\[0\]\.grid\.s: must be a non-empty list",
        ),
        (
            _with(schemes=[{"scheme": "crc", "params": {"n": 4, "s": 1}, "grid": {"s": [1]}}]),
            r"test: schemes\[0\]\.grid\.s: also given in params",
        ),
        (
            _with(schemes=[{"scheme": "crc", "params": {"n": 4, "s": 1}, "reference": "x"}]),
            r"test: schemes\[0\]\.reference: must be a number",
        ),
        (
            _with(parameters={"lambda1": [1, 2, 3], "t1": 0}),
            r"test: schemes\[0\]: parameters\.lambda1: describes 3 workers but crc has 4",
        ),
        (
            _with(schemes=[{"scheme": "ring-allreduce", "params": {"n": 4}}]),
            r"test: schemes\[0\]: model master-worker simulates gradient codes, not ring-allreduce",
        ),
        (
            _with(schemes=[{"scheme": "ring-allreduce", "params": {"m": 4}}]),
            r"test: schemes\[0\]\.params: ring-allreduce: .*unexpected keyword argument 'm'",
        ),
    ],
)
def test_errors_name_the_key(data, message):
    with pytest.raises(SpecError, match=message) as caught:
        load_spec(data, origin="test")
    assert "\n" not in str(caught.value)


GRID = {"d": [2, 3], "m": [1, 2]}


def test_grid_expands_to_one_configuration_per_combination():
    spec = load_spec(
        _with(schemes=[{"scheme": "ye-abbe", "params": {"n": 5, "s": 0}, "grid": GRID}]),
        origin="test",
    )
    assert [(c.scheme.d, c.scheme.m) for c in spec.schemes] == [(2, 1), (2, 2), (3, 1), (3, 2)]
    assert spec.name == "spec" and spec.confidence == 0.95 and spec.length is None


def test_yaml_file_round_trip_and_errors(tmp_path):
    path = tmp_path / "study.yaml"
    path.write_text(
        "model: single-port\n"
        "parameters: {a: 0.001, mu: 1000, tc: 0.1, data: 120}\n"
        "schemes:\n"
        "  - {scheme: ring-allreduce, params: {n: 6}, label: RAR}\n"
        "  - {scheme: coded-reduce, params: {n: 2, L: 2, s: 1}}\n"
    )
    spec = read_spec(path)
    assert spec.name == "study" and [c.label for c in spec.schemes] == ["RAR", "coded-reduce"]
    path.write_text("model: [unclosed\n")
    with pytest.raises(SpecError, match=r"study.yaml: not valid YAML at line 2"):
        read_spec(path)
    with pytest.raises(SpecError, match="cannot read"):
        read_spec(tmp_path / "missing.yaml")
