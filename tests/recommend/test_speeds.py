"""Workers of unequal speed: their times measured through the model, and the allocations the
codes derive from them (``for_worker_times`` of paper 003's binary code and paper 004's
heterogeneous code)."""

from __future__ import annotations

import numpy as np
import pytest

from gradcode.codes import available, build, scheme_class
from gradcode.codes.placements import speed_placement
from gradcode.recommend import Limits, recommend
from gradcode.recommend.candidates import WORKER_TIMES
from gradcode.recommend.speeds import worker_times
from gradcode.recommend.workers import worker_types
from gradcode.timing import model_from_spec

TWO_SPEEDS = {"lambda1": [0.8] * 4 + [0.2] * 4, "t1": 1.6, "lambda2": 0.1, "t2": 6}


def test_measured_times_are_the_master_worker_means():
    """The probe's estimate equals the closed form ``t1 + 1 / lambda1`` per worker (relative)."""
    model = model_from_spec("master-worker", {**TWO_SPEEDS, "t1": [1.6] * 6 + [3.0, 3.0]})
    measured = worker_times(model, 8)
    exact = model.compute.means(8) / model.compute.means(8).min()
    np.testing.assert_allclose(measured.times, exact, rtol=0.02)
    assert len(set(measured.types)) == 3  # (0.8, 1.6), (0.2, 1.6), (0.2, 3.0)


def test_single_port_times_per_data_point():
    model = model_from_spec(
        "single-port", {"a": [1.0] * 3 + [2.0] * 3, "mu": 1, "tc": 3, "data": 60}
    )
    assert worker_times(model, 6).times == pytest.approx((1.0,) * 3 + (1.5,) * 3, rel=0.02)


def test_a_homogeneous_cluster_has_no_worker_times():
    model = model_from_spec("master-worker", {"lambda1": [0.8] * 4, "t1": 1.6})
    assert worker_types(model, 4) is None and worker_times(model, 4) is None


@pytest.mark.parametrize("k, r", [(8, 1), (8, 3), (16, 2), (16, 8)])
def test_speed_placement_holds_every_partition_r_times_loads_following_speed(k, r):
    times = [1.0, 1.0, 1.0, 1.0, 2.5, 2.5, 2.5, 2.5]
    placement = speed_placement(k, r, times)
    counts = np.bincount([p for parts in placement for p in parts], minlength=k)
    assert counts.tolist() == [r] * k
    assert all(len(set(parts)) == len(parts) for parts in placement)
    loads = [len(parts) for parts in placement]
    assert min(loads[:4]) >= max(loads[4:])  # faster workers hold at least as much
    assert speed_placement(8, 3, [1.0] * 8) == [
        sorted((3 * w + j) % 8 for j in range(3)) for w in range(8)
    ]


def test_only_the_codes_that_can_allocate_for_speeds_do():
    times = [1.0] * 3 + [2.0] * 3
    offering = {
        name for name in available() if next(scheme_class(name).for_worker_times(times), None)
    }
    assert offering == {"binary", "heterogeneous"}
    for name in offering:
        for params in scheme_class(name).for_worker_times(times):
            code = build(name, **params)
            assert code.n == 6 and code.s < 6
    binary = [build("binary", **p) for p in scheme_class("binary").for_worker_times(times)]
    assert all(code.loads()[0] >= code.loads()[-1] for code in binary)


def test_heterogeneous_workers_add_the_allocations_and_they_win_without_stragglers():
    """Two speeds, almost no randomness, no link cost: a code that gives the fast workers
    more data beats every equal-load code (uncoded finishes with its slowest worker)."""
    model = model_from_spec("master-worker", {"lambda1": 20, "t1": [1.0] * 4 + [3.0] * 4})
    rec = recommend(model, 8, limits=Limits(exact_only=True), trials=2000, screen_trials=300)
    assert rec.worker_times.times[:4] == (1.0,) * 4
    assert rec.worker_times.times[4] == pytest.approx(2.9, rel=0.03)
    sized = [row for row in rec.ranked if row.origin == WORKER_TIMES]
    assert {row.scheme for row in sized} == {"binary", "heterogeneous"}
    assert rec.best.origin == WORKER_TIMES and rec.best.ratio < 0.6
    assert "sized to the worker times" in rec.best.notes()
