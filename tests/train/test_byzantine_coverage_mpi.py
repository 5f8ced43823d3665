"""Byzantine coverage under MPI (issue 49, point 6).

- DRACO's cyclic code and DETOX (vote mode, ``a = 1``) as MPI runs under every attack of
  ``gradcode.attacks``: both claim exactness with one liar, so each run's iterates must be
  the honest serial run's to round-off, and the liar named in every iteration.
- One aggregated MPI run (uncoded, coordinate-wise median, ALIE) against a serial replay of
  the same aggregation outside MPI: the same partial gradients, the ALIE forgery computed
  here independently from its published rule, the same aggregator, the same optimizer step.
  The ALIE forgery (Baruch, Baruch & Goldberg, NeurIPS 2019, Algorithm 1): with ``n`` workers
  of which ``f`` lie, ``s = floor(n / 2 + 1) - f`` and ``z_max`` the largest ``z`` with
  ``Phi(z) < (n - s) / n``; each liar sends ``mean - z_max * std`` of the honest messages,
  per coordinate (population standard deviation, as ``gradcode.attacks.alie`` documents;
  its ``z`` is signed, so the paper's rule is ``z = -z_max``).
"""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest

from gradcode import attacks
from gradcode.runfile.config import load_config
from gradcode.runfile.dataset import load_training_data
from gradcode.runfile.plan import build_plan
from gradcode.runfile.reference import serial_trajectory
from tests.helpers.mpi import base_run, relative_errors, run_config

pytestmark = pytest.mark.mpi

PARAMS = {"noise": {"scale": 10.0}, "reversed": {"scale": 100.0}, "constant": {"value": 50.0}}
SCHEMES = {
    "draco-cyclic": ({"n": 5, "a": 1}, 6),  # r = 3 of 5 partitions per worker
    "detox": ({"n": 6, "r": 3}, 7),  # two groups of three replicas, a vote each
}


@pytest.mark.parametrize("attack", attacks.available())
@pytest.mark.parametrize("scheme", sorted(SCHEMES))
def test_an_exact_code_under_every_attack_stays_the_honest_serial_run(
    tmp_path, logistic_data, scheme, attack
):
    params, ranks = SCHEMES[scheme]
    adversaries = {"workers": [1], "attack": attack, "params": PARAMS.get(attack, {})}
    run = base_run(
        logistic_data,
        scheme={"name": scheme, "params": params},
        adversaries=adversaries,
        iterations=3,
    )
    job = run_config(tmp_path, run, ranks=ranks).check()
    assert [record["adversaries"] for record in job.log()] == [[1]] * 3
    reference = serial_trajectory(load_config(job.run_file))
    assert relative_errors(job.trajectory(), reference).max() <= 1e-12


def _alie_z(n: int, f: int) -> float:
    """The paper's ``z_max``: ``Phi(z) < (n - s) / n``, ``s = floor(n / 2 + 1) - f``."""
    s = math.floor(n / 2 + 1) - f
    return statistics.NormalDist().inv_cdf((n - s) / n)


def _alie(honest: list[np.ndarray], z_max: float) -> np.ndarray:
    """``mean - z_max * std`` per coordinate, by exact sums (no numpy reductions)."""
    out = []
    for column in zip(*(h.tolist() for h in honest), strict=True):
        mean = math.fsum(column) / len(column)
        std = math.sqrt(math.fsum((x - mean) ** 2 for x in column) / len(column))
        out.append(mean - z_max * std)
    return np.array(out)


def test_an_aggregated_run_is_its_serial_replay(tmp_path, logistic_data):
    n, liar = 5, 1
    z_max = _alie_z(n, f=1)
    assert 0.25 < z_max < 0.26  # s = 2, Phi^-1(3 / 5)
    run = base_run(
        logistic_data,
        scheme={"name": "uncoded", "params": {"n": n}},
        aggregator={"name": "median"},
        adversaries={"workers": [liar], "attack": "alie", "params": {"z": -z_max}},
        iterations=4,
    )
    job = run_config(tmp_path, run, ranks=n + 1).check()
    assert all("attack_time" in record for record in job.log())

    # the replay: the serial run's loop with the median of the forged partials for the sum
    config = load_config(job.run_file)
    plan = build_plan(config)
    data = load_training_data(config.data, plan.partitions, config.model.kind)
    model, optimizer = config.model.build(), plan.optimizer()
    aggregator = config.aggregator.build()  # the same aggregator, outside MPI
    l2 = config.model.l2_value(data.rows)
    state = optimizer.init(model.initial_parameters(data.features, config.seed))
    replay = []
    for t in range(config.iterations):
        point = optimizer.point(state)
        partials = [model.partial_gradient(*data.part(p), point) for p in range(n)]
        honest = [g for w, g in enumerate(partials) if w != liar]
        partials[liar] = _alie(honest, z_max)
        mean = aggregator.aggregate(np.stack(partials)).value
        optimizer.step(state, t, model.full_gradient(mean * n, point, data.rows, l2))
        replay.append(optimizer.model(state).copy())
    errors = relative_errors(job.trajectory(), np.stack(replay))
    print(f"aggregated run against its replay: max relative error {errors.max():.3g}")
    assert errors.max() <= 1e-12, errors
