"""A code with matrix messages (heterogeneous-poly, paper 004 Sec. IV) as a real MPI job.

The example run file ``config/runs/heterogeneous-poly-adversary.yaml`` runs on a prepared copy
of its data: every iterate must be the serial one, whose step is ``h`` of the summed gradient
matrix computed directly (numpy matrix powers), and the adversary is named every iteration.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from gradcode.data import prepare
from gradcode.models import LinearRegression
from gradcode.runfile.config import load_config
from gradcode.runfile.dataset import load_training_data
from gradcode.runfile.reference import serial_trajectory
from tests.helpers.mpi import relative_errors, run_config

ROOT = Path(__file__).resolve().parents[2]
RUN_FILE = ROOT / "config" / "runs" / "heterogeneous-poly-adversary.yaml"

pytestmark = pytest.mark.mpi


@pytest.fixture(scope="module")
def square_data(tmp_path_factory) -> Path:
    """The run file's data (240 rows, 9 = 3 x 3 features), prepared once."""
    run = yaml.safe_load(RUN_FILE.read_text())
    options = run["data"]["options"]
    out = tmp_path_factory.mktemp("data") / "linear9"
    prepare("synthetic-linear", out, variant="custom", test_rows=0, **options)
    return out


def _example_run(data: Path, **overrides) -> dict:
    run = yaml.safe_load(RUN_FILE.read_text())
    run["data"] = {"prepared": str(data)}
    run["iterations"] = 6
    run.update(overrides)
    return run


def test_the_example_run_decodes_h_of_the_sum_and_names_the_adversary(tmp_path, square_data):
    run = _example_run(square_data)
    h = run["scheme"]["params"]["h"]
    job = run_config(tmp_path, run, ranks=7).check()
    trajectory = job.trajectory()
    reference = serial_trajectory(load_config(job.run_file))
    assert relative_errors(trajectory, reference).max() <= 1e-9
    # the first steps by hand: theta_{t+1} = theta_t - step * h(sum_p G_p(theta_t)) / N
    config = load_config(job.run_file)
    data = load_training_data(config.data, 6, "linear")
    model = LinearRegression()
    theta = np.zeros(9)
    for t in range(3):
        total = sum(model.partial_gradient(*data.part(p), theta) for p in range(6))
        matrix = total.reshape(3, 3)
        h_of_sum = sum(c * np.linalg.matrix_power(matrix, j) for j, c in enumerate(h))
        theta = theta - 0.5 * h_of_sum.reshape(-1) / data.rows
        np.testing.assert_allclose(trajectory[t], theta, rtol=1e-9, atol=1e-12)
    for record in job.log():
        corrupted = {m["worker"] for m in record["messages"] if m["corrupted"]}
        assert corrupted == {2}
        assert record["adversaries"] == ([2] if 2 in record["used"] else [])
        assert len(record["used"]) == 5
    assert job.summary()["adversaries_caught"]["2"] >= 1


def test_a_non_square_gradient_is_refused_before_any_computation(tmp_path, linear_data):
    # 8 features are not a d x d matrix
    job = run_config(tmp_path, _example_run(linear_data), ranks=7)
    assert job.result.returncode == 2
    assert "data: heterogeneous-poly needs a gradient of d * d numbers" in job.result.stderr
    assert "got length 8" in job.result.stderr
