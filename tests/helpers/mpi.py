"""Run training configurations as real MPI jobs, and read what they leave behind.

Every job is ``mpiexec -n N python -m gradcode.train RUN.yaml`` (ranks oversubscribed on the
machine's cores), bounded by a timeout after which the whole process group is killed. A test
writes a run with ``base_run`` (plus its overrides) and starts it with ``run_config``::

    from tests.helpers.mpi import base_run, run_config

    def test_something(tmp_path, logistic_data):
        job = run_config(tmp_path, base_run(logistic_data, scheme=...), ranks=5).check()
        assert job.summary()["iterations"] == 6

The prepared data sets (``logistic_data``, ``linear_data``) are fixtures of
``tests/train/conftest.py``, built with ``tests.helpers.data``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from gradcode.launch.jobs import command, run_command, run_job
from gradcode.runlogs.log import read_log

#: seconds any single job of the suite may take before it counts as hung
JOB_TIMEOUT = 90

#: stragglers that make the master decode without one random worker every iteration (it
#: starts 0.1 s late, and its result arrives after the iteration is over)
LATE = {"model": "random-set", "params": {"count": 1, "delay": 0.1}}


@dataclass
class Job:
    """A finished job: its process result, output directory and run file."""

    result: subprocess.CompletedProcess[str]
    out: Path
    run_file: Path

    @property
    def ok(self) -> bool:
        return self.result.returncode == 0

    def check(self) -> Job:
        assert self.ok, f"job failed ({self.result.returncode}):\n{self.result.stderr[-3000:]}"
        return self

    def log(self) -> list[dict[str, Any]]:
        return read_log(self.out)

    def summary(self) -> dict[str, Any]:
        return json.loads((self.out / "summary.json").read_text())

    def trajectory(self) -> np.ndarray:
        return np.load(self.out / "trajectory.npy")

    def model(self) -> np.ndarray:
        return np.load(self.out / "model.npy")


def write_run(path: Path, run: dict[str, Any]) -> Path:
    """Write ``run`` as a run file (YAML) at ``path``; returns ``path``."""
    path.write_text(yaml.safe_dump(run, sort_keys=False))
    return path


def run_config(
    tmp_path: Path,
    run: dict[str, Any],
    ranks: int,
    *,
    name: str = "run",
    args: tuple[str, ...] = (),
    timeout: float = JOB_TIMEOUT,
) -> Job:
    """Write ``run`` as YAML and run it on ``ranks`` MPI ranks with output in tmp_path/name.

    A run with ``faults`` starts on Open MPI with ULFM when it tolerates failures, inside
    ``gradcode train inject`` (which kills ``faults.kill``'s workers from outside; its record
    is ``tmp_path/name.kills.json``)."""
    run_file = write_run(tmp_path / f"{name}.yaml", run)
    out = tmp_path / name
    faults = run.get("faults")
    if faults is None:
        result = run_job(ranks, run_file, ["--out", str(out), *args], timeout=timeout)
        return Job(result, out, run_file)
    tolerant = faults.get("tolerate", True)
    job = command(ranks, run_file, "--out", str(out), *args, tolerant=tolerant)
    record = tmp_path / f"{name}.kills.json"
    wrapper = [sys.executable, "-m", "gradcode", "train", "inject", str(run_file)]
    wrapper += ["--out", str(out), "--record", str(record), "--", *job]
    return Job(run_command(wrapper, timeout=timeout), out, run_file)


def base_run(data: Path, **overrides: Any) -> dict[str, Any]:
    """A small logistic-regression run: 6 iterations of gradient descent, trajectory saved."""
    run: dict[str, Any] = {
        "iterations": 6,
        "data": {"prepared": str(data)},
        "model": {"kind": "logistic"},
        "optimizer": {"kind": "gd", "step": 1.0},
        "log": {"trajectory": True},
    }
    run.update(overrides)
    return run


def cyclic(n: int, r: int) -> list[list[int]]:
    """The cyclic placement: worker i holds partitions i, i + 1, ..., i + r - 1 (mod n)."""
    return [[(i + j) % n for j in range(r)] for i in range(n)]


def relative_errors(got: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Per iteration: max |got - reference| / max |reference|."""
    return np.abs(got - reference).max(axis=1) / np.abs(reference).max(axis=1)
