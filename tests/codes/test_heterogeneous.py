"""Heterogeneous gradient coding (paper 004, Sec. III): placement, eq. 13, RS-style decoding."""

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradcode.codes import NotDecodableError, build
from gradcode.codes.heterogeneous import HeterogeneousCode
from gradcode.codes.placements import cyclic_placement, random_placement
from gradcode.codes.universal_polynomial import universal_coefficients
from gradcode.codes.verify import verify
from tests.codes.harness import assert_exact, independent_sum

# Fig. 2 of the paper: W1 holds everything, W2 {D1, D2, D3}, W3 {D1}, W4 {D2..D5}, W5 {D1, D4, D5}
FIG2 = [[0, 1, 2, 3, 4], [0, 1, 2], [0], [1, 2, 3, 4], [0, 3, 4]]


def messages_of(code, partials):
    return {w: code.encode(w, partials[list(code.partitions(w))]) for w in range(code.n)}


def relative_error(decoded, partials):
    reference = independent_sum(partials)
    return np.linalg.norm(decoded - reference) / np.linalg.norm(reference)


# -- Sec. III-B and III-C: the universal polynomial --------------------------------------------
def test_fig2_coefficients_are_the_papers():
    # with the example's points alpha_n = n, beta = (0, -1), eq. 13 gives exactly the five
    # messages printed in Sec. III-B (g~_1 = 3/2 g1[1] + 16/15 (g2[1] + g3[1]) + ...)
    holders = HeterogeneousCode._holders_of(tuple(map(tuple, FIG2)))
    alpha = np.arange(1.0, 6.0)
    coefficients = universal_coefficients(alpha, holders, alpha, np.array([0.0, -1.0]))
    fractions = [
        [Fraction(float(c)).limit_denominator(60) for c in row.ravel()] for row in coefficients
    ]
    expected = {
        0: ["3/2", "-3/5", "16/15", "-1/3", "16/15", "-1/3", "2/3", "-1/6", "2/3", "-1/6"],
        1: ["3/2", "-4/5", "3/5", "-1/4", "3/5", "-1/4", "0", "0", "0", "0"],
        2: ["1", "-3/5", "0", "0", "0", "0", "0", "0", "0", "0"],
        3: ["0", "0", "-1/3", "1/6", "-1/3", "1/6", "5/3", "-2/3", "5/3", "-2/3"],
        4: ["-3/2", "1", "0", "0", "0", "0", "6", "-5/2", "6", "-5/2"],
    }
    for worker, row in expected.items():
        assert fractions[worker] == [Fraction(v) for v in row]
        assert np.allclose(coefficients[worker].ravel(), [float(Fraction(v)) for v in row])


def test_fig2_scheme_halves_the_messages_and_decodes_from_any_four():
    code = build("heterogeneous", placement=FIG2, s=1)
    assert (code.n, code.k, code.r, code.m, code.degree) == (5, 5, 3, 2, 3)
    assert code.message_length(10) == 5
    report = assert_exact(code, exhaustive=True)
    assert report.patterns_checked == 5
    assert code.loads().tolist() == [5, 3, 1, 4, 3]


def test_evaluate_gives_messages_at_alpha_and_gradient_at_beta():
    code = build("heterogeneous", placement=cyclic_placement(9, 5), s=1, a=1)
    partials = np.random.default_rng(0).standard_normal((code.k, 12))
    alpha, beta = code.evaluation_points()
    at_alpha = code.evaluate(partials, alpha)
    for worker, message in messages_of(code, partials).items():
        np.testing.assert_allclose(at_alpha[worker], message, rtol=1e-12, atol=1e-12)
    chunks = code.evaluate(partials, beta)  # (m, 12 / m)
    np.testing.assert_allclose(chunks.reshape(-1), independent_sum(partials), atol=1e-12)
    # f has degree n - r + m - 1: its Chebyshev coefficients vanish beyond that
    x = np.cos(np.linspace(0.01, 3.1, 40))
    fit = np.polynomial.chebyshev.chebfit(x, code.evaluate(partials, x), 20)
    assert np.abs(fit[code.degree + 1 :]).max() < 1e-9 * np.abs(fit).max()


def test_points_are_chebyshev_and_distinct():
    code = build("heterogeneous", placement=random_placement(20, 25, 6, seed=3), s=2, a=1)
    alpha, beta = code.evaluation_points()
    first_kind = np.cos((2 * np.arange(20) + 1) * np.pi / 40)
    np.testing.assert_allclose(np.sort(alpha), np.sort(first_kind))
    assert len(set(np.round(np.concatenate([alpha, beta]), 12))) == 20 + code.m
    assert np.all(np.abs(beta) < 1)
    again = build("heterogeneous", placement=random_placement(20, 25, 6, seed=3), s=2, a=1)
    np.testing.assert_array_equal(again.evaluation_points()[0], alpha)


# -- exact decoding -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "placement, s, a",
    [
        (cyclic_placement(6, 3), 2, 0),
        (cyclic_placement(7, 5), 0, 2),
        (cyclic_placement(8, 6), 1, 2),
        (random_placement(9, 14, 4, seed=2), 1, 1),
        (random_placement(10, 10, 3, seed=5, weights=[4, 4] + [1] * 8), 2, 0),
        ([[0], [0], [0], [0]], 1, 1),
    ],
)
def test_every_pattern_decodes_exactly(placement, s, a):
    report = assert_exact(build("heterogeneous", placement=placement, s=s, a=a), exhaustive=True)
    assert report.patterns_checked == math.comb(len(placement), s)


@st.composite
def heterogeneous_params(draw, max_n=14):
    n = draw(st.integers(1, max_n))
    r = draw(st.integers(1, n))
    a = draw(st.integers(0, (r - 1) // 2))
    s = draw(st.integers(0, r - 1 - 2 * a))
    k = draw(st.integers(1, 2 * n))
    m = draw(st.one_of(st.none(), st.integers(1, r - s - 2 * a)))
    seed = draw(st.integers(0, 10_000))
    heavy = draw(st.booleans())
    weights = [5.0] + [1.0] * (n - 1) if heavy else None
    placement = random_placement(n, k, r, seed=seed, weights=weights)
    params = {"placement": placement, "s": s, "a": a}
    if m is not None:
        params["m"] = m
    return params


@settings(max_examples=50, deadline=None)
@given(heterogeneous_params())
def test_random_placements_decode_exactly(params):
    code = build("heterogeneous", **params)
    assert code.r == min(sum(p in parts for parts in params["placement"]) for p in range(code.k))
    assert code.m == params.get("m", code.r - code.s - 2 * code.a)
    assert code.min_responders() == code.n - code.r + code.m + 2 * code.a
    assert_exact(code, exhaustive=False, limit=20)


def test_smaller_m_needs_fewer_responders():
    placement = cyclic_placement(10, 6)
    code = build("heterogeneous", placement=placement, s=1, m=2)
    assert (code.degree, code.min_responders()) == (5, 6)
    partials = np.random.default_rng(1).standard_normal((10, 9))
    messages = messages_of(code, partials)
    decoded = code.decode({w: messages[w] for w in (0, 2, 3, 5, 7, 9)}, 9)
    assert relative_error(decoded, partials) < 1e-12
    assert code.is_decodable([0, 2, 3, 5, 7, 9]) and not code.is_decodable([0, 2, 3, 5, 7])


def test_params_round_trip_and_grid_is_valid():
    code = build("heterogeneous", placement=FIG2, s=1)
    assert code.params() == {"placement": FIG2, "s": 1, "a": 0}
    assert build("heterogeneous", **code.params()).params() == code.params()
    with_m = build("heterogeneous", placement=FIG2, s=0, m=1)
    assert with_m.params()["m"] == 1
    grid = list(HeterogeneousCode.parameter_grid(12))
    assert {len(p["placement"]) for p in grid} == set(range(1, 13))
    assert any(p["a"] >= 2 for p in grid) and any("m" in p for p in grid)
    loads = [len(parts) for p in grid for parts in p["placement"]]
    assert max(loads) >= 8 and min(loads) == 1  # heterogeneous loads are represented
    large = [p for p in HeterogeneousCode.parameter_grid(50) if len(p["placement"]) > 12]
    assert large and all(p["s"] <= 3 and p["a"] <= 2 for p in large)


# -- decodability rule and errors -------------------------------------------------------------
def test_too_few_responders_says_how_many_and_which():
    code = build("heterogeneous", placement=cyclic_placement(8, 5), s=1, a=1)
    assert code.min_responders() == 7
    partials = np.random.default_rng(2).standard_normal((8, 6))
    messages = messages_of(code, partials)
    with pytest.raises(NotDecodableError, match=r"needs D \+ 1 \+ 2a = 7 responders") as info:
        code.decode({w: messages[w] for w in range(5)}, 6)
    assert info.value.needed == 2 and info.value.candidates == (5, 6, 7)
    assert not code.is_decodable(range(6)) and code.is_decodable(range(1, 8))
    with pytest.raises(ValueError, match="unknown message keys"):
        code.is_decodable([0, 99])


def test_decode_from_more_than_enough_responders():
    code = build("heterogeneous", placement=cyclic_placement(12, 7), s=2, a=1)
    partials = np.random.default_rng(3).standard_normal((12, 40))
    result = code.decode_result(messages_of(code, partials), 40)
    assert relative_error(result.gradient, partials) < 1e-12 and result.adversaries == ()


@pytest.mark.parametrize(
    "params, match",
    [
        (
            {"placement": cyclic_placement(6, 3), "s": 1, "a": 1},
            r"r >= s \+ 2a \+ 1 \(got r=3, s=1, a=1\)",
        ),
        ({"placement": cyclic_placement(6, 3), "s": 3}, r"r >= s \+ 2a \+ 1 \(got r=3, s=3, a=0\)"),
        (
            {"placement": cyclic_placement(6, 4), "s": 1, "m": 4},
            r"m <= r - s - 2a \(got m=4, r=4, s=1, a=0\)",
        ),
        ({"placement": cyclic_placement(6, 4), "m": 0}, r"m >= 1 \(got m=0\)"),
        ({"placement": [[0, 2], [2]], "s": 0}, r"partitions 0..k-1 .*missing \[1\]"),
        ({"placement": [[0, 0], [0]]}, r"distinct partitions per worker \(worker 0: \[0, 0\]\)"),
        ({"placement": [[0], []]}, r"every worker to hold a partition \(worker 1\)"),
        ({"placement": [[0], [-1]]}, r"integers >= 0 \(worker 1: -1\)"),
        ({"placement": [[0], [1.5]]}, r"integers >= 0"),
        ({"placement": "01"}, r"needs a placement"),
        ({"placement": []}, r"at least one worker"),
        ({"placement": [[0]], "s": -1}, r"s >= 0 \(got s=-1\)"),
    ],
)
def test_invalid_parameters_name_the_constraint(params, match):
    with pytest.raises(ValueError, match=match):
        build("heterogeneous", **params)


def test_wrong_message_shape_is_refused():
    code = build("heterogeneous", placement=cyclic_placement(5, 3), s=1)
    with pytest.raises(ValueError, match=r"message 0 has shape \(3,\), expected \(5,\)"):
        code.decode({w: np.zeros(3 if w == 0 else 5) for w in range(4)}, 10)


# -- cost: one pass over the messages for a responder set already seen ---------------------------
def test_coefficients_are_cached_per_responder_set(monkeypatch):
    code = build("heterogeneous", placement=cyclic_placement(10, 5), s=2)
    partials = np.random.default_rng(4).standard_normal((10, 1001))
    received = {w: m for w, m in messages_of(code, partials).items() if w not in (3, 7)}
    first = code.decode(received, 1001)
    calls = []
    original = code._weights
    monkeypatch.setattr(code, "_weights", lambda keys: calls.append(keys) or original(keys))
    second = code.decode(dict(reversed(received.items())), 1001)
    assert calls == [] and np.array_equal(first, second)
    assert relative_error(second, partials) < 1e-12
    assert 1 <= code.decode_result(received, 1001).condition < 1e3


# -- adversaries --------------------------------------------------------------------------------
def corrupt(kind, messages, bad, rng):
    out = dict(messages)
    others = [w for w in messages if w not in bad]
    direction = rng.standard_normal(next(iter(messages.values())).shape)
    for index, worker in enumerate(bad):
        if kind == "large":
            out[worker] = out[worker] + 1e3 * rng.standard_normal(out[worker].shape)
        elif kind == "small":  # a relative change of 1e-6
            out[worker] = out[worker] * (1 + 1e-6)
        elif kind == "small noise":
            noise = rng.standard_normal(out[worker].shape)
            out[worker] = out[worker] + 1e-6 * np.abs(out[worker]).max() * noise
        elif kind == "scaled copy":  # a scaled copy of an honest worker's message
            out[worker] = -2.5 * messages[others[index % len(others)]]
        elif kind == "colluding":  # the same error direction, scaled differently
            out[worker] = out[worker] + (index + 1) * direction
        elif kind == "zero":
            out[worker] = np.zeros_like(out[worker])
    return out


ADVERSARIAL_SETUPS = [
    (cyclic_placement(9, 6), 1, 2),
    (cyclic_placement(15, 7), 2, 2),
    (cyclic_placement(40, 10), 3, 3),
    (random_placement(20, 30, 6, seed=9), 1, 2),
    (random_placement(30, 30, 8, seed=1, weights=[4, 4] + [1] * 28), 2, 2),
]


@pytest.mark.parametrize("kind", ["large", "small", "scaled copy", "colluding", "zero"])
@pytest.mark.parametrize("placement, s, a", ADVERSARIAL_SETUPS)
def test_exactly_a_adversaries_are_corrected_and_named(placement, s, a, kind):
    code = build("heterogeneous", placement=placement, s=s, a=a)
    rng = np.random.default_rng(len(placement) + a)
    partials = rng.standard_normal((code.k, 33))
    responders = sorted(rng.choice(code.n, code.n - s, replace=False).tolist())
    messages = {w: m for w, m in messages_of(code, partials).items() if w in responders}
    bad = sorted(rng.choice(responders, a, replace=False).tolist())
    received = corrupt(kind, messages, bad, rng)
    result = code.decode_result(received, 33)
    assert relative_error(result.gradient, partials) < 1e-9
    assert sorted(result.adversaries) == bad
    # fewer adversaries than a: still exact, and only the real ones are named
    received = corrupt(kind, messages, bad[:1], rng)
    result = code.decode_result(received, 33)
    assert relative_error(result.gradient, partials) < 1e-9 and list(result.adversaries) == bad[:1]


def test_decoding_with_adversaries_is_deterministic():
    code = build("heterogeneous", placement=cyclic_placement(12, 7), s=2, a=2)
    rng = np.random.default_rng(6)
    partials = rng.standard_normal((12, 50))
    received = {w: m for w, m in messages_of(code, partials).items() if w not in (0, 5)}
    received = corrupt("large", received, [3, 8], rng)
    first = code.decode_result(received, 50)
    second = build("heterogeneous", **code.params()).decode_result(received, 50)
    assert np.array_equal(first.gradient, second.gradient)
    assert first.adversaries == second.adversaries == (3, 8)


@pytest.mark.parametrize("placement, s, a", ADVERSARIAL_SETUPS)
def test_more_corruption_than_a_is_detected(placement, s, a):
    # with n - s responders the code has distance 2a + 1: a + 1 (or more) corruptions in
    # general position cannot pass for a codeword with <= a errors
    code = build("heterogeneous", placement=placement, s=s, a=a)
    rng = np.random.default_rng(11)
    partials = rng.standard_normal((code.k, 20))
    responders = sorted(rng.choice(code.n, code.n - s, replace=False).tolist())
    messages = {w: m for w, m in messages_of(code, partials).items() if w in responders}
    for count in (a + 1, 2 * a, code.n - s):
        bad = rng.choice(responders, count, replace=False).tolist()
        received = corrupt("large" if count % 2 else "small noise", messages, bad, rng)
        with pytest.raises(NotDecodableError, match=f"more than a = {a} of the"):
            code.decode(received, 20)


def test_colluding_a_plus_one_can_impersonate_another_gradient():
    # Theorem 1's converse in action: a + 1 adversaries move the word to distance a from the
    # codeword of gradient g + h(beta) v, with h of degree D vanishing on D responders; the
    # decoder (any decoder) must then return that gradient, and it names the a honest
    # responders on which the two codewords differ. We document this limit, not a bug.
    code = build("heterogeneous", placement=cyclic_placement(11, 7), s=2, a=2)
    assert code.m == 1 and code.min_responders() == 9 == code.degree + 1 + 2 * code.a
    rng = np.random.default_rng(12)
    partials = rng.standard_normal((code.k, 16))
    alpha, beta = code.evaluation_points()
    responders = list(range(2, 11))
    zeros, liars, framed = responders[: code.degree], responders[4:7], responders[7:]
    assert len(liars) == code.a + 1 and len(framed) == code.a

    def h(x):
        return np.prod([x - alpha[z] for z in zeros], axis=0)

    direction = rng.standard_normal(16)
    received = {w: m for w, m in messages_of(code, partials).items() if w in responders}
    for worker in liars:
        received[worker] = received[worker] + h(alpha[worker]) * direction
    result = code.decode_result(received, 16)
    decoded, named = result.gradient, result.adversaries
    impostor = independent_sum(partials) + h(beta[0]) * direction
    np.testing.assert_allclose(decoded, impostor, rtol=1e-9, atol=1e-9)
    assert sorted(named) == framed


# -- numerical soundness (the module docstring's measurement, spot-checked) ---------------------
def test_numerical_soundness_claims():
    limit = HeterogeneousCode.numerically_sound_up_to
    assert limit is not None and 12 < limit <= 50
    s = limit // 4  # the stability family of gradcode.codes.stability at the stated limit
    code = build("heterogeneous", placement=cyclic_placement(limit, s + 2), s=s)
    assert verify(code, exhaustive=False, limit=30, length=64).max_relative_error < 1e-8
    # the grid's large-n members (s <= 3) stay far below, here at n = 50
    code = build("heterogeneous", placement=random_placement(50, 53, 4, seed=1), s=3)
    assert verify(code, exhaustive=False, limit=20).max_relative_error < 1e-10


# -- random_placement ---------------------------------------------------------------------------
@settings(max_examples=50, deadline=None)
@given(
    st.integers(1, 30),
    st.integers(1, 40),
    st.data(),
)
def test_random_placement_replicates_every_partition(n, k, data):
    r = data.draw(st.integers(1, n))
    seed = data.draw(st.integers(0, 100))
    placement = random_placement(n, k, r, seed=seed)
    counts = [sum(p in parts for parts in placement) for p in range(k)]
    assert min(counts) == (n if k == 1 else r) and all(parts for parts in placement)
    assert placement == random_placement(n, k, r, seed=seed)


def test_random_placement_weights_make_heavy_workers():
    placement = random_placement(10, 200, 3, seed=0, weights=[5, 5] + [1] * 8)
    loads = [len(parts) for parts in placement]
    assert min(loads[:2]) > 2 * max(loads[2:])
    with pytest.raises(ValueError, match="n positive weights"):
        random_placement(3, 3, 2, weights=[1, 0, 1])
    with pytest.raises(ValueError, match=r"r <= n \(got n=3, r=4\)"):
        random_placement(3, 3, 4)


def test_completion_times_match_the_decodability_rule():
    from gradcode.codes import GradientCode

    rng = np.random.default_rng(13)
    for params in list(HeterogeneousCode.parameter_grid(7))[::5]:
        code = build("heterogeneous", **params)
        arrivals = rng.exponential(size=(40, code.n))
        arrivals[rng.random(arrivals.shape) < 0.2] = np.inf
        arrivals[:5] = np.round(arrivals[:5], 1)
        expected = GradientCode.completion_times(code, arrivals)
        np.testing.assert_array_equal(code.completion_times(arrivals), expected)
