import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradcode.codes import NotDecodableError, build
from gradcode.codes.lcc import LagrangeCode, lagrange_basis, partial_gradients
from gradcode.codes.verify import probe_support
from tests.codes.harness import assert_exact


def regression_problem(rng, k, rows=5, d=11):
    X = rng.standard_normal((k, rows, d))
    y = rng.standard_normal((k, rows))
    theta = rng.standard_normal(d)
    return X, y, theta


def full_gradient(X, y, theta):
    """``X^T (X theta - y)`` on the whole (unsplit) data set."""
    X_all = X.reshape(-1, X.shape[2])
    return X_all.T @ (X_all @ theta - y.reshape(-1))


def decode_from(code, X, y, theta, responders):
    coded = code.encode_data(X, y)
    messages = {i: code.worker_gradient(coded[i], theta) for i in responders}
    return code.decode(messages, len(theta))


def test_threshold_and_stragglers():
    code = build("lcc", n=7, k=3)
    assert (code.recovery_threshold, code.s, code.min_responders()) == (5, 2, 5)
    assert code.partitions(4) == (0, 1, 2) and code.messages_per_worker == 1
    assert code.is_decodable([0, 2, 3, 5, 6]) and not code.is_decodable([0, 2, 3, 5])
    assert build("lcc", n=7, k=3, s=1).s == 2  # s is checked, the code tolerates 2


@pytest.mark.parametrize(("n", "k"), [(1, 1), (3, 2), (7, 3), (9, 3), (12, 4), (16, 8)])
def test_any_threshold_responders_recover_the_full_gradient(n, k):
    code = build("lcc", n=n, k=k)
    rng = np.random.default_rng(n * 31 + k)
    X, y, theta = regression_problem(rng, k)
    expected = full_gradient(X, y, theta)
    sets = list(itertools.combinations(range(n), code.recovery_threshold))
    for index in rng.choice(len(sets), size=min(30, len(sets)), replace=False):
        decoded = decode_from(code, X, y, theta, sets[index])
        np.testing.assert_allclose(decoded, expected, rtol=1e-9, atol=1e-9)
    # more responders than needed: least squares, still exact
    decoded = decode_from(code, X, y, theta, range(n))
    np.testing.assert_allclose(decoded, expected, rtol=1e-9, atol=1e-9)


def test_decoding_weights_are_cached_and_reused():
    code = build("lcc", n=9, k=3)
    rng = np.random.default_rng(2)
    X, y, theta = regression_problem(rng, 3)
    first = decode_from(code, X, y, theta, [8, 0, 2, 4, 6])
    used, weights = code.decoding_coefficients([0, 2, 4, 6, 8])
    assert used == (0, 2, 4, 6, 8) and weights.shape == (5,)
    np.testing.assert_array_equal(first, decode_from(code, X, y, theta, [0, 2, 4, 6, 8]))
    assert code.decode_result({w: np.ones(3) for w in used}, 3).condition >= 1


def test_gradient_partials_cannot_be_encoded():
    code = build("lcc", n=5, k=2)
    with pytest.raises(TypeError, match="lcc codes the data, not gradient partials"):
        code.encode(0, np.ones((2, 4)))


def test_every_worker_mixes_every_part():
    for n, k in [(9, 3), (3, 1), (15, 5), (10, 4), (25, 5), (21, 7)]:
        code = build("lcc", n=n, k=k)
        coefficients = code.encoding_coefficients()
        assert coefficients.shape == (k, n) and np.all(coefficients != 0)
        np.testing.assert_allclose(coefficients.sum(axis=0), 1, atol=1e-12)  # l_p sum to 1
        rng = np.random.default_rng(0)
        for worker in range(n):
            assert probe_support(code, worker, rng) == set(range(k))


@pytest.mark.parametrize("points", ["chebyshev", "equispaced"])
def test_points_are_disjoint_for_every_size(points):
    for n in range(1, 51):
        for k in range(2, (n + 1) // 2 + 1):
            code = LagrangeCode(n, k, points=points)
            assert np.min(np.abs(code.alphas[:, None] - code.betas[None, :])) > 1e-6
            assert len(np.unique(code.betas)) == k and np.all(np.abs(code.betas) <= 1)


def test_lagrange_basis_reproduces_polynomials():
    nodes = np.array([-0.9, -0.2, 0.4, 0.8])
    x = np.linspace(-1, 1, 7)
    basis = lagrange_basis(nodes, x)
    np.testing.assert_allclose(nodes**3 @ basis, x**3, atol=1e-13)
    np.testing.assert_allclose(basis.sum(axis=0), 1, atol=1e-13)


def test_not_decodable_names_the_missing_workers():
    code = build("lcc", n=6, k=3)
    with pytest.raises(NotDecodableError, match=r"2k - 1 = 5 workers \(got 3\)") as info:
        code.decode({0: np.zeros(3), 1: np.zeros(3), 5: np.zeros(3)}, 3)
    assert info.value.needed == 2 and info.value.candidates == (2, 3, 4)
    with pytest.raises(ValueError, match="unknown message key"):
        code.is_decodable([0, 6])


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"n": 4, "k": 3}, r"n >= 2k - 1 \(got n=4, k=3\)"),
        ({"n": 7, "k": 3, "s": 3}, r"s <= n - \(2k - 1\) \(got n=7, k=3, s=3\)"),
        ({"n": 7, "k": 0}, "k >= 1"),
        ({"n": 7, "k": 2, "points": "random"}, r"points in .* \(got points='random'\)"),
    ],
)
def test_invalid_parameters(params, message):
    with pytest.raises(ValueError, match=message):
        build("lcc", **params)


def test_data_shapes_are_checked():
    code = build("lcc", n=5, k=2)
    with pytest.raises(ValueError, match=r"X_parts of shape \(k, rows, d\)"):
        code.encode_data(np.zeros((3, 2, 4)), np.zeros((3, 2)))
    with pytest.raises(ValueError, match="one data row per partition"):
        code.encode_all(0, np.zeros((3, 8)))


def test_verification_harness_runs_the_whole_pipeline():
    code = build("lcc", n=8, k=3)
    instance, partials = code.random_instance(np.random.default_rng(0), 13)
    np.testing.assert_allclose(
        partials, partial_gradients(instance.X, instance.y, instance.theta), rtol=1e-15
    )
    report = assert_exact(code, exhaustive=True)
    assert report.patterns_checked == 56 and report.support_ok


def test_paper_fig1_configuration_is_numerically_fragile():
    code = LagrangeCode(**LagrangeCode.paper_fig1_params())
    assert (code.n, code.k, code.recovery_threshold, code.s) == (40, 4, 7, 33)
    rng = np.random.default_rng(3)
    X, y, theta = regression_problem(rng, 4)
    expected = full_gradient(X, y, theta)

    def error(responders):
        decoded = decode_from(code, X, y, theta, responders)
        return np.linalg.norm(decoded - expected) / np.linalg.norm(expected)

    assert error(range(0, 40, 6)) < 1e-9  # spread responders are fine
    order = np.argsort(code.alphas)
    assert error(order[:7]) > 1e-8  # seven neighbouring nodes at one end are not
    assert LagrangeCode.numerically_sound_up_to < 40


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 16), st.data())
def test_random_sizes_and_responders(n, data):
    k = data.draw(st.integers(1, (n + 1) // 2))
    code = build("lcc", n=n, k=k, points=data.draw(st.sampled_from(["chebyshev", "equispaced"])))
    count = data.draw(st.integers(code.recovery_threshold, n))
    responders = data.draw(st.permutations(range(n)))[:count]
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    X, y, theta = regression_problem(rng, k, rows=data.draw(st.integers(1, 4)))
    decoded = decode_from(code, X, y, theta, responders)
    expected = full_gradient(X, y, theta)
    error = np.linalg.norm(decoded - expected) / max(np.linalg.norm(expected), 1e-300)
    assert error < 1e-9
