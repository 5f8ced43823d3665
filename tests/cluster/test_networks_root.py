"""Networks on the emulated cluster's links (root only; no SLURM): a network trained by the MPI
runtime across five nodes with kernel-enforced rates follows the serial run exactly, and its
messages, a parameter vector's size each, take the time the links allow (issue 42, point 5)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from gradcode.cluster.network.namespaces import bucket_bytes
from gradcode.rate import Rate
from gradcode.runfile.config import load_config
from gradcode.runfile.reference import serial_trajectory
from gradcode.runlogs.log import read_log
from tests.helpers.cluster import emulated_cluster
from tests.helpers.data import small_digits
from tests.helpers.mpi import LATE, base_run, relative_errors, write_run

pytestmark = [
    pytest.mark.skipif(
        os.geteuid() != 0, reason="an emulated cluster needs root (network namespaces)"
    ),
    # one cluster per machine; a loaded machine only lengthens the iterations above their floor
    pytest.mark.one_cluster,
]

#: every node's link, both ways; the master's too
RATE_BITS = 20e6
NODES = 5


@pytest.fixture(scope="module")
def cluster():
    yield from emulated_cluster({"nodes": NODES, "rate": "20mbit"})


@pytest.mark.parametrize(
    ("model", "tolerance"),
    [
        ({"kind": "mlp", "params": {"hidden": [32]}}, 1e-12),
        ({"kind": "coded-reduce-cnn", "params": {"image": [1, 8, 8], "dtype": "float32"}}, 1e-5),
    ],
    ids=["mlp", "cnn-float32"],
)
def test_a_network_trains_exactly_at_the_links_pace(cluster, tmp_path, model, tolerance):
    data = small_digits(tmp_path / "digits")
    scheme = {"name": "frc", "params": {"n": NODES - 1, "s": 1}}
    run = base_run(data, model=model, scheme=scheme, stragglers=LATE, iterations=4)
    run |= {"optimizer": {"kind": "gd", "step": 0.5}}
    run_file = write_run(tmp_path / "run.yaml", run)
    out = tmp_path / "run"
    train = [sys.executable, "-m", "gradcode.train", str(run_file), "--out", str(out)]
    mpiexec = [sys.executable, "-m", "gradcode", "cluster", "mpiexec", "-n", str(NODES), "--"]
    done = subprocess.run([*mpiexec, *train], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]

    reference = serial_trajectory(load_config(run_file))
    errors = relative_errors(np.load(out / "trajectory.npy"), reference)
    assert errors.max() <= tolerance, errors

    # one parameter vector per message; FRC (4, 1) waits for 3 of them on the master's
    # incoming link, after the iterate left on its outgoing one (to one worker at least,
    # however MPI's broadcast fans out): 4 vectors' time at the rate, whatever the straggler
    # did, less the head start tbf's bucket gives each transfer after an idle spell
    records = read_log(out)
    sizes = {message["bytes"] for record in records for message in record["messages"]}
    vector = reference.shape[1] * (4 if model["params"].get("dtype") == "float32" else 8)
    assert min(sizes) >= vector, (sizes, vector)
    floor = 4 * (vector - bucket_bytes(Rate.from_bits(RATE_BITS))) * 8 / RATE_BITS
    times = [record["iteration_time"] for record in records]
    assert min(times) >= floor, (times, floor)
