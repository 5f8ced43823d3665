"""Bad configurations fail before any computation with one line on rank 0, and every rank
exits; a failure in the middle of a run ends every rank with a non-zero status."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.helpers.mpi import base_run, run_config

pytestmark = pytest.mark.mpi


def assert_one_line_error(job, key: str) -> None:
    assert job.result.returncode == 2, job.result.stderr
    lines = job.result.stderr.strip().splitlines()
    assert len(lines) == 1, lines  # one line, printed once (by rank 0 only)
    assert lines[0].startswith(f"gradcode.train: error: {key}"), lines[0]
    assert not job.out.exists()  # nothing was computed or written


@pytest.mark.parametrize(
    ("change", "ranks", "key"),
    [
        ({"scheme": {"name": "frcx", "params": {"n": 4}}}, 5, "scheme.name: unknown scheme"),
        (
            {"scheme": {"name": "frc", "params": {"n": 4, "s": 1}}},
            4,
            "scheme.params: frc has n = 4",
        ),
        ({"scheme": {"name": "frc", "params": {"n": 4, "s": 2}}}, 5, "scheme.params: frc needs"),
        ({"data": {"prepared": "/nonexistent/data"}}, 5, "data.prepared: no such directory"),
    ],
    ids=["unknown-scheme", "ranks", "rejected-params", "missing-data"],
)
def test_bad_configuration_fails_before_computing(tmp_path, logistic_data, change, ranks, key):
    run = base_run(logistic_data, scheme={"name": "frc", "params": {"n": 4, "s": 1}}) | change
    assert_one_line_error(run_config(tmp_path, run, ranks=ranks), key)


def test_failure_mid_run_ends_every_rank_with_an_error(tmp_path, logistic_data):
    # worker 2 starts 5 s late but the master gives up after 0.5 s: uncoded cannot decode
    run = base_run(
        logistic_data,
        scheme={"name": "uncoded", "params": {"n": 4}},
        stragglers={"model": "fixed", "params": {"start": [0, 0, 5.0, 0]}},
        runtime={"iteration_timeout": 0.5},
    )
    job = run_config(tmp_path, run, ranks=5, timeout=60)
    assert job.result.returncode == 1, job.result.stderr
    assert "gradcode.train: error on rank 0: iteration 0: results of ['0', '1', '3']" in (
        job.result.stderr
    )
    pids = [rank["pid"] for rank in json.loads((job.out / "ranks.json").read_text())["ranks"]]
    deadline = time.monotonic() + 10  # mpiexec may return while the ranks are being killed
    while [pid for pid in pids if running(pid)] and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [pid for pid in pids if running(pid)]  # no rank survived


def running(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie (reparented zombies may linger)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return fields[0] != "Z"
