"""Non-finite inputs against every aggregator (refused, named, counted against its tolerance;
never a non-finite output) and the pairwise distances Krum and Bulyan rank by (computed from
differences: exact where the expanded squares cancel)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gradcode import aggregators
from gradcode.aggregators import AggregatorError
from gradcode.aggregators.krum import squared_distances

#: every built-in with the Byzantine inputs it tolerates among N inputs
N = 11
CASES = {
    "median": ({}, 5),
    "trimmed-mean": ({"beta": 0.2}, 2),
    "multi-krum": ({"f": 2, "m": 3}, 2),
    "geometric-median": ({}, 5),
    "bulyan": ({"f": 2}, 2),
}
VALUES = {"nan": (np.nan, "NaN"), "+inf": (np.inf, "+inf"), "-inf": (-np.inf, "-inf")}


def test_every_built_in_is_covered():
    assert set(CASES) == set(aggregators.available()) & set(CASES)
    for name, (params, tolerated) in CASES.items():
        assert aggregators.build(name, params).tolerates(N) == tolerated


def _poisoned(rows: list[int], value: float, rng) -> np.ndarray:
    honest = rng.standard_normal((N, 7)) * 0.1 + 3.0
    inputs = honest.copy()
    for row in rows:
        inputs[row, rng.choice(7, size=3, replace=False)] = value
    return honest, inputs


@pytest.mark.parametrize("value", sorted(VALUES))
@pytest.mark.parametrize("name", sorted(CASES))
def test_nonfinite_inputs_within_tolerance_are_refused_and_named(name, value):
    params, tolerated = CASES[name]
    aggregator = aggregators.build(name, params)
    number, word = VALUES[value]
    rng = np.random.default_rng([len(name), len(value)])
    rows = sorted(int(r) for r in rng.choice(N, size=tolerated, replace=False))
    honest_all, inputs = _poisoned(rows, number, rng)
    result = aggregator.aggregate(inputs)
    assert result.refused == {row: word for row in rows}
    assert np.isfinite(result.value).all()
    if result.selected is not None:  # Krum and Bulyan: indices of the inputs given
        assert not set(result.selected) & set(rows)
    honest = np.delete(honest_all, rows, axis=0)
    error = np.linalg.norm(result.value - honest.mean(axis=0))
    assert error <= aggregator.error_bound(honest, N) * (1 + 1e-6)


@pytest.mark.parametrize("name", sorted(CASES))
def test_identical_honest_inputs_come_back_exactly_past_a_nan_and_an_infinity(name):
    params, _ = CASES[name]
    honest = np.arange(5.0) - 1.5
    inputs = np.tile(honest, (N, 1))
    inputs[2, 1], inputs[6] = np.nan, -np.inf
    result = aggregators.build(name, params).aggregate(inputs)
    assert np.array_equal(result.value, honest)
    assert result.refused == {2: "NaN", 6: "-inf"}


@pytest.mark.parametrize("value", sorted(VALUES))
@pytest.mark.parametrize("name", sorted(CASES))
def test_more_nonfinite_inputs_than_tolerated_raise_naming_them(name, value):
    params, tolerated = CASES[name]
    aggregator = aggregators.build(name, params)
    number, word = VALUES[value]
    rows = list(range(1, tolerated + 2))
    _, inputs = _poisoned(rows, number, np.random.default_rng(3))
    with pytest.raises(AggregatorError) as caught:
        aggregator.aggregate(inputs)
    line = str(caught.value)
    assert "\n" not in line and f"aggregator {name}" in line and "not finite" in line
    assert all(f"{row} ({word})" in line for row in rows)
    assert f"more than the {tolerated} Byzantine" in line


def test_a_mix_of_nan_and_infinity_in_one_input_is_named_so():
    inputs = np.ones((N, 3))
    inputs[4] = [np.nan, np.inf, -np.inf]
    result = aggregators.build("median").aggregate(inputs)
    assert result.refused == {4: "NaN, +inf, -inf"} and np.array_equal(result.value, np.ones(3))


@pytest.mark.parametrize("name", sorted(CASES))
def test_finite_inputs_that_overflow_the_output_are_refused_not_returned(name):
    params, _ = CASES[name]
    inputs = np.full((N, 3), 1.7e308)  # finite; their mean's sum overflows
    inputs[::2] *= -1.0
    inputs[0] = 1.7e308
    try:
        result = aggregators.build(name, params).aggregate(inputs)
    except AggregatorError as error:
        assert "not finite" in str(error) and "\n" not in str(error)
    else:
        assert np.isfinite(result.value).all()


# -- distances from differences ----------------------------------------------------------------
def _independent_squared_distances(inputs: np.ndarray) -> np.ndarray:
    n = inputs.shape[0]
    out = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            pairs = zip(inputs[i].tolist(), inputs[j].tolist(), strict=True)
            out[i, j] = math.fsum((a - b) ** 2 for a, b in pairs)
    return out


def test_distances_survive_a_large_common_part():
    """Rows 1e8 + noise of 1e-3: the expanded |x|^2 + |y|^2 - 2 x.y subtracts numbers of 1e17
    whose round-off (about 10) dwarfs the squared distances (about 1e-5); from differences
    every distance is exact to a few ulps."""
    rng = np.random.default_rng(0)
    inputs = 1e8 + 1e-3 * rng.standard_normal((9, 20))
    expected = _independent_squared_distances(inputs)
    got = squared_distances(inputs)
    assert np.allclose(got, expected, rtol=1e-6, atol=0.0)
    assert np.array_equal(got, got.T) and np.all(np.diag(got) == 0.0)


def test_krum_keeps_the_honest_inputs_around_a_large_common_part():
    """Eight honest rows 1e8 + noise of 1e-3, three liars 0.05 away from them: Krum (f = 3)
    must pick honest rows; with distances lost to cancellation its scores are noise."""
    rng = np.random.default_rng(1)
    inputs = 1e8 + 1e-3 * rng.standard_normal((11, 20))
    inputs[[2, 5, 9]] += 0.05
    for name, params in (("multi-krum", {"f": 3, "m": 5}), ("bulyan", {"f": 2})):
        result = aggregators.build(name, params).aggregate(inputs)
        if name == "multi-krum":
            assert not set(result.selected) & {2, 5, 9}
        honest = np.delete(inputs, [2, 5, 9], axis=0)
        assert np.abs(result.value - honest.mean(axis=0)).max() < 0.01
