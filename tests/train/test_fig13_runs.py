"""Paper 001's Fig. 13 as MPI runs through the workflow: config/fig13-cnn.yaml's experiment is
one the workflow accepts (its data named by dataset and variant only) and draws, and the
default workflow's network run trains on CIFAR-10's variant small as an exact code must."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from gradcode.data import prepare
from gradcode.pipeline import stand_ins
from gradcode.pipeline.figures import FigureTable, load_registry, wanted_files
from gradcode.pipeline.runs import collect_runs
from gradcode.pipeline.stand_ins import resolve_data
from gradcode.runfile.config import load_config
from gradcode.runfile.reference import serial_trajectory
from tests.helpers.mpi import relative_errors, run_config

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / "workflow"
#: float32 network: see test_networks_mpi.py and docs/guide/models.md, Precision
FLOAT32 = 1e-5


def test_the_fig13_config_is_a_workflow_experiment_with_its_figure(monkeypatch, tmp_path):
    config = yaml.safe_load((ROOT / "config" / "fig13-cnn.yaml").read_text())
    runs = collect_runs(config["train"]["runs"], config["train"]["experiments"], ROOT)
    ids = runs.experiments["coded-reduce-fig13"]
    assert [run.split("/")[1] for run in ids] == ["UMW", "GC", "RAR", "SGD", "CR"]
    assert {runs.ranks[run] for run in ids} == {21}
    assert {runs.plan(run).partitions for run in ids} == {20, 28}
    for run in ids:
        assert runs.runs[run][1]["data"] == {"dataset": "cifar10", "variant": "small"}
    # 1,260 images: no scheme trims a row (1,200 left CodedReduce's 28 partitions 1,176)
    assert all(1260 % runs.plan(run).partitions == 0 for run in ids)
    monkeypatch.setenv("GRADCODE_DATA_DIR", str(tmp_path))  # no CIFAR-10 files there
    stand_ins.raw_files_present.cache_clear()
    try:
        assert resolve_data("cifar10", "small", "auto") == ("cifar10-standin", "small")
    finally:
        stand_ins.raw_files_present.cache_clear()
    registry = load_registry(WORKFLOW / "figures.yaml", WORKFLOW / "schemas/figures.schema.yaml")
    table = FigureTable.build(registry, runs)
    assert "coded_reduce_fig13_runs" in table.active(wanted_files(config, runs))


@pytest.fixture(scope="module")
def small_standin(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("data") / "cifar10-standin-small"
    prepare("cifar10-standin", out, variant="small")
    return out


@pytest.mark.mpi
def test_the_default_network_run_trains_the_cnn_on_the_small_stand_in(tmp_path, small_standin):
    run = yaml.safe_load((ROOT / "config" / "runs" / "smoke-cnn.yaml").read_text())
    assert run["data"] == {"dataset": "cifar10", "variant": "small"}
    # as the workflow's run_config does: the data points at the prepared set; two iterations
    run |= {"data": {"prepared": str(small_standin)}, "iterations": 2, "log": {"trajectory": True}}
    job = run_config(tmp_path, run, ranks=7, timeout=240).check()
    summary = job.summary()
    assert summary["world_size"] == 7 and summary["data"]["stand_in"]
    assert summary["data"]["rows"] == 1260 and summary["model"]["kind"] == "coded-reduce-cnn"
    assert 0.0 <= summary["final"]["accuracy"] <= 1.0 and np.isfinite(summary["final"]["loss"])
    reference = serial_trajectory(load_config(job.run_file))
    assert relative_errors(job.trajectory(), reference).max() <= FLOAT32
