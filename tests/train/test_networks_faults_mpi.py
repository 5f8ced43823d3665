"""Networks through failed workers in MPI runs (Open MPI with ULFM, ``gradcode train inject``
killing workers with SIGKILL, as in ``test_failures``): a code that tolerates the loss ends on
the serial run, a spare taking the dead worker's place. (A stopped run resumes as any run does
from its checkpoint: ``test_networks_mpi``, float32 included; ``test_failures`` stops and
resumes a run through a kill.)"""

from __future__ import annotations

import pytest

from gradcode.runfile.config import load_config
from gradcode.runfile.reference import serial_trajectory
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
