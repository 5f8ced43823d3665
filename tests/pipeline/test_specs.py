"""Simulation specs of a workflow config (``simulate.specs``): validated, tabled and drawn."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradcode.errors import UserError
from gradcode.pipeline.figures import FigureTable, load_registry, wanted_files
from gradcode.pipeline.runs import TrainingRuns
from gradcode.pipeline.specs import collect_specs, spec_table

ROOT = Path(__file__).resolve().parents[2]

SPEC = """\
model: master-worker
parameters: {lambda1: 0.8, t1: 1.6}
schemes:
  - {scheme: SCHEME, params: {n: 4, s: 1}}
"""


def _spec(folder: Path, name: str, scheme: str = "frc") -> str:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(SPEC.replace("SCHEME", scheme))
    return str(path.relative_to(folder))


def test_specs_are_read_and_named_by_their_stem(tmp_path):
    files = [_spec(tmp_path, "a.yaml"), _spec(tmp_path, "sub/b.yml", "crc")]
    assert collect_specs(files, tmp_path) == {"a": "a.yaml", "b": "sub/b.yml"}
    assert spec_table("a") == "results/sim/spec/a.csv"


@pytest.mark.parametrize(
    "files, message",
    [
        (["missing.yaml"], r"simulate\.specs\[0\] \(missing\.yaml\): no such file"),
        (["bad.yaml"], r"simulate\.specs\[0\] \(bad\.yaml\): .*unknown scheme 'nope' .*frc"),
        (["a.yaml", "sub/a.yaml"], r"simulate\.specs\[1\] .*another spec is also named 'a'"),
    ],
)
def test_bad_specs_fail_naming_the_config_key(tmp_path, files, message):
    _spec(tmp_path, "a.yaml")
    _spec(tmp_path, "sub/a.yaml")
    _spec(tmp_path, "bad.yaml", "nope")
    with pytest.raises(UserError, match=message):
        collect_specs(files, tmp_path)


def test_the_simulations_figure_draws_every_spec_table():
    registry = load_registry(
        ROOT / "workflow" / "figures.yaml", ROOT / "workflow" / "schemas" / "figures.schema.yaml"
    )
    config = {"simulate": {"presets": []}, "analyze": {"names": []}}
    table = FigureTable.build(registry, TrainingRuns(), ["b", "a"])
    wanted = wanted_files(config, TrainingRuns(), ["a", "b"])
    assert table.inputs["simulations"] == {"tables": [spec_table("a"), spec_table("b")]}
    assert "simulations" in table.active(wanted)
    assert "simulations" not in FigureTable.build(registry, TrainingRuns()).inputs
