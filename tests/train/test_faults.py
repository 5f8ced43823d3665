"""Faults and approximations as real MPI jobs: workers that never answer, workers that lie,
and the two schemes that do not recover the exact gradient."""

from __future__ import annotations

import numpy as np
import pytest

from gradcode.models import LogisticRegression
from gradcode.runfile.config import load_config
from gradcode.runfile.dataset import load_training_data
from gradcode.runfile.reference import serial_trajectory
from tests.helpers.mpi import LATE, base_run, cyclic, relative_errors, run_config

pytestmark = pytest.mark.mpi


def test_persistent_straggler_never_answers_and_the_gradient_stays_exact(tmp_path, logistic_data):
    run = base_run(
        logistic_data,
        scheme={"name": "frc", "params": {"n": 6, "s": 2}},
        stragglers={**LATE, "persistent": [0, 4]},
    )
    job = run_config(tmp_path, run, ranks=7).check()
    reference = serial_trajectory(load_config(job.run_file))
    assert relative_errors(job.trajectory(), reference).max() <= 1e-9
    for record in job.log():
        assert record["injected"]["persistent"] == [0, 4]
        assert not {m["worker"] for m in record["messages"]} & {0, 4}
        assert not set(record["used"]) & {0, 4}


def test_persistent_tree_node_loses_its_subtree_and_the_root_still_decodes(tmp_path, logistic_data):
    # (n, L, s) = (2, 2, 1): node 0 is a layer-1 parent of leaves 2 and 3
    run = base_run(
        logistic_data,
        scheme={"name": "coded-reduce", "params": {"n": 2, "L": 2, "s": 1}},
        stragglers={"model": "none", "persistent": [0]},
    )
    job = run_config(tmp_path, run, ranks=7).check()
    reference = serial_trajectory(load_config(job.run_file))
    assert relative_errors(job.trajectory(), reference).max() <= 1e-9
    assert all(record["used"] == [1] for record in job.log())


def test_adversaries_are_corrected_and_named(tmp_path, logistic_data):
    run = base_run(
        logistic_data,
        scheme={"name": "heterogeneous", "params": {"placement": cyclic(5, 3), "s": 0, "a": 1}},
        adversaries={"workers": [3], "scale": 10.0},
    )
    job = run_config(tmp_path, run, ranks=6).check()
    reference = serial_trajectory(load_config(job.run_file))
    assert relative_errors(job.trajectory(), reference).max() <= 1e-9
    for record in job.log():
        corrupted = {m["worker"] for m in record["messages"] if m["corrupted"]}
        assert corrupted == {3}
        used = set(record["used"])
        assert record["adversaries"] == ([3] if 3 in used else [])
    assert job.summary()["adversaries_caught"] == {"3": 6}


def test_a_run_without_the_adversary_correction_would_be_wrong(tmp_path, logistic_data):
    # the same liar against a code that cannot correct it: rejected before any computation
    run = base_run(
        logistic_data,
        scheme={"name": "heterogeneous", "params": {"placement": cyclic(5, 3), "s": 1, "a": 0}},
        adversaries={"workers": [3]},
    )
    job = run_config(tmp_path, run, ranks=6)
    assert job.result.returncode == 2
    assert "adversaries.workers: 1 adversaries but the code corrects a = 0" in job.result.stderr


def test_ignore_stragglers_uses_the_first_n_minus_s_and_the_inverse_step(tmp_path, logistic_data):
    run = base_run(
        logistic_data,
        scheme={"name": "ignore-stragglers", "params": {"n": 4, "s": 1}},
        optimizer={"kind": "gd", "step": {"c1": 4.0, "c2": 2.0}},
        stragglers=LATE,
    )
    job = run_config(tmp_path, run, ranks=5).check()
    log = job.log()
    for record in log:
        assert len(record["used"]) == 3
        late = record["injected"]["start"].index(0.1)
        assert late not in record["used"]
    # the first two steps by hand: theta_{t+1} = theta_t - c1 / (t + c2) * sum_{p in used} g_p / N
    config = load_config(job.run_file)
    data = load_training_data(config.data, 4, "logistic")
    model = LogisticRegression()
    theta = np.zeros(data.features)
    trajectory = job.trajectory()
    for t in range(2):
        total = sum(model.partial_gradient(*data.part(p), theta) for p in log[t]["used"])
        theta = theta - 4.0 / (t + 2.0) * total / data.rows
        np.testing.assert_allclose(trajectory[t], theta, rtol=1e-12, atol=1e-15)
    assert log[-1]["loss"] < log[0]["loss"]


def test_berrut_logs_its_error_estimate_and_still_descends(tmp_path, logistic_data):
    run = base_run(
        logistic_data,
        scheme={"name": "berrut", "params": {"n": 5, "r": 4, "s": 1}},
        stragglers=LATE,
        iterations=8,
    )
    job = run_config(tmp_path, run, ranks=6).check()
    log = job.log()
    assert all(record["error_estimate"] > 0 for record in log)
    assert all(len(record["used"]) == 4 for record in log)
    assert log[-1]["loss"] < log[0]["loss"]
    reference = serial_trajectory(load_config(job.run_file))
    assert relative_errors(job.trajectory(), reference).max() < 0.5  # approximate, not wild
