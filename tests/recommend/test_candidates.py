"""Candidates: every registered scheme at exactly n workers, merged, and every omission
reported with its reason (a registered code without a grid included)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import ClassVar

import numpy as np
import pytest

from gradcode.codes import DecodeResult, GradientCode, available, build, register, scheme_class
from gradcode.codes.base import check_int
from gradcode.codes.registry import unregister
from gradcode.recommend import recommend
from gradcode.recommend.candidates import (
    NOT_THE_GRADIENT,
    decodes_gradient,
    enumerate_candidates,
    freeze,
    grid_for,
)
from gradcode.timing import model_from_spec


class NoGrid(GradientCode):
    """Uncoded under another name, without ``parameter_grid``: exists only in this test."""

    name: ClassVar[str] = "no-grid-test-code"

    def __init__(self, n: int) -> None:
        self.n = self.k = check_int("n", self.name, n, minimum=1)
        self.s = 0

    def partitions(self, worker: int) -> tuple[int, ...]:
        return (worker,)

    def encode(self, worker: int, partials: np.ndarray) -> np.ndarray:
        return np.asarray(partials[0], dtype=np.float64)

    def is_decodable(self, keys: Iterable[int]) -> bool:
        return set(range(self.n)) <= set(keys)

    def decode_result(self, messages: Mapping[int, np.ndarray], length: int) -> DecodeResult:
        return DecodeResult(np.sum([messages[i] for i in range(self.n)], axis=0))


@pytest.fixture
def no_grid():
    register(NoGrid.name, NoGrid)
    try:
        yield NoGrid.name
    finally:
        unregister(NoGrid.name)


@pytest.fixture(scope="module")
def model():
    return model_from_spec("master-worker", {"lambda1": 0.8, "t1": 1.6})


@pytest.mark.parametrize("name", ["ye-abbe", "coded-reduce", "heterogeneous", "gc-mmc", "lcc"])
def test_the_grid_difference_is_exactly_the_codes_with_n_workers(name):
    """Building only ``grid(n) - grid(n - 1)`` finds every configuration a brute-force build
    of ``grid(n)`` finds with ``code.n == n``."""
    cls, n = scheme_class(name), 6
    brute = {
        freeze(p) for p in cls.parameter_grid(max_n=n) if build(name, **p).n == n
    }  # fmt: skip
    assert {freeze(p) for p in grid_for(cls, n)} >= brute
    assert all(build(name, **p).n == n for p in grid_for(cls, n))


def test_candidates_have_n_workers_and_distinct_parameters(model):
    """Equal ``code.params()`` are merged: a speed-sized placement of full replication is the
    grid's cyclic ``r = n`` placement (every worker holds everything)."""
    times = (1.0,) * 4 + (2.5,) * 4
    pool = enumerate_candidates(model, 8, available(), times=times)
    keys = [c.key for c in pool.candidates]
    assert len(keys) == len(set(keys)) and pool.duplicates >= 1
    assert all(c.code.n == 8 for c in pool.candidates)
    assert {c.code.name for c in pool.candidates} >= {"uncoded", "ye-abbe", "crc", "binary"}
    assert freeze({"placement": [[0, 1], [1]], "s": 1}) == freeze(
        {"s": 1, "placement": ((0, 1), (1,))}
    )


def test_what_the_model_cannot_simulate_is_reported_with_its_reason(model):
    skipped = {skip.scheme: skip for skip in enumerate_candidates(model, 8, available()).skipped}
    assert "simulates gradient codes, not ring-allreduce" in skipped["ring-allreduce"].reason
    assert skipped["heterogeneous-poly"].reason == NOT_THE_GRADIENT
    assert skipped["heterogeneous-poly"].count > 10
    # byzshield has K = r l workers, l prime and r odd <= l - 1: none has 8
    assert "no configuration with n = 8 workers" in skipped["byzshield"].reason
    assert set(skipped) == {"ring-allreduce", "heterogeneous-poly", "byzshield"}


def test_a_code_that_decodes_a_function_of_the_sum_is_told_apart():
    poly = scheme_class("heterogeneous-poly")
    params = next(iter(poly.parameter_grid(max_n=4)))
    assert not decodes_gradient(build("heterogeneous-poly", **params))
    assert decodes_gradient(build("ye-abbe", n=5, d=2, s=1, m=1))


def test_a_registered_code_without_a_grid_is_skipped_by_name(model, no_grid):
    pool = enumerate_candidates(model, 4, [no_grid, "uncoded"])
    assert [(s.scheme, s.reason) for s in pool.skipped] == [
        (no_grid, "NoGrid does not enumerate its parameters")
    ]
    rec = recommend(model, 4, trials=200, screen_trials=200)
    assert any(s.scheme == no_grid and "enumerate" in s.reason for s in rec.skipped)


def test_a_per_worker_model_rejects_nothing_it_can_time():
    """Per-worker lists of n entries: every flat code of n workers fits."""
    model = model_from_spec("master-worker", {"lambda1": [0.8] * 5 + [0.2], "t1": 1.6})
    pool = enumerate_candidates(model, 6, ["crc", "frc"])
    assert pool.skipped == [] and len(pool.candidates) > 6
