"""Networks through failed workers in MPI runs (Open MPI with ULFM, ``gradcode train inject``
killing workers with SIGKILL, as in ``test_failures``): a code that tolerates the loss ends on
the serial run, a spare taking the dead worker's place; a code that cannot stops at its
checkpoint and the same command resumes to the serial run bit for bit, in float32 too."""

from __future__ import annotations

import numpy as np
import pytest

from gradcode.runfile.config import load_config
from gradcode.runfile.reference import serial_trajectory
from gradcode.train.faults.failures import EXIT_CANNOT_CONTINUE
from tests.helpers.mpi import base_run, relative_errors, run_config

pytestmark = pytest.mark.mpi

#: every worker sleeps 20 ms per partition, so a kill lands inside the iteration it aims at
SLOW = {"model": "fixed", "params": {"compute": 0.02}}


def _kill(worker: int, iteration: int) -> dict:
    return {"kill": [{"worker": worker, "iteration": iteration}]}


def test_a_killed_worker_leaves_a_network_on_the_serial_run_and_a_spare_takes_over(
    tmp_path, digits_data
):
    run = base_run(
        digits_data,
        iterations=8,
        model={"kind": "mlp", "params": {"hidden": [8]}},
        optimizer={"kind": "gd", "step": 0.5},
        scheme={"name": "frc", "params": {"n": 4, "s": 1}},
        stragglers=SLOW,
        faults=_kill(1, 2) | {"spares": 1},
        runtime={"distribution": "scatter", "collection": "pull"},
    )
    job = run_config(tmp_path, run, ranks=6, timeout=180).check()
    summary = job.summary()
    assert summary["mpi"]["fault_tolerant"] and summary["failed_workers"] == [1]
    [replacement] = summary["replacements"]
    assert replacement["worker"] == 1 and replacement["spare_rank"] == 5
    assert job.log()[-1]["replaced"] == [{"worker": 1, "rank": 5}]
    reference = serial_trajectory(load_config(job.run_file))
    errors = relative_errors(job.trajectory(), reference)
    assert errors.max() <= 1e-12, errors


def test_a_stopped_float32_network_resumes_to_the_serial_run_bit_for_bit(tmp_path, digits_data):
    """Uncoded cannot lose a worker: the run stops at its checkpoint with status 3. The
    checkpoint holds the float64 iterate and Nesterov's momentum, from which a float32 network
    recomputes exactly the gradients it would have: the resumed run is the serial run's."""
    run = base_run(
        digits_data,
        iterations=6,
        model={"kind": "mlp", "params": {"hidden": [8], "dtype": "float32"}},
        optimizer={"kind": "nesterov", "step": 0.5},
        scheme={"name": "uncoded", "params": {"n": 4}},
        stragglers=SLOW,
        checkpoint={"every": 1},
        faults=_kill(2, 3),
    )
    job = run_config(tmp_path, run, ranks=5, timeout=180)
    assert job.result.returncode == EXIT_CANNOT_CONTINUE, job.result.stderr[-3000:]
    stopped = job.summary()["stopped"]
    assert stopped["failed_workers"] == [2] and 3 <= stopped["completed"] < 6
    resumed = run_config(tmp_path, run, ranks=5, timeout=180).check()
    summary = resumed.summary()
    assert summary["resumed_from"] == stopped["completed"] and summary["completed"] == 6
    reference = serial_trajectory(load_config(resumed.run_file))
    np.testing.assert_array_equal(resumed.trajectory(), reference)
