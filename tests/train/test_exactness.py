"""Every exact scheme, run as a real MPI job with stragglers, follows the uncoded trajectory.

The reference is the uncoded run computed serially (``gradcode.runfile.reference``) on the same
partitions; the first test shows that a real uncoded MPI job reproduces it bit for bit, so
"equal to the reference" is "equal to the uncoded run". Each iteration, one random worker
starts 0.1 s late (``random-set``), so the master must decode without it (and discard its late
result by tag when it finally arrives).
"""

from __future__ import annotations

import numpy as np
import pytest

from gradcode.runfile.config import load_config
from gradcode.runfile.reference import serial_trajectory
from tests.helpers.mpi import LATE, base_run, cyclic, relative_errors, run_config

pytestmark = pytest.mark.mpi

#: (id, scheme, params, MPI ranks)
EXACT = [
    ("frc", "frc", {"n": 4, "s": 1}, 5),
    ("crc", "crc", {"n": 5, "s": 2}, 6),
    ("ye-abbe-m2", "ye-abbe", {"n": 4, "d": 3, "s": 1, "m": 2}, 5),
    ("binary", "binary", {"n": 5, "s": 1}, 6),
    ("heterogeneous-m2", "heterogeneous", {"placement": cyclic(5, 3), "s": 1}, 6),
    ("gc-mmc-correlated", "gc-mmc", {"n": 4, "r": 3, "design": "correlated", "order": 2}, 5),
    (
        "gc-mmc-uncorrelated",
        "gc-mmc",
        {"n": 6, "r": 2, "design": "uncorrelated", "orders": [1, 2]},
        7,
    ),
    ("coded-reduce", "coded-reduce", {"n": 2, "L": 2, "s": 1}, 7),
    ("ring-explicit", "ring-allreduce", {"n": 4}, 5),
    ("ring-mpi", "ring-allreduce", {"n": 4, "implementation": "mpi"}, 5),
]


def test_uncoded_job_reproduces_the_serial_reference_bit_for_bit(tmp_path, logistic_data):
    run = base_run(logistic_data, scheme={"name": "uncoded", "params": {"n": 4}}, stragglers=LATE)
    job = run_config(tmp_path, run, ranks=5).check()
    reference = serial_trajectory(load_config(job.run_file))
    np.testing.assert_array_equal(job.trajectory(), reference)
    np.testing.assert_array_equal(job.model(), reference[-1])
    log = job.log()
    assert [record["iteration"] for record in log] == list(range(6))
    # uncoded cannot skip anyone: every iteration used all four workers, late one included
    assert all(sorted(record["used"]) == [0, 1, 2, 3] for record in log)
    assert all(record["iteration_time"] >= 0.1 for record in log)
    assert job.summary()["world_size"] == 5


@pytest.mark.parametrize(
    ("scheme", "params", "ranks"), [e[1:] for e in EXACT], ids=[e[0] for e in EXACT]
)
def test_exact_scheme_follows_the_uncoded_trajectory(
    tmp_path, logistic_data, scheme, params, ranks
):
    run = base_run(logistic_data, scheme={"name": scheme, "params": params}, stragglers=LATE)
    job = run_config(tmp_path, run, ranks=ranks).check()
    reference = serial_trajectory(load_config(job.run_file))
    errors = relative_errors(job.trajectory(), reference)
    assert errors.max() <= 1e-9, errors
    np.testing.assert_allclose(job.model(), reference[-1], rtol=1e-9, atol=0)
    log = job.log()
    summary = job.summary()
    assert summary["world_size"] == ranks
    assert summary["completed"] == 6
    if scheme in ("ring-allreduce", "coded-reduce"):
        return  # every ring worker is needed; a tree's master sees only its children
    # the late worker was not waited for: most iterations decoded without any of its messages
    skipped = 0
    for record in log:
        late = {w for w, delay in enumerate(record["injected"]["start"]) if delay > 0}
        used_workers = {key[0] if isinstance(key, list) else key for key in record["used"]}
        skipped += not (late & used_workers)
        assert record["iteration_time"] < 0.1 or late & used_workers
    assert skipped >= 4, [record["used"] for record in log]


def test_linear_regression_on_a_tree_logs_the_normalized_error(tmp_path, linear_data):
    run = base_run(
        linear_data,
        model={"kind": "linear"},
        scheme={"name": "coded-reduce", "params": {"n": 2, "L": 2, "s": 1}},
        optimizer={"kind": "nesterov", "step": 0.002},
        iterations=8,
        stragglers=LATE,
    )
    job = run_config(tmp_path, run, ranks=7).check()
    reference = serial_trajectory(load_config(job.run_file))
    assert relative_errors(job.trajectory(), reference).max() <= 1e-9
    log = job.log()
    errors = [record["normalized_error"] for record in log]
    assert errors[-1] < errors[0] < 1.0  # ||theta - theta*||^2 / ||theta*||^2 decreases
    assert all("relative_error" in record for record in log[1:])


def test_lcc_workers_compute_on_coded_data_and_decode_exactly(tmp_path, linear_data):
    # Lagrange coded computing: n = 5 workers, k = 2 parts, any 2k - 1 = 3 decode
    run = base_run(
        linear_data,
        model={"kind": "linear"},
        scheme={"name": "lcc", "params": {"n": 5, "k": 2}},
        optimizer={"kind": "gd", "step": 0.002},
        stragglers=LATE,
    )
    job = run_config(tmp_path, run, ranks=6).check()
    reference = serial_trajectory(load_config(job.run_file))
    assert relative_errors(job.trajectory(), reference).max() <= 1e-9
    assert all(len(record["used"]) == 3 for record in job.log())
