"""Fit studies of a workflow config: validated at DAG construction, the recommended run file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from gradcode.errors import UserError
from gradcode.pipeline.fit_studies import collect_studies, write_recommended_run
from gradcode.pipeline.runs import collect_runs

ROOT = Path(__file__).resolve().parents[2]


def _runs():
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    return config, collect_runs(config["train"]["runs"], config["train"]["experiments"], ROOT)


def test_the_default_config_fits_the_uncoded_run_of_ten_workers():
    config, runs = _runs()
    study = collect_studies(config["fit"], runs)["ye-abbe-amazon-n10"]
    assert study.workers == 10 and study.calibrate == ("ye-abbe-amazon/n10-uncoded",)
    assert study.outputs() == [
        "results/fit/ye-abbe-amazon-n10/fitted.yaml",
        "results/fit/ye-abbe-amazon-n10/recommend.json",
        "results/train/ye-abbe-amazon-n10/recommended/summary.json",
    ]
    args = study.recommend_arguments()
    assert args[:2] == ["--n", "10"] and "--exact-only" in args
    assert args[args.index("--model-kind") + 1] == "logistic"


@pytest.mark.parametrize(
    ("calibrate", "message"),
    [
        (["nope"], r"config fit\.s\.calibrate: no run 'nope'"),
        (
            ["ye-abbe-amazon/n10-uncoded", "coded-reduce-fig8/CR"],
            r"mixes flat runs and tree or ring runs",
        ),
        (
            ["ye-abbe-amazon/n10-uncoded", "ye-abbe-amazon/n15-uncoded"],
            r"runs of \[10, 15\] workers",
        ),
        (["failed-workers/frc"], r"has faults; calibrate on runs of a healthy cluster"),
    ],
)
def test_a_bad_study_is_one_line_naming_the_key(calibrate, message):
    _, runs = _runs()
    with pytest.raises(ValueError, match=message):
        collect_studies({"s": {"calibrate": calibrate}}, runs)


def test_the_recommended_run_is_the_calibration_run_with_the_best_scheme(tmp_path):
    run = {
        "name": "exp/uncoded",
        "iterations": 30,
        "scheme": {"name": "uncoded", "params": {"n": 8}},
    }
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(run))
    best = {"scheme": "frc", "params": {"n": 8, "s": 3}}
    (tmp_path / "rec.json").write_text(json.dumps({"best": best}))
    out = tmp_path / "study" / "recommended" / "run.yaml"
    out.parent.mkdir(parents=True)
    write_recommended_run(tmp_path / "run.yaml", tmp_path / "rec.json", out)
    written = yaml.safe_load(out.read_text())
    assert written == {
        "name": "study/recommended",
        "iterations": 30,
        "scheme": {"name": "frc", "params": {"n": 8, "s": 3}},
        "runtime": {"collection": "push"},  # as the fitted models predict
    }
    (tmp_path / "rec.json").write_text(json.dumps({"best": None}))
    with pytest.raises(UserError, match="recommends no code"):
        write_recommended_run(tmp_path / "run.yaml", tmp_path / "rec.json", out)


def test_a_study_gives_the_links_latency_in_the_duration_grammar():
    # a fit over real links of one message size cannot identify the latency (issue 43)
    _, runs = _runs()
    entry = {"calibrate": ["ye-abbe-amazon/n10-uncoded"], "latency": "0ms"}
    args = collect_studies({"s": entry}, runs)["s"].fit_arguments()
    assert args[args.index("--latency") + 1] == "0ms"
    assert (
        "--latency"
        not in collect_studies({"s": {**entry, "latency": None}}, runs)["s"].fit_arguments()
    )
    with pytest.raises(ValueError, match=r"config fit\.s\.latency: '1' has no unit"):
        collect_studies({"s": {**entry, "latency": "1"}}, runs)


def test_the_cluster_study_gives_its_latency():
    config = yaml.safe_load((ROOT / "config" / "cluster.yaml").read_text())
    assert config["fit"]["cluster-ye-abbe-n8-fit"]["latency"] == "0ms"
