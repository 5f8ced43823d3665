"""The Byzantine comparison's table and figure on real MPI runs: an experiment like
``config/experiments/byzantine.yaml``, small, whose runs are trained here as the workflow
trains them (the run file copied beside the outputs), then measured by
``gradcode.figures.byzantine`` and drawn by the notebook as rule ``figure`` runs it."""

from __future__ import annotations

import csv
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml

from gradcode.figures.byzantine import (
    COLUMNS,
    EXACT_TOLERANCE,
    ByzantineRunError,
    comparison_table,
    defence_of,
    read_byzantine_run,
    write_table,
)
from gradcode.runfile.experiment import load_experiment
from tests.helpers.data import small_logistic
from tests.helpers.mpi import cyclic, run_config
from tests.helpers.notebooks import execute_notebook

ROOT = Path(__file__).resolve().parents[2]
LIARS = {"workers": [1], "attack": "reversed", "params": {"scale": 100.0}}
UNCODED = {"name": "uncoded", "params": {"n": 6}}
RUNS = {
    "heterogeneous-a1-reversed": {
        "scheme": {
            "name": "heterogeneous",
            "params": {"placement": cyclic(6, 3), "s": 0, "a": 1},
        },
        "adversaries": LIARS,
    },
    "detox-median-a1-reversed": {
        "scheme": {"name": "detox", "params": {"n": 6, "r": 3}},
        "aggregator": {"name": "median"},
        "adversaries": LIARS,
    },
    "median-a1-reversed": {
        "scheme": UNCODED,
        "aggregator": {"name": "median"},
        "adversaries": LIARS,
    },
    "undefended-a1-reversed": {
        "scheme": UNCODED,
        "adversaries": {**LIARS, "undefended": True},
    },
}

pytestmark = pytest.mark.mpi


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> tuple[Path, list[Path]]:
    """The experiment file and its runs' summaries, each run trained as an MPI job."""
    folder = tmp_path_factory.mktemp("byzantine")
    data = small_logistic(folder / "data")
    experiment = folder / "byzantine.yaml"
    base = {
        "iterations": 6,
        "data": {"prepared": str(data)},
        "model": {"kind": "logistic"},
        "optimizer": {"kind": "gd", "step": 1.0},
        "log": {"trajectory": True},
    }
    document = {"name": "byzantine", "description": "test", "base": base, "runs": RUNS}
    experiment.write_text(yaml.safe_dump(document, sort_keys=False))
    spec = load_experiment(experiment)
    summaries = []
    for name, run in spec.runs.items():
        job = run_config(folder, run, ranks=spec.world_sizes[name], name=name).check()
        shutil.copyfile(job.run_file, job.out / "run.yaml")  # as rule run_config writes it
        summaries.append(job.out / "summary.json")
    return experiment, summaries


def test_each_run_is_measured_against_the_honest_serial_run(trained, tmp_path):
    _, summaries = trained
    rows = {row["run"]: row for row in comparison_table(summaries)}
    exact = rows["heterogeneous-a1-reversed"]
    assert exact["defence"] == "heterogeneous" and exact["attack"] == "reversed"
    assert exact["exact"] and exact["distance_max"] <= EXACT_TOLERANCE
    assert exact["liars_named"] == 1.0  # worker 1, every iteration
    assert exact["load_max"] == 3 and exact["a"] == 1 and exact["workers"] == 6
    assert exact["gradient_error"] < 1e-9
    assert exact["loss"] == pytest.approx(exact["loss_honest"], rel=1e-9)
    median, undefended = rows["median-a1-reversed"], rows["undefended-a1-reversed"]
    assert median["defence"] == "uncoded+median" and median["liars_named"] is None
    assert undefended["defence"] == "uncoded+none" and undefended["load_max"] == 1
    # the median estimates the mean: not exact, but far nearer than 100 x a reversed gradient
    assert EXACT_TOLERANCE < median["distance_final"] < undefended["distance_final"]
    assert median["gradient_error"] < undefended["gradient_error"]
    assert undefended["loss"] > undefended["loss_honest"]
    detox = rows["detox-median-a1-reversed"]
    # the vote removes the liar; the median of the two honest votes is their mean, exact
    assert detox["defence"] == "detox+median" and detox["exact"]
    assert all(row["iteration_ms"] > 0 and row["decode_ms"] > 0 for row in rows.values())
    path = tmp_path / "table.csv"
    write_table(path, list(rows.values()))
    with path.open() as handle:
        read = list(csv.DictReader(handle))
    assert tuple(read[0]) == COLUMNS and len(read) == len(RUNS)


def test_a_run_reads_its_defence_and_distance(trained):
    _, summaries = trained
    run = read_byzantine_run(summaries[0])
    assert defence_of(run.config) == run.defence == "heterogeneous"
    assert run.distance.shape == (6,) and np.all(run.distance <= EXACT_TOLERANCE)


def test_a_run_without_its_iterates_is_refused_in_one_line(trained, tmp_path):
    _, summaries = trained
    copy = tmp_path / "run"
    shutil.copytree(summaries[0].parent, copy)
    (copy / "trajectory.npy").unlink()
    with pytest.raises(ByzantineRunError, match=r"trajectory.npy: missing"):
        read_byzantine_run(copy / "summary.json")


def test_the_notebook_draws_the_figure_and_its_rows(trained, tmp_path):
    experiment, summaries = trained
    parameters = {
        "runs": ",".join(str(path) for path in summaries),
        "experiment": str(experiment),
    }
    execute_notebook("byzantine", parameters, tmp_path)
    with (tmp_path / "comparison.csv").open() as handle:
        rows = list(csv.DictReader(handle))
    # one row per defence with the distance; the claim of exactness (paper 004's) checked
    distances = [row for row in rows if row["quantity"].startswith("final relative distance")]
    assert len(distances) == len(RUNS)
    (claim,) = [row for row in rows if row["quantity"] == "claim: exact with a liars"]
    assert claim["paper"] == "004 (heterogeneous GC)"
    assert claim["reproduced"].startswith("reproduced: distance <= 1e-09 under 1 of 1 attacks")
    assert {row["kind"] for row in rows} == {"emulated attack"}
    # DETOX's speed claim: the median of 6 gradients against the median of 2 votes
    assert any(row["paper"].startswith("DETOX") and row["difference"] == "" for row in rows)
