"""Time dilation on the emulated cluster's links (root only; no SLURM): the same runs on a
cluster brought up with ``--dilation 4`` and without report the same times per iteration where
the links decide both (UMW and CodedReduce), and no longer ones where the machine's share
shrinks (the explicit ring), while the kernel enforced a quarter of the rate (issue 48)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from gradcode.runlogs.log import read_log
from tests.helpers.cluster import emulated_cluster
from tests.helpers.data import small_logistic
from tests.helpers.mpi import base_run, run_config, write_run

pytestmark = [
    pytest.mark.skipif(
        os.geteuid() != 0, reason="an emulated cluster needs root (network namespaces)"
    ),
    pytest.mark.serial,
]

WORKERS = 6
#: UMW, CodedReduce on a (2, 2)-regular tree and the explicit ring, 6 workers each
SCHEMES = {
    "UMW": {"name": "uncoded", "params": {"n": WORKERS}},
    "CR": {"name": "coded-reduce", "params": {"n": 2, "L": 2, "s": 1, "inner": "crc"}},
    "RAR": {"name": "ring-allreduce", "params": {"n": WORKERS}},
}


def _run(name: str, scheme: dict, dilation: int) -> dict:
    """Paper 001's setting on the links (config/experiments/cluster/coded-reduce-n84.yaml):
    200 kB gradients, 16 ms each at 100 Mbit/s, only the computation injected."""
    return {
        "name": name,
        "iterations": 6,
        # the variant's 200 kB gradients on 24 rows (links-p25000 has 336), which every
        # worker loads itself (runtime.data): sent from rank 0 before the timed part, they
        # crossed the dilated links first (at 336 rows, 67 MB took most of this test's three
        # minutes; at 24 rows the test took 38 s with them, 28 s without)
        "data": {
            "dataset": "synthetic-logistic",
            "variant": "custom",
            "options": {"rows": 24, "features": 25000, "test_rows": 12},
            "trim": False,
        },
        "model": {"kind": "logistic"},
        "optimizer": {"kind": "gd", "step": 1.0},
        "scheme": scheme,
        "stragglers": {
            "model": "single-port",
            "params": {"a": 5.0e-5, "mu": 2.0e4, "tc": 0, "data": 6552},
            "time_unit": 0.32,
        },
        "network": {"links": {"rate": "100mbit", "master_rate": "100mbit"}},
        "log": {"metrics_every": 0},
        "checkpoint": {"every": 0},
        "runtime": {"distribution": "isend", "dilation": dilation, "data": "load"},
    }


def _train(tmp_path: Path, name: str, run: dict) -> Path:
    run_file = write_run(tmp_path / f"{name}.yaml", run)
    out = tmp_path / name
    ranks = str(WORKERS + 1)
    mpiexec = [sys.executable, "-m", "gradcode", "cluster", "mpiexec", "-n", ranks, "--"]
    train = [sys.executable, "-m", "gradcode.train", str(run_file), "--out", str(out)]
    done = subprocess.run([*mpiexec, *train], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def _times(tmp_path: Path, dilation: int) -> dict[str, tuple[float, dict]]:
    """Each scheme's mean time per iteration (after the first) and summary at ``dilation``."""
    options = {"nodes": WORKERS + 1, "rate": "100mbit", "dilation": dilation}
    found = {}
    for spec in emulated_cluster(options):
        assert spec.nodes[1].egress is not None
        assert spec.nodes[1].egress.bits_per_second == 100e6 / dilation
        # TCP's retransmission floor dilated with the links (none set on an undilated one)
        routes = subprocess.run(
            ["ip", "-n", "gc-node1", "route"], capture_output=True, text=True, check=True
        ).stdout
        assert ("rto_min lock 800ms" in routes) == (dilation == 4), routes
        for name, scheme in SCHEMES.items():
            out = _train(tmp_path, f"{name}-k{dilation}", _run(name, scheme, dilation))
            times = [record["iteration_time"] for record in read_log(out)[1:]]
            found[name] = (float(np.mean(times)), json.loads((out / "summary.json").read_text()))
        if dilation != 1:
            _a_run_on_the_host_is_not_on_the_cluster(tmp_path)
    return found


def _a_run_on_the_host_is_not_on_the_cluster(tmp_path: Path) -> None:
    """A run on real links started on the host beside the dilated cluster (as CI's parallel
    session does beside the multi-node smoke's) is not on the cluster's links: not refused
    for their dilation, and its summary records no cluster."""
    scheme = {"name": "uncoded", "params": {"n": 2}}
    run = base_run(small_logistic(tmp_path / "data"), iterations=2, scheme=scheme, network={})
    summary = run_config(tmp_path, run, ranks=3, name="beside").check().summary()
    assert summary["communication"] == {"mode": "links", "injected": False}, summary


def test_a_dilated_cluster_reports_the_times_of_the_undilated_one(tmp_path):
    plain = _times(tmp_path, 1)
    dilated = _times(tmp_path, 4)
    for name in SCHEMES:
        summary = dilated[name][1]
        assert summary["dilation"] == 4.0
        # the run sees the links it stated, which the kernel enforced four times slower
        assert summary["communication"]["cluster"]["dilation"] == 4
        assert summary["communication"]["cluster"]["nodes"][1]["egress"] == "100mbit"
        fidelity = summary["fidelity"]
        assert fidelity["verdict"]["decided_by"] == "links", (name, fidelity)
        assert fidelity["model"]["ratio"] == pytest.approx(1.0, abs=0.15), (name, fidelity)
    ratios = {name: dilated[name][0] / plain[name][0] for name in SCHEMES}
    verdicts = {name: plain[name][1]["fidelity"]["verdict"]["decided_by"] for name in SCHEMES}
    # the flat and tree schemes' links decide at K = 1 already: nearly the same times (in CI
    # K = 4 over K = 1 measured 0.937-0.97 for UMW and 0.951-0.978 for CR: the 5 % is
    # not met run after run, the spread is on docs/measurements/fidelity.md)
    assert all(0.90 <= ratios[name] <= 1.05 for name in ("UMW", "CR")), (ratios, verdicts)
    # the explicit ring's ten steps each wake a rank, which costs the machine's time at K = 1
    # (measured in CI: K = 4 took 0.88 of K = 1's time); dilation only takes that away
    assert ratios["RAR"] <= 1.05, (ratios, verdicts)
