"""Shared fixtures of the runtime tests: small prepared data sets and a job runner.

Every test that starts MPI spawns ``mpiexec -n N python -m gradcode.train RUN.yaml`` as a
real job (ranks oversubscribed on the machine's cores), bounded by a timeout after which the
whole process group is killed.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml

from gradcode.data import prepare
from gradcode.train.launch import run_job
from gradcode.train.log import read_log

#: seconds any single job of the suite may take before it counts as hung
JOB_TIMEOUT = 90


@pytest.fixture(scope="session")
def logistic_data(tmp_path_factory) -> Path:
    """480 training rows (divisible by every k the tests use), 16 features, 100 test rows."""
    out = tmp_path_factory.mktemp("data") / "logistic"
    prepare("synthetic-logistic", out, variant="custom", rows=480, features=16, test_rows=100)
    return out


@pytest.fixture(scope="session")
def linear_data(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("data") / "linear"
    prepare("synthetic-linear", out, variant="custom", rows=240, features=8, test_rows=0)
    return out


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
    """Write ``run`` as YAML and run it on ``ranks`` MPI ranks with output in tmp_path/name."""
    run_file = write_run(tmp_path / f"{name}.yaml", run)
    out = tmp_path / name
    result = run_job(ranks, run_file, ["--out", str(out), *args], timeout=timeout)
    return Job(result, out, run_file)


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
