"""Kill and resume: a job killed with SIGKILL (one worker rank, or the whole job) and started
again with the same command finishes with exactly the model of an uninterrupted run."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import numpy as np
import pytest

from gradcode.launch.jobs import command, job_environment, kill_group
from gradcode.runlogs.log import read_log
from tests.helpers.mpi import JOB_TIMEOUT, Job, base_run, run_config, write_run

pytestmark = pytest.mark.mpi

ITERATIONS = 40


def resumable_run(data: Path) -> dict:
    # FRC's decoded sum does not depend on which worker of a group answered, so even with
    # timing-dependent responders the trajectory is the same bit for bit
    return base_run(
        data,
        iterations=ITERATIONS,
        model={"kind": "logistic", "l2": "1/N"},
        scheme={"name": "frc", "params": {"n": 4, "s": 1}},
        optimizer={"kind": "tandon", "step": 2.0},
        stragglers={"model": "fixed", "params": {"compute": 0.03, "start": [0, 0.02, 0, 0.01]}},
        checkpoint={"every": 5, "keep": 2},
    )


def start(run_file: Path, out: Path) -> subprocess.Popen:
    return subprocess.Popen(
        command(5, run_file, "--out", str(out)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=job_environment(),
        start_new_session=True,
    )


def wait_for_checkpoint(out: Path, completed: int, process: subprocess.Popen) -> None:
    target = out / "checkpoints" / f"ckpt-{completed:08d}.npz"
    deadline = time.monotonic() + JOB_TIMEOUT
    while not target.exists():
        assert process.poll() is None, "the job ended before it could be killed"
        assert time.monotonic() < deadline, "no checkpoint appeared"
        time.sleep(0.02)


def finish(process: subprocess.Popen) -> int:
    try:
        process.communicate(timeout=JOB_TIMEOUT)
    except subprocess.TimeoutExpired:
        kill_group(process)
        process.communicate()
        raise
    return process.returncode


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory, logistic_data) -> Job:
    tmp = tmp_path_factory.mktemp("uninterrupted")
    return run_config(tmp, resumable_run(logistic_data), ranks=5).check()


@pytest.mark.parametrize("victim", ["worker", "job", "job-and-outputs"])
def test_killed_job_resumes_to_the_same_model(tmp_path, logistic_data, uninterrupted, victim):
    run_file = write_run(tmp_path / "run.yaml", resumable_run(logistic_data))
    out = tmp_path / "out"
    process = start(run_file, out)
    wait_for_checkpoint(out, 10, process)
    if victim == "worker":
        ranks = json.loads((out / "ranks.json").read_text())["ranks"]
        os.kill(ranks[2]["pid"], signal.SIGKILL)
        assert finish(process) != 0  # mpiexec reports the killed rank and ends the others
    else:
        kill_group(process)  # SIGKILL to mpiexec and every rank at once
        finish(process)
    assert not (out / "summary.json").exists()
    killed_at = len(read_log(out))
    assert 10 <= killed_at < ITERATIONS
    if victim == "job-and-outputs":
        # what Snakemake does before it retries a failed job: remove its declared outputs
        for name in ("log.jsonl", "summary.json", "model.npy"):
            (out / name).unlink(missing_ok=True)

    again = run_config(tmp_path, resumable_run(logistic_data), ranks=5, name="out").check()
    summary = again.summary()
    assert summary["resumed_from"] >= 10
    assert summary["completed"] == ITERATIONS
    np.testing.assert_array_equal(again.model(), uninterrupted.model())
    np.testing.assert_array_equal(again.trajectory(), uninterrupted.trajectory())
    # the log describes one trajectory: every iteration once, in order, the same losses
    log, full = again.log(), uninterrupted.log()
    assert [r["iteration"] for r in log] == list(range(ITERATIONS))
    assert [r["loss"] for r in log] == [r["loss"] for r in full]
    # every rank's peak resident set size, this session's
    peaks = summary["peak_rss_mib"]
    assert len(peaks["per_rank"]) == 5 and min(peaks["per_rank"]) > 0
    assert peaks["rank0"] == peaks["per_rank"][0]
    assert peaks["worker_max"] == max(peaks["per_rank"][1:])


def test_rerunning_a_finished_job_changes_nothing(tmp_path, logistic_data, uninterrupted):
    # the finished job is the uninterrupted one: the same run file, so its output directory
    # (checkpoints included) is what a first run here would leave, without running it again
    shutil.copytree(uninterrupted.out, tmp_path / "out")
    run = resumable_run(logistic_data)
    model = np.load(tmp_path / "out" / "model.npy")
    again = run_config(tmp_path, run, ranks=5, name="out").check()
    np.testing.assert_array_equal(again.model(), model)
    assert again.summary()["resumed_from"] == ITERATIONS
    assert len(again.log()) == ITERATIONS


def test_a_checkpoint_of_another_configuration_is_not_resumed(
    tmp_path, logistic_data, uninterrupted
):
    # the checkpoints of the uninterrupted run, whose configuration differs in its step only
    shutil.copytree(uninterrupted.out, tmp_path / "out")
    run = resumable_run(logistic_data) | {"iterations": 6}
    changed = run | {"optimizer": {"kind": "tandon", "step": 3.0}}
    refused = run_config(tmp_path, changed, ranks=5, name="out")
    assert refused.result.returncode == 2
    assert "written by a different configuration" in refused.result.stderr
    fresh = run_config(tmp_path, changed, ranks=5, name="out", args=("--fresh",)).check()
    assert fresh.summary()["resumed_from"] is None
