"""Berrut approximate gradient coding (paper 004, Sec. V): encoding, decoding, Remark 15."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradcode.codes import NotDecodableError, build
from gradcode.codes.berrut import BerrutCode, berrut_matrix
from gradcode.codes.placements import cyclic_placement, random_placement
from gradcode.codes.universal_polynomial import universal_coefficients
from gradcode.codes.verify import verify
from tests.codes.harness import independent_sum


def messages_of(code, partials):
    return {w: code.encode(w, partials[list(code.partitions(w))]) for w in range(code.n)}


def relative_error(decoded, partials):
    reference = independent_sum(partials)
    return float(np.linalg.norm(decoded - reference) / np.linalg.norm(reference))


def decode_subset(code, messages, count, rng, length):
    chosen = rng.choice(code.n, count, replace=False).tolist()
    return code.decode({w: messages[w] for w in chosen}, length)


# -- the scheme ---------------------------------------------------------------------------------
def test_encoding_is_section_III_at_chebyshev_points_of_the_second_kind():
    code = build("berrut", placement=random_placement(9, 11, 3, seed=4), s=2, m=2)
    alpha, beta = code.evaluation_points()
    np.testing.assert_allclose(np.sort(alpha), np.sort(np.cos(np.arange(9) * np.pi / 8)))
    assert np.all(np.abs(beta) < 1) and np.min(np.abs(beta[:, None] - alpha[None, :])) > 0.05
    expected = universal_coefficients(alpha, code._holders, alpha, beta)
    np.testing.assert_array_equal(code.encoding_matrix(), expected)
    partials = np.random.default_rng(0).standard_normal((code.k, 10))
    np.testing.assert_allclose(code.evaluate(partials, beta).reshape(-1), partials.sum(axis=0))
    assert (code.n, code.k, code.r, code.s, code.a, code.m) == (9, 11, 3, 2, 0, 2)
    assert code.degree == 9 - 3 + 2 - 1 and not code.exact


def test_decode_is_berrut_interpolation_at_beta():
    code = build("berrut", n=8, r=3, s=1, m=2)
    partials = np.random.default_rng(1).standard_normal((8, 14))
    messages = messages_of(code, partials)
    responders = [0, 2, 3, 5, 6]
    alpha, beta = code.evaluation_points()
    # eq. 34 written out: signs alternate along the responders sorted by their point
    ranked = sorted(responders, key=lambda w: alpha[w])
    expected = np.zeros((2, 7))
    for u in range(2):
        weights = [(-1) ** i / (beta[u] - alpha[w]) for i, w in enumerate(ranked)]
        for weight, w in zip(weights, ranked, strict=True):
            expected[u] += weight / sum(weights) * messages[w]
    decoded = code.decode({w: messages[w] for w in responders}, 14)
    np.testing.assert_allclose(decoded, expected.reshape(-1), rtol=1e-12, atol=1e-12)


def test_decodes_from_any_number_of_responders():
    code = build("berrut", n=10, r=4, s=2)
    assert code.min_responders() == 8
    assert code.is_decodable(range(8)) and not code.is_decodable(range(7))
    partials = np.random.default_rng(2).standard_normal((10, 5))
    messages = messages_of(code, partials)
    for count in range(1, 11):
        decoded = code.decode({w: messages[w] for w in range(count)}, 5)
        assert decoded.shape == (5,) and np.all(np.isfinite(decoded))
    with pytest.raises(NotDecodableError, match="at least one response") as info:
        code.decode({}, 5)
    assert info.value.needed == 1


def test_exact_when_f_is_constant():
    # everyone holds everything and m = 1: f is the gradient itself (D = 0), and Berrut's
    # interpolant reproduces constants from any responders
    code = build("berrut", n=12, r=12, s=3)
    assert code.degree == 0
    rng = np.random.default_rng(3)
    partials = rng.standard_normal((12, 30))
    messages = messages_of(code, partials)
    for count in (1, 2, 5, 12):
        assert relative_error(decode_subset(code, messages, count, rng, 30), partials) < 1e-13


@pytest.mark.parametrize("n", [6, 11, 20])
def test_linear_f_is_exact_exactly_for_an_even_number_of_responders(n):
    # D = 1 (r = n - 1, m = 1): sum_i (-1)^i = 0 for an even count, so Berrut reproduces
    # linear functions then and only then (Remark 15's parity split)
    code = build("berrut", n=n, r=n - 1)
    assert code.degree == 1
    rng = np.random.default_rng(n)
    partials = rng.standard_normal((n, 25))
    messages = messages_of(code, partials)
    for count in range(2, n + 1):
        error = relative_error(decode_subset(code, messages, count, rng, 25), partials)
        assert (error < 1e-13) == (count % 2 == 0), (count, error)


def test_more_responders_help_on_average():
    # Remark 12: the more results, the better the approximation (averaged over instances)
    rng = np.random.default_rng(5)
    for n, r, m in [(20, 18, 1), (30, 27, 1), (20, 10, 1), (30, 5, 2)]:
        code = build("berrut", n=n, r=r, m=m)
        errors = {count: [] for count in (n, n - n // 4, n - n // 2)}
        for _ in range(30):
            partials = rng.standard_normal((n, 20 * m))
            messages = messages_of(code, partials)
            for count, found in errors.items():
                found.append(
                    relative_error(decode_subset(code, messages, count, rng, 20 * m), partials)
                )
        means = [np.mean(errors[count]) for count in sorted(errors, reverse=True)]
        # a trend, not a law: with high replication losing a quarter of the nodes costs
        # little (f is nearly linear, and parity matters), losing half costs clearly more
        assert means[0] <= 1.1 * means[1] and max(means[:2]) <= means[2], (n, r, m, means)
        # and with everyone answering the approximation is informative (relative error < 1)
        assert means[0] < 0.5


def test_harness_records_errors_without_failing():
    report = verify(build("berrut", n=12, r=10, s=3), exhaustive=True)
    assert report.support_ok and not report.failures and not report.exact
    assert report.patterns_checked == math.comb(12, 3)
    # recorded, not judged: the worst of the 220 patterns lose both nodes next to beta (relative
    # error about 2), the median one is about 0.35
    assert 0 < report.max_relative_error < 10


# -- Remark 15 ----------------------------------------------------------------------------------
def sup_norms(code, partials, responders):
    """Per scalar coordinate: sup |f~ - f|, sup |f'|, sup |f''| over [-1, 1]."""
    cheb = np.polynomial.chebyshev
    nodes = np.cos((2 * np.arange(code.degree + 1) + 1) * np.pi / (2 * code.degree + 2))
    coefficients = cheb.chebfit(nodes, code.evaluate(partials, nodes), code.degree)
    alpha, _ = code.evaluation_points()
    grid = np.cos(np.linspace(1e-4, np.pi - 1e-4, 6001))
    grid = grid[np.min(np.abs(grid[:, None] - alpha[None, :]), axis=1) > 1e-9]
    exact = cheb.chebval(grid, coefficients).T
    approx = berrut_matrix(alpha[responders], grid) @ code.evaluate(partials, alpha[responders])
    first = np.abs(cheb.chebval(grid, cheb.chebder(coefficients)).T).max(axis=0)
    second = np.abs(cheb.chebval(grid, cheb.chebder(coefficients, 2)).T).max(axis=0)
    return np.abs(approx - exact).max(axis=0), first, second, np.abs(exact).max(axis=0)


@settings(max_examples=40, deadline=None)
@given(
    st.integers(6, 24),
    st.integers(1, 2),
    st.booleans(),
    st.data(),
)
def test_remark15_bound_holds_on_random_instances(n, m, cyclic, data):
    r = data.draw(st.integers(1, n))
    if cyclic:
        code = build("berrut", n=n, r=r, m=m)
    else:
        code = build(
            "berrut", placement=random_placement(n, n, r, seed=data.draw(st.integers(0, 99))), m=m
        )
    stragglers = data.draw(st.integers(0, n - 4))
    rng = np.random.default_rng(data.draw(st.integers(0, 99)))
    partials = rng.standard_normal((code.k, 3 * m))
    responders = np.sort(rng.choice(n, n - stragglers, replace=False))
    error, first, second, size = sup_norms(code, partials, responders)
    bound = np.array(
        [code.remark15_bound(len(responders), a, b) for a, b in zip(first, second, strict=True)]
    )
    assert np.all(error <= bound + 1e-9 * size)


def test_remark15_bound_formula_and_domain():
    code = build("berrut", n=11, r=9)
    # N = 10: with 9 responders s1 = 2, N - s1 = 8 is even, so f' enters too
    nu = 3 * 5 * math.pi**2 / 4
    factor = 2 * (1 + nu) * math.sin(3 * math.pi / 20)
    assert code.remark15_bound(9, 2.0, 3.0) == pytest.approx(factor * 5.0)
    nu = 2 * 4 * math.pi**2 / 4
    assert code.remark15_bound(10, 2.0, 3.0) == pytest.approx(
        2 * (1 + nu) * math.sin(2 * math.pi / 20) * 3.0
    )
    with pytest.raises(ValueError, match=r"Remark 15 needs 0 <= s1 < N - 2 \(got s1=8, N=n-1=10\)"):
        code.remark15_bound(3, 1.0, 1.0)


# -- the error estimate -------------------------------------------------------------------------
def test_error_estimate_tracks_the_error():
    rng = np.random.default_rng(7)
    ratios = []
    for trial in range(150):
        n = int(rng.integers(6, 31))
        if trial % 3 == 0:
            code = build("berrut", n=n, r=int(rng.integers(1, n + 1)), m=int(rng.integers(1, 3)))
        elif trial % 3 == 1:
            code = build("berrut", n=n, r=n - int(rng.integers(1, 4)))
        else:
            placement = random_placement(n, n, int(rng.integers(2, n)), seed=trial)
            code = build("berrut", placement=placement, m=int(rng.integers(1, 3)))
        partials = rng.standard_normal((code.k, 12 * code.m))
        messages = messages_of(code, partials)
        chosen = rng.choice(n, int(rng.integers(2, n + 1)), replace=False).tolist()
        result = code.decode_result({w: messages[w] for w in chosen}, 12 * code.m)
        approx, estimate = result.gradient, result.error_estimate
        np.testing.assert_array_equal(
            approx, code.decode({w: messages[w] for w in chosen}, 12 * code.m)
        )
        error = np.linalg.norm(approx - independent_sum(partials))
        if error > 1e-9 * np.linalg.norm(independent_sum(partials)):
            ratios.append(estimate / error)
    ratios = np.array(ratios)
    assert len(ratios) > 100
    assert np.mean((ratios >= 0.3) & (ratios <= 10)) >= 0.9
    assert 1 <= np.median(ratios) <= 4


def test_error_estimate_with_one_responder_is_infinite():
    code = build("berrut", n=5, r=3)
    partials = np.random.default_rng(8).standard_normal((5, 4))
    result = code.decode_result({2: code.encode(2, partials[list(code.partitions(2))])}, 4)
    approx, estimate = result.gradient, result.error_estimate
    assert approx.shape == (4,) and estimate == math.inf


# -- interface ----------------------------------------------------------------------------------
def test_coefficients_are_cached_per_responder_set(monkeypatch):
    code = build("berrut", n=10, r=5, s=2, m=2)
    partials = np.random.default_rng(9).standard_normal((10, 1001))
    received = {w: m for w, m in messages_of(code, partials).items() if w not in (1, 4)}
    first = code.decode(received, 1001)
    calls = []
    original = code._weights
    monkeypatch.setattr(code, "_weights", lambda keys: calls.append(keys) or original(keys))
    assert np.array_equal(code.decode(dict(reversed(received.items())), 1001), first)
    assert calls == []


def test_params_round_trip():
    cyclic = build("berrut", n=7, s=2, m=2)
    assert cyclic.params() == {"n": 7, "r": 4, "s": 2, "m": 2}  # r = s + m by default
    assert cyclic.placement() == cyclic_placement(7, 4)
    placed = build("berrut", placement=[[0, 1], [1, 2], [2, 0]], s=1)
    assert placed.params() == {"placement": [[0, 1], [1, 2], [2, 0]], "s": 1, "m": 1}
    for code in (cyclic, placed):
        assert build("berrut", **code.params()).params() == code.params()
    grid = list(BerrutCode.parameter_grid(12))
    assert {p.get("n", len(p.get("placement", []))) for p in grid} == set(range(2, 13))
    assert any("placement" in p for p in grid) and any(p["s"] >= 3 for p in grid)


@pytest.mark.parametrize(
    "params, match",
    [
        ({}, r"either placement or n"),
        ({"n": 4, "placement": [[0], [0]]}, r"either placement or n"),
        ({"n": 1}, r"n >= 2 \(got n=1\)"),
        ({"placement": [[0]]}, r"n >= 2 workers \(got n=1\)"),
        ({"n": 5, "s": 5}, r"s < n \(got n=5, s=5\)"),
        ({"n": 5, "m": 5}, r"m <= n - 1 \(got n=5, m=5\)"),
        ({"n": 5, "r": 6}, r"r <= n \(got n=5, r=6\)"),
        ({"n": 5, "r": 0}, r"r >= 1 \(got r=0\)"),
        ({"placement": [[0], [1]], "r": 1}, r"takes r only with n"),
        ({"placement": [[0], [2]]}, r"missing \[1\]"),
        ({"n": 5, "m": 0}, r"m >= 1 \(got m=0\)"),
    ],
)
def test_invalid_parameters_name_the_constraint(params, match):
    with pytest.raises(ValueError, match=match):
        build("berrut", **params)


def test_completion_times_match_the_stopping_rule():
    from gradcode.codes import GradientCode

    rng = np.random.default_rng(14)
    for params in list(BerrutCode.parameter_grid(7))[::4]:
        code = build("berrut", **params)
        arrivals = rng.exponential(size=(40, code.n))
        arrivals[rng.random(arrivals.shape) < 0.2] = np.inf
        expected = GradientCode.completion_times(code, arrivals)
        np.testing.assert_array_equal(code.completion_times(arrivals), expected)
