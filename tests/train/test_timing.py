"""Timings are measured, and the log says what was injected and what was observed."""

from __future__ import annotations

import numpy as np
import pytest

from gradcode.codes import build
from gradcode.runfile.config import load_config
from gradcode.runfile.plan import build_plan
from gradcode.runlogs.timings import implied_iteration_time
from gradcode.timing import model_from_spec
from gradcode.train.protocol import H
from tests.helpers.mpi import base_run, run_config

# wall-clock times against a model: alone, after the parallel tests (pyproject's markers)
pytestmark = [pytest.mark.mpi, pytest.mark.serial]

FEATURES = 16  # of the logistic_data fixture
HEADER_FLOATS = H


def test_injected_delays_are_logged_and_bound_the_observed_times(tmp_path, logistic_data):
    delays = [0.01, 0.02, 0.03, 0.04]
    run = base_run(
        logistic_data,
        scheme={"name": "frc", "params": {"n": 4, "s": 1}},
        stragglers={"model": "fixed", "params": {"compute": delays, "comm": 0.005}},
    )
    job = run_config(tmp_path, run, ranks=5).check()
    code = build("frc", n=4, s=1)
    for record in job.log():
        assert record["injected"]["compute"] == delays
        assert record["injected"]["comm"] == [0.005] * 4
        for message in record["messages"]:
            worker = message["worker"]
            # two partitions per worker, each followed by its injected delay
            assert message["injected_compute"] == pytest.approx(2 * delays[worker])
            assert message["injected_comm"] == pytest.approx(0.005)  # full-length message
            assert message["compute"] > 0
            floor = message["compute"] + message["injected_compute"] + message["injected_comm"]
            assert message["arrival"] >= floor
        # FRC decodes once each group has one result: when worker 2 (60 ms) answers, before 3
        assert sorted(record["used"]) == [0, 1, 2]
        implied = implied_iteration_time(code, record)
        assert implied == pytest.approx(2 * 0.03 + 0.005, abs=0.01)
        assert implied <= record["iteration_time"]


def test_bandwidth_emulation_serves_one_message_at_a_time(tmp_path, logistic_data):
    # 20 ms per full-length message at the master's single port
    per_message = 0.02
    bandwidth = {"vector_seconds": per_message}
    times = {}
    for scheme, params in (
        ("uncoded", {"n": 4}),
        ("ye-abbe", {"n": 4, "d": 3, "s": 1, "m": 2}),
    ):
        run = base_run(
            logistic_data, scheme={"name": scheme, "params": params}, bandwidth=bandwidth
        )
        job = run_config(tmp_path, run, ranks=5, name=scheme).check()
        for record in job.log():
            arrivals = sorted(m["arrival"] for m in record["messages"])
            payload = record["messages"][0]["bytes"] - HEADER_FLOATS * 8
            service = per_message * payload / (FEATURES * 8)
            assert np.diff(arrivals).min() >= service - 1e-9  # strictly one after the other
            assert record["bytes_received"] == sum(m["bytes"] for m in record["messages"])
        times[scheme] = np.median([r["iteration_time"] for r in job.log()])
    # uncoded waits for 4 full messages (80 ms); m = 2 halves them and needs 3 (about 36 ms)
    assert times["uncoded"] >= 4 * per_message
    assert times["ye-abbe"] < 0.7 * times["uncoded"]


def test_ring_steps_pay_the_emulated_links(tmp_path, logistic_data):
    n, per_chunk = 4, 0.01
    chunk_bytes = FEATURES // n * 8
    run = base_run(
        logistic_data,
        scheme={"name": "ring-allreduce", "params": {"n": n}},
        bandwidth={"bytes_per_second": chunk_bytes / per_chunk},
    )
    job = run_config(tmp_path, run, ranks=n + 1).check()
    for record in job.log():
        assert record["iteration_time"] >= 2 * (n - 1) * per_chunk
        for message in record["messages"]:
            assert message["port_wait"] >= 2 * (n - 1) * per_chunk - 1e-9


def test_master_worker_model_scales_link_delay_by_message_length(tmp_path, logistic_data):
    params = {"lambda1": 0.8, "t1": 1.6, "lambda2": 0.1, "t2": 6}
    run = base_run(
        logistic_data,
        scheme={"name": "ye-abbe", "params": {"n": 4, "d": 3, "s": 1, "m": 2}},
        stragglers={"model": "master-worker", "params": params, "time_unit": 0.001},
    )
    job = run_config(tmp_path, run, ranks=5).check()
    for record in job.log():
        comm = record["injected"]["comm"]
        compute = record["injected"]["compute"]
        assert min(comm) >= 0.006 and min(compute) >= 0.0016
        for message in record["messages"]:
            worker = message["worker"]
            assert message["injected_comm"] == pytest.approx(comm[worker] / 2)  # m = 2
            assert message["injected_compute"] == pytest.approx(3 * compute[worker])  # d = 3


SIMULATED = [
    ("ye-abbe", {"n": 4, "d": 3, "s": 1, "m": 2}, "master-worker", 5),
    ("frc", {"n": 4, "s": 1}, "single-port", 5),
    ("coded-reduce", {"n": 2, "L": 2, "s": 1}, "single-port", 7),
    ("ring-allreduce", {"n": 4}, "single-port", 5),
]
MODEL_PARAMS = {
    "master-worker": {"lambda1": 0.8, "t1": 1.6, "lambda2": 0.1, "t2": 6},
    "single-port": {"a": 0.05, "mu": 4.0, "tc": 2.0, "data": 40},
}


@pytest.mark.parametrize(
    ("scheme", "params", "model", "ranks"), SIMULATED, ids=[s[0] for s in SIMULATED]
)
def test_emulated_iterations_take_what_the_simulator_predicts_for_the_same_draws(
    tmp_path, logistic_data, scheme, params, model, ranks
):
    unit = 0.01
    run = base_run(
        logistic_data,
        scheme={"name": scheme, "params": params},
        stragglers={"model": model, "params": MODEL_PARAMS[model], "time_unit": unit},
    )
    job = run_config(tmp_path, run, ranks=ranks).check()
    plan = build_plan(load_config(job.run_file))
    source = plan.delay_source()
    simulated = model_from_spec(model, MODEL_PARAMS[model])
    prepared = simulated.prepare(plan.code)
    gaps = []
    for record in job.log():
        draws = simulated.sample(source.rng(record["iteration"]), 1, plan.workers)
        predicted = float(prepared.run(draws).times[0]) * unit
        gaps.append(record["iteration_time"] - predicted)
    # the runtime adds coordination (model sends, polling, decoding) and never beats the model
    assert min(gaps) > -0.002, gaps
    assert np.median(gaps) < 0.025, gaps
