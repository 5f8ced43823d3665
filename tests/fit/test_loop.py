"""The loop on real MPI runs: fit an uncoded run's logs, recommend a code, run it, compare.

Workers sleep paper 000's injected delays (T1 = 1.6 + Exp(0.8) per subset, T2 = 6 + Exp(0.1)
per vector, 1 unit = 4 ms); the fit sees only the logs. What the loop must show: the fit finds
the injected rates, and the code it recommends runs as fast as predicted (within 10 %) and
beats uncoded by about the predicted ratio.
"""

from __future__ import annotations

import pytest

from gradcode.fit.predict import predict_runs
from gradcode.fit.runs import fit_runs
from gradcode.recommend import Limits, recommend
from gradcode.sim.spec import load_spec
from tests.helpers.data import small_logistic
from tests.helpers.mpi import base_run, run_config

# measured times against predicted ones: alone, after the parallel tests (pyproject's markers)
pytestmark = [pytest.mark.mpi, pytest.mark.serial]

UNIT = 0.004
MODEL = {"lambda1": 0.8, "t1": 1.6, "lambda2": 0.1, "t2": 6}


def test_fit_recommend_run_predict(tmp_path):
    logistic_data = small_logistic(tmp_path / "data")
    stragglers = {"model": "master-worker", "params": MODEL, "time_unit": UNIT}

    def run(scheme: dict, name: str):
        config = base_run(
            logistic_data,
            scheme=scheme,
            stragglers=stragglers,
            iterations=50,
            log={"metrics_every": 0},
        )
        return run_config(tmp_path, config, ranks=5, name=name).check().out

    calibration = run({"name": "uncoded", "params": {"n": 4}}, "uncoded")
    fitted = fit_runs([calibration], bootstrap=50)
    compute = fitted.pooled.compute
    # injected rate 0.8 per unit; the measured compute adds to the shift, not to the rate
    assert compute.rate_interval[0] <= MODEL["lambda1"] / UNIT <= compute.rate_interval[1]
    assert fitted.pooled.comm.rate == pytest.approx(MODEL["lambda2"] / UNIT, rel=0.35)

    spec = fitted.spec()
    model = load_spec(spec, origin="fitted").model
    best = recommend(model, 4, limits=Limits(exact_only=True), trials=20_000).best
    assert best is not None and best.scheme != "uncoded"
    chosen = run({"name": best.scheme, "params": best.params}, "recommended")
    recommended, uncoded = predict_runs(spec, [chosen, calibration], trials=20_000)
    assert recommended.ratio == pytest.approx(1.0, abs=0.10)
    predicted_speedup = recommended.predicted / uncoded.predicted
    measured_speedup = recommended.measured / uncoded.measured
    assert measured_speedup == pytest.approx(predicted_speedup, abs=0.15)


@pytest.mark.parametrize(
    ("scheme", "ranks"),
    [
        ({"name": "coded-reduce", "params": {"n": 2, "L": 2, "s": 1}}, 7),
        ({"name": "ring-allreduce", "params": {"n": 4}}, 5),
    ],
    ids=["tree", "ring"],
)
def test_tree_and_ring_runs_are_fitted_from_what_every_node_logged(tmp_path, scheme, ranks):
    logistic_data = small_logistic(tmp_path / "data")
    stragglers = {"model": "master-worker", "params": MODEL, "time_unit": UNIT}
    config = base_run(
        logistic_data, scheme=scheme, stragglers=stragglers, iterations=40, log={"metrics_every": 0}
    )
    out = run_config(tmp_path, config, ranks=ranks, name=scheme["name"]).check().out
    fitted = fit_runs([out], bootstrap=50)
    for component, rate in ((fitted.pooled.compute, "lambda1"), (fitted.pooled.comm, "lambda2")):
        low, high = component.rate_interval
        assert low <= MODEL[rate] / UNIT <= high
    # the injected link delay is observed exactly, its shift too; the computation's adds
    # the measured compute (a fraction of a millisecond here)
    assert fitted.pooled.comm.shift == pytest.approx(MODEL["t2"] * UNIT, rel=0.05)
    assert fitted.pooled.compute.shift == pytest.approx(MODEL["t1"] * UNIT, rel=0.1)
    load_spec(fitted.spec(), origin="fitted")
