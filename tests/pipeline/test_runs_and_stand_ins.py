"""Training runs collected from a workflow config, and the data each trains on."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gradcode.pipeline import stand_ins
from gradcode.pipeline.runs import collect_runs
from gradcode.pipeline.stand_ins import resolve_data

ROOT = Path(__file__).resolve().parents[2]


def test_runs_and_experiments_are_collected_with_their_ranks():
    runs = collect_runs(
        ["config/runs/smoke-frc.yaml"], ["config/experiments/smoke/ye-abbe-amazon.yaml"], ROOT
    )
    assert runs.plain_runs() == ["smoke-frc"]
    assert runs.experiments["ye-abbe-amazon"][0].startswith("ye-abbe-amazon/")
    assert (
        runs.ranks["smoke-frc"]
        == yaml.safe_load((ROOT / "config/runs/smoke-frc.yaml").read_text())["scheme"]["params"][
            "n"
        ]
        + 1
    )
    source, document = runs.runs["smoke-frc"]
    assert Path(source).is_file() and document["data"]["dataset"]


def test_a_run_defined_twice_or_with_workflow_owned_data_keys_names_the_config_key(tmp_path):
    with pytest.raises(ValueError, match=r"train\.runs\[1\].*defined twice"):
        collect_runs(["config/runs/smoke-frc.yaml", "config/runs/smoke-frc.yaml"], [], ROOT)
    run = yaml.safe_load((ROOT / "config/runs/smoke-frc.yaml").read_text())
    run["data"]["prepared"] = "somewhere"
    (tmp_path / "mine.yaml").write_text(yaml.safe_dump(run))
    with pytest.raises(ValueError, match=r"train\.runs\[0\] \(mine\.yaml\)"):
        collect_runs(["mine.yaml"], [], tmp_path)


def test_missing_raw_files_mean_the_labelled_stand_in_or_an_error(monkeypatch, tmp_path):
    monkeypatch.setenv("GRADCODE_DATA_DIR", str(tmp_path))  # an empty folder
    stand_ins.raw_files_present.cache_clear()
    try:
        assert resolve_data("amazon", None, "auto") == ("amazon-standin", "tandon")
        assert resolve_data("synthetic-logistic", None, "never")[0] == "synthetic-logistic"
        with pytest.raises(ValueError, match=r"stand_ins=never.*\$GRADCODE_DATA_DIR/amazon"):
            resolve_data("amazon", None, "never")
    finally:
        stand_ins.raw_files_present.cache_clear()


def test_real_files_in_place_are_used(monkeypatch):
    root = ROOT.parent / "shared" / "datasets"
    if not (root / "amazon").is_dir():
        pytest.skip(f"{root}/amazon is absent: the real Amazon files are not available")
    monkeypatch.setenv("GRADCODE_DATA_DIR", str(root))
    stand_ins.raw_files_present.cache_clear()
    try:
        assert resolve_data("amazon", None, "never") == ("amazon", "tandon")
    finally:
        stand_ins.raw_files_present.cache_clear()
