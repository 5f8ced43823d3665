"""The fit, recommend, run loop on real links with latency (root only; no SLURM): on a 9-node
emulated cluster at 2.5 ms one way, runs of two message sizes are fitted, ``gradcode codes
recommend --spec`` ranks flat codes and the ring, and the recommended code and the ring, run on
the same links, take within 10 % of what the spec predicts (issue 43; the benchmark
``benchmarks/fit_loop_links.py`` is the loop, this test runs it small)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.cluster import emulated_cluster

pytestmark = [
    pytest.mark.skipif(
        os.geteuid() != 0, reason="an emulated cluster needs root (network namespaces)"
    ),
    pytest.mark.skipif(shutil.which("iptables") is None, reason="no iptables: the delayer"),
    pytest.mark.serial,
]

LOOP = Path(__file__).parents[2] / "benchmarks" / "fit_loop_links.py"
LATENCY_MS = 2.5


@pytest.fixture(scope="module")
def cluster():
    yield from emulated_cluster({"nodes": 9, "rate": "40mbit", "master_rate": "320mbit"})


def test_the_recommended_code_and_the_ring_run_as_predicted_on_links_with_latency(
    cluster, tmp_path
):
    out = tmp_path / "loop"
    command = [sys.executable, str(LOOP), "--latency", f"{LATENCY_MS}ms", "--out", str(out)]
    # a small grid, 20 iterations and the data off the links keep it under a minute; the KS test
    # is the fit's business (tests/fit), the latency's interval and the prediction this test's
    command += ["--iterations", "20", "--trials", "5000", "--accept-misfit"]
    command += ["--candidates", "uncoded,frc,ye-abbe,ring-allreduce"]
    done = subprocess.run(command, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads((out / "loop.json").read_text())

    latency = result["latency_fitted"]
    assert latency["identifiable"] and latency["interval"] is not None, latency
    # what the runs measure: the latency set plus the path's processing (0.1-0.3 ms measured,
    # docs/measurements/fit-loop.md), so an interval from below it to 1 ms above
    low, high = (1e3 * bound for bound in latency["interval"])
    assert low <= LATENCY_MS + 0.5 and high >= LATENCY_MS - 0.1, latency

    runs = {run["role"]: run for run in result["runs"]}
    for role, run in runs.items():
        assert run["ratio"] == pytest.approx(1.0, abs=0.10), (role, run)
    # the ring pays 2 (N - 1) latencies: ranked below the recommended code, and slower
    assert result["rank_of_ring"] > 1
    assert runs["ring"]["predicted"] > runs["recommended"]["predicted"]
    assert runs["ring"]["measured"] > runs["recommended"]["measured"]
