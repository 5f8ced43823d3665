"""Models give per-partition gradient sums that add up to the full gradient; optimizers follow
their papers' update rules exactly."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import sparse

from gradcode.models import LinearRegression, LogisticRegression, build
from gradcode.models.logistic import roc_auc
from gradcode.optim import Constant, GradientDescent, Inverse, Nesterov, TandonAccelerated


def problem(kind: str, rows: int = 60, features: int = 7, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((rows, features))
    if kind == "logistic":
        y = np.where(rng.random(rows) < 0.5, -1.0, 1.0)
    else:
        y = rng.standard_normal(rows)
    return X, y, rng.standard_normal(features) * 0.3


@pytest.mark.parametrize("kind", ["logistic", "linear"])
def test_gradient_matches_finite_differences_and_partitions_add_up(kind):
    model = build(kind)
    X, y, theta = problem(kind)
    l2 = 0.05
    rows = y.size
    parts = np.array_split(np.arange(rows), 5)
    total = sum(model.partial_gradient(X[p], y[p], theta) for p in parts)
    gradient = model.full_gradient(total, theta, rows, l2)
    eps = 1e-6
    numeric = np.array(
        [
            (model.loss(X, y, theta + eps * e, l2) - model.loss(X, y, theta - eps * e, l2))
            / (2 * eps)
            for e in np.eye(theta.size)
        ]
    )
    np.testing.assert_allclose(gradient, numeric, rtol=1e-6, atol=1e-8)


def test_sparse_and_dense_features_give_the_same_gradient():
    X, y, theta = problem("logistic")
    model = LogisticRegression()
    np.testing.assert_allclose(
        model.partial_gradient(sparse.csr_array(X), y, theta),
        model.partial_gradient(X, y, theta),
        rtol=1e-13,
    )


def test_logistic_gradient_does_not_overflow_on_large_margins():
    X = np.array([[1000.0], [-1000.0]])
    y = np.array([1.0, 1.0])
    gradient = LogisticRegression().partial_gradient(X, y, np.array([1.0]))
    assert np.isfinite(gradient).all()
    assert gradient[0] == pytest.approx(1000.0)  # only the misclassified row contributes


def test_expit_is_scipys_within_two_units_in_the_last_place():
    from scipy.special import expit as scipy_expit

    from gradcode.models.logistic import expit

    rng = np.random.default_rng(3)
    edges = [0.0, -0.0, 1e-300, 36.0, -36.0, 709.0, -709.0, 710.0, -746.0, np.inf, -np.inf]
    z = np.concatenate([rng.normal(0, 1, 10**5), rng.uniform(-800, 800, 10**5), edges])
    ours, theirs = expit(z), scipy_expit(z)
    assert np.all(np.abs(ours - theirs) <= 2 * np.spacing(np.maximum(ours, theirs)))
    assert np.array_equal(ours[-len(edges) :], theirs[-len(edges) :])


def test_metrics_of_the_papers():
    X, y, theta = problem("logistic")
    metrics = LogisticRegression().metrics(theta, theta * 0.5, X, y, None)
    assert 0.0 <= metrics["auc"] <= 1.0
    assert metrics["relative_error"] == pytest.approx(1.0)  # ||t - t/2||^2 / ||t/2||^2
    X, y, theta = problem("linear")
    star = theta * 2
    metrics = LinearRegression().metrics(theta, None, X, y, star)
    assert metrics["normalized_error"] == pytest.approx(0.25)


def quadratic_system(seed: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """Least squares with condition number about 1e3 (where acceleration shows)."""
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((20, 6)) * np.logspace(0, -1.5, 6)
    return A, rng.standard_normal(20)


def quadratic(seed: int = 1):
    A, b = quadratic_system(seed)
    return (lambda theta: A.T @ (A @ theta - b)), np.linalg.norm(A, 2) ** 2


def test_auc_is_scikit_learns_ties_included():
    from sklearn.metrics import roc_auc_score

    rng = np.random.default_rng(0)
    for trial in range(200):
        size = int(rng.integers(2, 200))
        labels = np.where(np.arange(size) % 2 == 0, 1.0, -1.0)
        rng.shuffle(labels)
        # every other trial integer scores, so ties are many
        scores = rng.integers(0, 5, size).astype(float) if trial % 2 else rng.standard_normal(size)
        assert roc_auc(labels, scores) == pytest.approx(roc_auc_score(labels, scores), abs=1e-15)
    assert roc_auc(np.array([-1.0, 1.0]), np.array([0.0, 1.0])) == 1.0
    assert roc_auc(np.array([1.0, -1.0, 1.0]), np.array([2.0, 2.0, 0.0])) == 0.25


def test_tandon_update_is_their_code_line_for_line():
    grad, _ = quadratic()
    eta, alpha, n_samples = 0.01, 0.1, 20
    # their master loop (src/naive.py), with g the *sum* gradient and beta, utemp from zero
    beta, utemp = np.zeros(6), np.zeros(6)
    ours = TandonAccelerated(Constant(eta))
    state = ours.init(np.zeros(6))
    for i in range(15):
        g = grad(beta) * n_samples  # their g sums per-example gradients
        theta = 2.0 / (i + 2.0)
        ytemp = (1 - theta) * beta + theta * utemp
        betatemp = ytemp - (eta / n_samples) * g - (2 * alpha * eta) * beta
        utemp = beta + (betatemp - beta) * (1 / theta)
        beta = betatemp
        point = ours.point(state)
        full = grad(point) + 2 * alpha * point  # grad F = g / N + 2 alpha beta
        ours.step(state, i, full)
        np.testing.assert_allclose(ours.model(state), beta, rtol=1e-12, atol=1e-14)


def test_nesterov_is_bubecks_scheme_and_beats_gradient_descent():
    grad, smooth = quadratic()
    eta = 1.0 / smooth
    nesterov = Nesterov(Constant(eta))
    state = nesterov.init(np.zeros(6))
    x = y_prev = np.zeros(6)
    lam = 0.0
    lam = (1 + math.sqrt(1 + 4 * lam * lam)) / 2  # lambda_1
    for t in range(30):
        lam_next = (1 + math.sqrt(1 + 4 * lam * lam)) / 2
        gamma = (1 - lam) / lam_next
        y_next = x - eta * grad(x)
        x = (1 - gamma) * y_next + gamma * y_prev
        y_prev, lam = y_next, lam_next
        nesterov.step(state, t, grad(nesterov.point(state)))
        np.testing.assert_allclose(nesterov.model(state), y_next, rtol=1e-12, atol=1e-14)
    gd = GradientDescent(Constant(eta))
    plain = gd.init(np.zeros(6))
    for t in range(30):
        gd.step(plain, t, grad(gd.point(plain)))
    optimum = np.linalg.lstsq(*quadratic_system(), rcond=None)[0]
    assert np.linalg.norm(nesterov.model(state) - optimum) < np.linalg.norm(
        gd.model(plain) - optimum
    )


def test_inverse_schedule_is_c1_over_t_plus_c2():
    schedule = Inverse(4.0, 2.0)
    assert [schedule(t) for t in range(3)] == [2.0, 4.0 / 3.0, 1.0]
    gd = GradientDescent(schedule)
    state = gd.init(np.ones(2))
    gd.step(state, 1, np.ones(2))
    np.testing.assert_allclose(gd.model(state), 1 - 4.0 / 3.0)
