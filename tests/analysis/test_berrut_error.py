"""Analysis berrut-error (paper 004, Sec. V and Remark 15) against independent computations."""

import math

import numpy as np
import pytest
from numpy.polynomial import chebyshev as cheb

from gradcode.analysis import berrut_error as be
from gradcode.codes import build
from gradcode.codes.berrut import berrut_matrix
from gradcode.codes.placements import random_placement


@pytest.mark.parametrize(
    "params",
    [
        {"n": 10, "r": 3, "m": 1},
        {"n": 12, "r": 4, "m": 2, "s": 1},
        {"placement": random_placement(9, 11, 3, seed=4), "m": 2},
    ],
)
def test_rebuilt_f_gives_the_messages_at_alpha_and_the_gradient_at_beta(params):
    code = build("berrut", **params)
    alpha, beta = code.evaluation_points()
    basis = be.universal_chebyshev(code.assignment_matrix(), alpha, beta)
    rng = np.random.default_rng(0)
    width = 5
    partials = rng.standard_normal((code.k, code.m * width))
    coefficients = np.einsum("uid,iuw->wd", basis, partials.reshape(code.k, code.m, width))
    for w in range(code.n):
        message = code.encode(w, partials[list(code.partitions(w))])
        np.testing.assert_allclose(cheb.chebval(alpha[w], coefficients.T), message, atol=1e-10)
    at_beta = np.concatenate([cheb.chebval(b, coefficients.T) for b in beta])
    np.testing.assert_allclose(at_beta, partials.sum(axis=0), atol=1e-10)


def test_remark15_factor_is_the_papers_formula_and_the_librarys():
    code = build("berrut", n=21, r=5)
    for stragglers in range(0, 17):
        factor, with_first = be.remark15_factor(21, stragglers)
        nu = (stragglers + 1) * (stragglers + 3) * math.pi**2 / 4
        assert factor == pytest.approx(2 * (1 + nu) * math.sin((stragglers + 1) * math.pi / 40))
        assert with_first == ((20 - stragglers) % 2 == 0)
        expected = factor * (3.0 + (2.0 if with_first else 0.0))
        assert code.remark15_bound(21 - stragglers, 2.0, 3.0) == pytest.approx(expected)
    with pytest.raises(ValueError, match="Remark 15 needs"):
        be.remark15_factor(21, 18)


def test_batched_berrut_weights_are_eq34():
    rng = np.random.default_rng(1)
    nodes = np.sort(rng.uniform(-1, 1, size=(4, 7)), axis=1)
    targets = np.array([0.13, -0.52])
    weights = be.berrut_weights(nodes, targets)
    for row in range(4):
        np.testing.assert_allclose(weights[row], berrut_matrix(nodes[row], targets), rtol=1e-12)
        for u, x in enumerate(targets):
            terms = [(-1) ** i / (x - nodes[row, i]) for i in range(7)]
            np.testing.assert_allclose(weights[row, u], np.array(terms) / sum(terms))


def test_point_matches_the_library_and_the_bound_holds():
    rng = np.random.default_rng(2)
    partials = be.logistic_partials(10, rng)
    code = build("berrut", n=10, r=5, s=1, m=1)
    exact = build("heterogeneous", placement=code.placement(), s=4, m=1)
    pools = (be.Pool(code, partials), be.Pool(exact, partials))
    row = be.point(code, exact, pools, "test", 3, 40, rng)
    assert row["library_deviation"] < 1e-12
    assert row["bound_holds_fraction"] == 1.0 and row["max_error_over_bound"] <= 1.0
    assert row["exact_trials"] == 20 and row["exact_max_rel_error"] < 1e-10
    assert 0 < row["mean_rel_error"] <= row["max_rel_error"]
    beyond = be.point(code, exact, pools, "test", 5, 40, rng)
    assert beyond["exact_trials"] == 0 and beyond["exact_max_rel_error"] is None


def test_error_is_zero_when_everyone_holds_everything():
    # D = n - r + m - 1 = 0: f is constant, which Berrut's interpolant reproduces exactly
    rng = np.random.default_rng(3)
    partials = be.logistic_partials(8, rng)
    code = build("berrut", n=8, r=8, s=2, m=1)
    exact = build("heterogeneous", placement=code.placement(), s=7, m=1)
    pools = (be.Pool(code, partials), be.Pool(exact, partials))
    row = be.point(code, exact, pools, "x", 3, 30, rng)
    assert row["max_rel_error"] < 1e-13


def test_compute_is_deterministic_and_covers_the_grid(monkeypatch):
    monkeypatch.setattr(be, "SIZES", (10,))
    monkeypatch.setattr(be, "POOL", 4)
    first = be.compute(trials=30, seed=7, progress=lambda line: None)
    rows = first.rows
    assert len(rows) == 3 * 7  # three regimes, s1 = 0 .. 6 (n - 4)
    assert all(row["bound_holds_fraction"] == 1.0 for row in rows)
    assert all(row["library_deviation"] < 1e-12 for row in rows)
    for row in rows:
        applies = row["stragglers"] <= row["r"] - row["m"]
        assert (row["exact_max_rel_error"] is not None) == applies
    everyone = [row for row in rows if row["stragglers"] == 0]
    # Sec. V as specified is approximate even with every worker answering
    assert all(0.01 < row["mean_rel_error"] < 0.5 for row in everyone)
    assert be.compute(trials=30, seed=7, progress=lambda line: None).render_csv() == (
        first.render_csv()
    )
