"""Networks trained by the MPI runtime: a run file names one, and an exact code follows the
serial run of the same partitions (``gradcode.runfile.reference``)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from gradcode.runfile.config import load_config
from gradcode.runfile.reference import serial_trajectory
from tests.helpers.mpi import LATE, base_run, relative_errors, run_config

pytestmark = pytest.mark.mpi

MLP = {"kind": "mlp", "params": {"hidden": [16]}}
SINGLE = {"kind": "mlp", "params": {"hidden": [16], "dtype": "float32"}}
#: what an exact code's iterates may differ from the serial run's by (max |difference| / max
#: |serial| per iteration; see gradcode.models.nn on precision)
TOLERANCE = {"float64": 1e-12, "float32": 1e-5}


def _network_run(data, model, scheme, **overrides):
    return base_run(
        data, model=model, scheme=scheme, optimizer={"kind": "gd", "step": 0.5}, **overrides
    )


def test_an_uncoded_network_job_reproduces_the_serial_run_bit_for_bit_and_resumes_so(
    tmp_path, digits_data
):
    """Its checkpoints kept, the job also gives the float64 resume its checkpoint: a second job
    started from the one of iteration 3 ends on the same iterates (one network job less than
    a run of 3 iterations to resume from; the float32 resume below extends a finished run)."""
    run = _network_run(
        digits_data,
        MLP,
        {"name": "uncoded", "params": {"n": 4}},
        seed=3,
        checkpoint={"every": 1, "keep": 6},
    )
    job = run_config(tmp_path, run, ranks=5).check()
    config = load_config(job.run_file)
    reference = serial_trajectory(config)
    assert reference.shape == (6, 64 * 16 + 16 + 16 * 10 + 10)
    np.testing.assert_array_equal(job.trajectory(), reference)
    log = job.log()
    assert log[-1]["accuracy"] > log[0]["accuracy"] and log[-1]["loss"] < log[0]["loss"]
    assert job.summary()["model"] == {"kind": "mlp", "l2": 0.0, "params": {"hidden": [16]}}
    checkpoint = job.out / "checkpoints" / "ckpt-00000003.npz"
    (tmp_path / "resumed" / "checkpoints").mkdir(parents=True)
    shutil.copyfile(checkpoint, tmp_path / "resumed" / "checkpoints" / checkpoint.name)
    resumed = run_config(tmp_path, run, ranks=5, name="resumed").check()
    assert resumed.summary()["resumed_from"] == 3
    np.testing.assert_array_equal(resumed.trajectory(), reference)


@pytest.mark.parametrize(
    ("model", "scheme", "ranks"),
    [
        (MLP, {"name": "frc", "params": {"n": 4, "s": 1}}, 5),
        (SINGLE, {"name": "crc", "params": {"n": 5, "s": 2}}, 6),
        (MLP, {"name": "coded-reduce", "params": {"n": 2, "L": 2, "s": 1}}, 7),
        (
            {"kind": "coded-reduce-cnn", "params": {"image": [1, 8, 8]}},
            {"name": "frc", "params": {"n": 4, "s": 1}},
            5,
        ),
    ],
    ids=["mlp-frc", "mlp-float32-crc", "mlp-coded-reduce", "cnn-frc"],
)
def test_an_exact_code_trains_a_network_as_the_serial_run_does(
    tmp_path, digits_data, model, scheme, ranks
):
    run = _network_run(digits_data, model, scheme, stragglers=LATE, iterations=4)
    job = run_config(tmp_path, run, ranks=ranks, timeout=180).check()
    reference = serial_trajectory(load_config(job.run_file))
    errors = relative_errors(job.trajectory(), reference)
    assert errors.max() <= TOLERANCE[model["params"].get("dtype", "float64")], errors


def test_a_float32_network_run_resumes_from_its_checkpoint_exactly(tmp_path, digits_data):
    """Bit for bit in float32 too: the checkpoint holds the float64 iterate (and Nesterov's
    momentum), from which a float32 network rounds the same float32 parameters again. The
    first job ends at iteration 3; the second extends it to 6 (float64's resume: the uncoded
    test above)."""
    scheme = {"name": "uncoded", "params": {"n": 4}}
    first = _network_run(digits_data, SINGLE, scheme, iterations=3, checkpoint={"every": 1})
    first["optimizer"] = {"kind": "nesterov", "step": 0.5}
    run_config(tmp_path, first, ranks=5, name="run").check()
    job = run_config(tmp_path, first | {"iterations": 6}, ranks=5, name="run").check()
    assert job.summary()["resumed_from"] == 3
    reference = serial_trajectory(load_config(job.run_file))
    np.testing.assert_array_equal(job.trajectory(), reference)


def test_a_network_that_cannot_take_the_rows_is_one_line(tmp_path, digits_data):
    cnn = {"kind": "coded-reduce-cnn"}  # 3 x 32 x 32 images; the digits are 8 x 8
    run = _network_run(digits_data, cnn, {"name": "uncoded", "params": {"n": 2}})
    job = run_config(tmp_path, run, ranks=3)
    assert not job.ok
    lines = [line for line in job.result.stderr.splitlines() if "error" in line]
    assert lines == [
        "gradcode.train: error: model.params: model coded-reduce-cnn: rows of 64 features "
        "are not 3 x 32 x 32 images"
    ], job.result.stderr
