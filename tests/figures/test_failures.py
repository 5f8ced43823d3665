"""The failed-workers figure's reading of a run: distance to the serial model, detection times,
and the decoded gradient recovered from the iterates (checked on the serial run itself)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml

from gradcode.figures.failures import (
    KILLS_FILE,
    LOST_FILE,
    FailureRunError,
    gradient_errors,
    read_failed_run,
)
from gradcode.figures.trajectories import RunOutputError, relative_distance
from gradcode.runfile.config import load_config
from gradcode.runfile.reference import serial_trajectory
from tests.helpers.data import small_logistic


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    return small_logistic(tmp_path_factory.mktemp("data") / "logistic")


def _run(directory: Path, data: Path, *, estimates=None, optimizer=None, shift=0.0) -> Path:
    """A run's outputs as rule train_faults leaves them: FRC (4, 1), worker 1 killed at
    iteration 2 and seen 7.5 ms later; its trajectory the serial one (plus ``shift``)."""
    directory.mkdir()
    run = {
        "name": "failed-workers/frc",
        "iterations": 5,
        "data": {"prepared": str(data)},
        "model": {"kind": "logistic"},
        "scheme": {"name": "frc", "params": {"n": 4, "s": 1}},
        "optimizer": optimizer or {"kind": "gd", "step": 1.0},
        "log": {"trajectory": True},
        "faults": {"kill": [{"worker": 1, "iteration": 2}]},
    }
    (directory / "run.yaml").write_text(yaml.safe_dump(run))
    trajectory = serial_trajectory(load_config(directory / "run.yaml")) + shift
    np.save(directory / "trajectory.npy", trajectory)
    failure = {"rank": 2, "worker": 1, "iteration": 2, "monotonic": 10.0075}
    summary = {"name": run["name"], "failures": [failure], "failed_workers": [1]}
    (directory / "summary.json").write_text(json.dumps(summary))
    records = [{"iteration": t, "iteration_time": 0.04} for t in range(5)]
    if estimates is not None:
        for record, value in zip(records, estimates, strict=True):
            record["error_estimate"] = value
    (directory / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (directory / KILLS_FILE).write_text(json.dumps({"kills": [{"worker": 1, "monotonic": 10.0}]}))
    return directory / "summary.json"


def test_relative_distance_per_iteration():
    reference = np.array([[1.0, -2.0], [4.0, 0.0], [1.0, 1.0]])
    got = reference[:2] + np.array([[0.0, 0.2], [-1.0, 0.0]])
    assert relative_distance(got, reference) == pytest.approx([0.1, 0.25])  # rows of got only
    with pytest.raises(RunOutputError, match="differ in shape"):
        relative_distance(np.zeros((2, 3)), reference)


def test_a_run_through_its_failures(tmp_path, data):
    run = read_failed_run(_run(tmp_path / "frc", data))
    assert run.name == "frc" and run.stopped is None
    assert np.all(run.distance == 0.0)
    assert run.detection_seconds() == {1: pytest.approx(0.0075)}
    assert run.iteration_times.tolist() == [0.04] * 5
    assert run.error_estimates() is None
    shifted = read_failed_run(_run(tmp_path / "shifted", data, shift=1e-3))
    assert np.all(shifted.distance > 0)


def test_a_lost_node_is_read_from_gradcode_cluster_loses_record(tmp_path, data):
    summary = _run(tmp_path / "frc", data)
    run = yaml.safe_load((summary.parent / "run.yaml").read_text())
    run["faults"] = {"lose_node": {"worker": 1, "iteration": 2, "how": "link"}}
    (summary.parent / "run.yaml").write_text(yaml.safe_dump(run))
    (summary.parent / KILLS_FILE).unlink()
    record = {"node": "gc-node2", "how": "link", "rank": 2, "lost": {"clock": 8.0}}
    (summary.parent / LOST_FILE).write_text(json.dumps(record))
    lost = read_failed_run(summary)
    assert lost.losses == [
        {"worker": 1, "iteration": 2, "monotonic": 8.0, "how": "link", "node": "gc-node2"}
    ]
    assert lost.detection_seconds() == {1: pytest.approx(2.0075)}
    (summary.parent / LOST_FILE).write_text(json.dumps(record | {"lost": None}))
    with pytest.raises(FailureRunError, match="gc-node2 was never lost"):
        read_failed_run(summary)


def test_the_decoded_gradient_is_recovered_from_the_iterates(tmp_path, data):
    estimates = [None, 1.0, 2.0, 3.0, 4.0]
    run = read_failed_run(_run(tmp_path / "frc", data, estimates=estimates))
    np.testing.assert_array_equal(run.error_estimates(), [np.nan, 1, 2, 3, 4])
    errors, norms = gradient_errors(run)
    # the trajectory is the serial one: every decoded sum is the exact sum
    assert np.all(norms > 0) and np.all(errors / norms < 1e-10)
    shifted = read_failed_run(_run(tmp_path / "shifted", data, shift=1e-3))
    errors, norms = gradient_errors(shifted)
    assert np.all(errors / norms > 1e-6)


def test_what_cannot_be_read_is_one_line(tmp_path, data):
    nesterov = read_failed_run(
        _run(tmp_path / "n", data, optimizer={"kind": "nesterov", "step": 1.0})
    )
    with pytest.raises(FailureRunError, match="only under gd with a constant step"):
        gradient_errors(nesterov)
    summary = _run(tmp_path / "frc", data)
    (summary.parent / "trajectory.npy").unlink()
    with pytest.raises(FailureRunError, match=r"trajectory.npy: missing"):
        read_failed_run(summary)
    (summary.parent / KILLS_FILE).unlink()
    with pytest.raises(FailureRunError, match=r"cannot read"):
        read_failed_run(summary.parent / "absent.json")
