"""Paper 004, Sec. IV (Theorem 2): h(G_1 + ... + G_K) from stragglers and adversaries."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradcode.codes import NotDecodableError, build
from gradcode.codes.heterogeneous_poly import HeterogeneousPolyCode, theorem2_replication
from gradcode.codes.placements import cyclic_placement, random_placement
from gradcode.codes.verify import verify
from tests.codes.harness import assert_exact

# Fig. 2 of the paper (its Sec. III example placement): r = 3
FIG2 = [[0, 1, 2, 3, 4], [0, 1, 2], [0], [1, 2, 3, 4], [0, 3, 4]]
SIDE = 4


def direct(h, partials):
    """h(sum G_k) computed here: a plain sum, then numpy matrix powers."""
    total = partials.sum(axis=0).reshape(SIDE, SIDE)
    out = np.zeros((SIDE, SIDE))
    for power, coefficient in enumerate(h):
        out += coefficient * np.linalg.matrix_power(total, power)
    return out.reshape(-1)


def messages_of(code, partials):
    return {w: code.encode(w, partials[list(code.partitions(w))]) for w in range(code.n)}


def relative_error(decoded, reference):
    return float(np.linalg.norm(decoded - reference) / np.linalg.norm(reference))


def poly_code(n, s, a, h, *, extra=0):
    """The cyclic placement at Theorem 2's least replication (plus ``extra``)."""
    r = theorem2_replication(n, s, a, len(h) - 1) + extra
    return build("heterogeneous-poly", placement=cyclic_placement(n, r), h=h, s=s, a=a)


# -- the construction ------------------------------------------------------------------------
def test_messages_are_h_of_f_at_alpha_and_beta_gives_h_of_the_sum():
    h = [1.0, -0.5, 0.25]
    code = poly_code(9, 1, 1, h)
    rng = np.random.default_rng(0)
    partials = rng.standard_normal((code.k, SIDE * SIDE))
    alpha, beta = code.evaluation_points()
    at_alpha = code.evaluate(partials, alpha)
    for worker, message in messages_of(code, partials).items():
        np.testing.assert_allclose(at_alpha[worker], message, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(code.evaluate(partials, beta)[0], direct(h, partials), atol=1e-11)
    # eq. 19 by hand: worker n applies h to sum over its partitions of G_i prod (a_n - a_j) / ..
    worker = 4
    inner = np.zeros(SIDE * SIDE)
    for part in code.partitions(worker):
        lacking = [j for j in range(code.n) if part not in code.partitions(j)]
        weight = np.prod([(alpha[worker] - alpha[j]) / (beta[0] - alpha[j]) for j in lacking])
        inner += weight * partials[part]
    X = inner.reshape(SIDE, SIDE)
    by_hand = np.eye(SIDE) - 0.5 * X + 0.25 * X @ X
    np.testing.assert_allclose(messages_of(code, partials)[worker], by_hand.reshape(-1), atol=1e-12)


def test_h_of_f_has_degree_n_minus_r_times_deg_h():
    code = poly_code(10, 1, 0, [0.0, 1.0, 0.5, -0.2])
    assert code.degree == (code.n - code.r) * 3
    partials = np.random.default_rng(1).standard_normal((code.k, SIDE * SIDE))
    x = np.cos(np.linspace(0.01, 3.1, 60))
    fit = np.polynomial.chebyshev.chebfit(x, code.evaluate(partials, x), 40)
    assert np.abs(fit[code.degree + 1 :]).max() < 1e-9 * np.abs(fit).max()
    assert np.abs(fit[code.degree]).max() > 1e-6 * np.abs(fit).max()


def test_theorem2_numbers_and_threshold():
    # N - s >= (N - r) deg h + 2a + 1  <=>  r >= N - floor((N - 2a - s - 1) / deg h)
    for n in range(1, 16):
        for q in (1, 2, 3, 4):
            for s in range(3):
                for a in range(3):
                    r = theorem2_replication(n, s, a, q)
                    if r <= n:
                        assert n - s >= (n - r) * q + 2 * a + 1
                        assert r == n or n - s < (n - r + 1) * q + 2 * a + 1
    code = poly_code(12, 2, 1, [1.0, 1.0, 1.0])
    assert (code.r, code.degree, code.min_responders()) == (9, 6, 9)
    assert code.min_responders() <= code.n - code.s
    # deg h = 1 is Sec. III with m = 1: r >= s + 2a + 1
    assert theorem2_replication(10, 2, 1, 1) == 5


def test_infeasible_placement_is_refused_with_theorem2_numbers():
    with pytest.raises(
        ValueError,
        match=r"min_k \|A_k\| >= N - floor\(\(N - 2a - s - 1\) / deg h\) = 7 "
        r"\(Theorem 2; got r=6, N=10, s=1, a=1, deg h=2\)",
    ):
        build("heterogeneous-poly", placement=cyclic_placement(10, 6), h=[1, 2, 3], s=1, a=1)
    build("heterogeneous-poly", placement=cyclic_placement(10, 7), h=[1, 2, 3], s=1, a=1)
    with pytest.raises(ValueError, match=r"= 5 \(Theorem 2; got r=4, N=4, s=2, a=1, deg h=1\)"):
        build("heterogeneous-poly", placement=cyclic_placement(4, 4), h=[0, 1], s=2, a=1)


@pytest.mark.parametrize(
    "h, match",
    [
        ([1.0], r"deg h >= 1 with a non-zero leading coefficient \(got h=\[1.0\]\)"),
        ([1.0, 2.0, 0.0], r"non-zero leading coefficient \(got h=\[1.0, 2.0, 0.0\]\)"),
        ("x^2", r"h as a list of coefficients"),
        ([1.0, float("nan")], r"finite coefficients"),
        ([1.0, "2"], r"real coefficients"),
        ([1.0, True], r"real coefficients"),
    ],
)
def test_invalid_polynomials_are_refused(h, match):
    with pytest.raises(ValueError, match=match):
        build("heterogeneous-poly", placement=cyclic_placement(4, 4), h=h)


def test_other_parameters_are_checked():
    with pytest.raises(ValueError, match=r"s >= 0 \(got s=-1\)"):
        build("heterogeneous-poly", placement=cyclic_placement(4, 4), h=[0, 1], s=-1)
    with pytest.raises(ValueError, match=r"missing \[1\]"):
        build("heterogeneous-poly", placement=[[0, 2], [2]], h=[0, 1])
    with pytest.raises(ValueError, match=r"heterogeneous-poly:.*'h'"):
        build("heterogeneous-poly", placement=cyclic_placement(4, 4))


def test_matrix_messages_need_square_lengths():
    code = poly_code(5, 1, 0, [0.0, 1.0, 1.0])
    assert code.capabilities.message == "matrix" and code.capabilities.corrects_adversaries
    assert code.message_length(49) == 49 and code.m == 1
    with pytest.raises(ValueError, match=r"d \* d numbers \(a d x d matrix\), got length 50"):
        code.message_length(50)
    with pytest.raises(ValueError, match=r"got length 8"):
        code.encode(0, np.zeros((code.load(0), 8)))
    with pytest.raises(ValueError, match=r"partials of shape \(\d, d \* d\)"):
        code.encode(0, np.zeros((code.load(0) + 1, 9)))


def test_params_round_trip():
    code = build("heterogeneous-poly", placement=FIG2, h=[1, 0.5], s=1)
    assert code.params() == {"placement": FIG2, "h": [1.0, 0.5], "s": 1, "a": 0}
    assert build("heterogeneous-poly", **code.params()).params() == code.params()
    assert code.loads().tolist() == [5, 3, 1, 4, 3]


# -- exact decoding, every straggler pattern ---------------------------------------------------
def test_grid_every_pattern_small_n_against_the_direct_computation():
    # the independent reference here is this test's own sum and matrix powers
    rng = np.random.default_rng(2)
    checked = 0
    for params in HeterogeneousPolyCode.parameter_grid(10):
        code = build("heterogeneous-poly", **params)
        if code.a or code.n < 3 or checked % 3:
            checked += 1
            continue
        partials = rng.standard_normal((code.k, SIDE * SIDE))
        reference = direct(code.h, partials)
        messages = messages_of(code, partials)
        for stragglers in __import__("itertools").combinations(range(code.n), code.s):
            alive = {w: messages[w] for w in range(code.n) if w not in stragglers}
            assert relative_error(code.decode(alive, SIDE * SIDE), reference) < 1e-9, code
        checked += 1
    assert checked > 100


@pytest.mark.parametrize(
    "placement, h, s, a",
    [
        (FIG2, [1.0, 0.5], 1, 0),
        (cyclic_placement(8, 6), [1.0, 0.5, 0.3], 1, 1),
        (cyclic_placement(10, 8), [0.0, 1.0, 0.5, -0.2], 1, 1),
        (cyclic_placement(10, 9), [2.0, 0.0, 0.0, 0.0, 1.0], 2, 0),
        (random_placement(9, 12, 7, seed=4), [1.0, 1.0, 1.0], 2, 0),
        (random_placement(10, 10, 7, seed=5, weights=[4, 4] + [1] * 8), [0.0, 0.0, 1.0], 1, 1),
    ],
)
def test_every_pattern_decodes_exactly_through_verify(placement, h, s, a):
    code = build("heterogeneous-poly", placement=placement, h=h, s=s, a=a)
    report = assert_exact(code, exhaustive=True)
    assert report.patterns_checked == math.comb(len(placement), s)
    assert report.support_ok


@st.composite
def poly_params(draw, max_n=12):
    q = draw(st.integers(1, 4))
    h = draw(
        st.lists(st.floats(-2.0, 2.0, allow_nan=False), min_size=q + 1, max_size=q + 1).filter(
            lambda c: abs(c[-1]) > 0.05
        )
    )
    n = draw(st.integers(1, max_n))
    a = draw(st.integers(0, 2))
    s = draw(st.integers(0, 3))
    r = theorem2_replication(n, s, a, q)
    if r > n:
        a = s = 0
        r = theorem2_replication(n, 0, 0, q)
    r = draw(st.integers(r, n))
    k = draw(st.integers(1, 2 * n))
    seed = draw(st.integers(0, 10_000))
    heavy = draw(st.booleans())
    weights = [5.0] + [1.0] * (n - 1) if heavy else None
    placement = random_placement(n, k, r, seed=seed, weights=weights)
    return {"placement": placement, "h": h, "s": s, "a": a}


@settings(max_examples=60, deadline=None)
@given(poly_params(), st.integers(0, 2**31))
def test_random_placements_polynomials_and_corruptions(params, seed):
    code = build("heterogeneous-poly", **params)
    rng = np.random.default_rng(seed)
    partials = rng.standard_normal((code.k, SIDE * SIDE))
    reference = direct(code.h, partials)
    messages = messages_of(code, partials)
    alive = sorted(rng.choice(code.n, code.n - code.s, replace=False).tolist())
    liars = sorted(rng.choice(alive, int(rng.integers(0, code.a + 1)), replace=False).tolist())
    received = {w: messages[w] for w in alive}
    scale = max(np.abs(m).max() for m in messages.values())
    for w in liars:
        received[w] = received[w] + 1e3 * scale * rng.standard_normal(SIDE * SIDE)
    result = code.decode_result(received, SIDE * SIDE)
    # a random h may nearly cancel: measure against the scale of the terms, not of the result
    terms = sum(abs(c) * np.linalg.norm(partials.sum(axis=0)) ** p for p, c in enumerate(code.h))
    assert np.linalg.norm(result.gradient - reference) <= 1e-9 * max(terms, 1e-300), code
    assert sorted(int(w) for w in result.adversaries) == liars


# -- adversaries -------------------------------------------------------------------------------
ADVERSARIAL = [
    (9, 1, 1, [1.0, -0.5, 0.25]),
    (12, 1, 2, [0.0, 1.0, 0.5, -0.2]),
    (20, 2, 2, [1.0, 1.0, 0.5]),
    (30, 2, 3, [1.0, 0.5]),
]


@pytest.mark.parametrize("kind", ["large", "small", "scaled copy", "colluding", "zero"])
@pytest.mark.parametrize("n, s, a, h", ADVERSARIAL)
def test_up_to_a_liars_are_corrected_and_named(n, s, a, h, kind):
    code = poly_code(n, s, a, h)
    rng = np.random.default_rng(n + a)
    partials = rng.standard_normal((code.k, SIDE * SIDE))
    reference = direct(h, partials)
    messages = messages_of(code, partials)
    alive = sorted(rng.choice(n, n - s, replace=False).tolist())
    for count in (a, 1):
        liars = sorted(rng.choice(alive, count, replace=False).tolist())
        received = {w: messages[w] for w in alive}
        direction = rng.standard_normal(SIDE * SIDE)
        for index, w in enumerate(liars):
            if kind == "large":
                received[w] = received[w] + 1e3 * rng.standard_normal(SIDE * SIDE)
            elif kind == "small":
                received[w] = received[w] * (1 + 1e-6)
            elif kind == "scaled copy":
                honest = [v for v in alive if v not in liars]
                received[w] = -2.5 * messages[honest[index]]
            elif kind == "colluding":
                received[w] = received[w] + (index + 1) * direction
            else:
                received[w] = np.zeros(SIDE * SIDE)
        result = code.decode_result(received, SIDE * SIDE)
        assert relative_error(result.gradient, reference) < 1e-9
        assert sorted(result.adversaries) == liars


def test_more_than_a_liars_in_general_position_are_detected():
    code = poly_code(12, 1, 2, [0.0, 1.0, 0.5, -0.2])
    rng = np.random.default_rng(7)
    partials = rng.standard_normal((code.k, SIDE * SIDE))
    messages = messages_of(code, partials)
    alive = list(range(1, 12))
    for count in (3, 5, 11):
        received = {w: messages[w] for w in alive}
        for w in rng.choice(alive, count, replace=False):
            received[int(w)] = received[int(w)] + rng.standard_normal(SIDE * SIDE)
        with pytest.raises(NotDecodableError, match=r"more than a = 2 of the 11"):
            code.decode(received, SIDE * SIDE)


def test_a_plus_one_colluding_liars_break_it():
    # tightness: a + 1 liars add p(alpha_w) E, p of degree D vanishing on D responders, so the
    # word is at distance a from h(f(x)) + p(x) E, another degree-D matrix polynomial; any
    # decoder must then return h(sum G) + p(beta) E, and ours names the a honest workers on
    # which the two words differ
    h = [1.0, -0.5, 0.25]
    code = poly_code(9, 1, 1, h)
    rng = np.random.default_rng(12)
    partials = rng.standard_normal((code.k, SIDE * SIDE))
    alpha, beta = code.evaluation_points()
    # exactly D + 1 + 2a responders: the fewest the decoder accepts
    responders = list(range(1, 1 + code.min_responders()))
    assert len(responders) == code.degree + 1 + 2 * code.a
    zeros = responders[: code.degree]
    liars = responders[code.degree : code.degree + code.a + 1]
    framed = responders[code.degree + code.a + 1 :]
    assert len(liars) == code.a + 1 and len(framed) == code.a

    def p(x):
        return np.prod([x - alpha[z] for z in zeros], axis=0)

    direction = rng.standard_normal(SIDE * SIDE)
    received = {w: m for w, m in messages_of(code, partials).items() if w in responders}
    for w in liars:
        received[w] = received[w] + p(alpha[w]) * direction
    result = code.decode_result(received, SIDE * SIDE)
    impostor = direct(h, partials) + p(beta[0]) * direction
    np.testing.assert_allclose(result.gradient, impostor, rtol=1e-9, atol=1e-9)
    assert relative_error(result.gradient, direct(h, partials)) > 1e-3
    assert sorted(result.adversaries) == framed
    # with a liars only (one of them) the same decoder recovers h(sum G) and names the liar
    received = {w: m for w, m in messages_of(code, partials).items() if w in responders}
    received[liars[0]] = received[liars[0]] + p(alpha[liars[0]]) * direction
    result = code.decode_result(received, SIDE * SIDE)
    assert relative_error(result.gradient, direct(h, partials)) < 1e-9
    assert list(result.adversaries) == [liars[0]]


# -- decodability rule -------------------------------------------------------------------------
def test_too_few_responders_says_how_many():
    code = poly_code(8, 1, 1, [1.0, 0.5, 0.3])
    partials = np.random.default_rng(3).standard_normal((code.k, 9))
    messages = messages_of(code, partials)
    threshold = code.min_responders()
    with pytest.raises(NotDecodableError, match=rf"D \+ 1 \+ 2a = {threshold} responders") as info:
        code.decode({w: messages[w] for w in range(threshold - 2)}, 9)
    assert info.value.needed == 2
    assert code.is_decodable(range(threshold)) and not code.is_decodable(range(threshold - 1))
    with pytest.raises(ValueError, match="unknown message keys"):
        code.is_decodable([0, 99])


def test_weights_are_cached_per_responder_set(monkeypatch):
    code = poly_code(10, 2, 0, [1.0, 1.0, 0.5])
    partials = np.random.default_rng(4).standard_normal((code.k, 25))
    received = {w: m for w, m in messages_of(code, partials).items() if w not in (3, 7)}
    first = code.decode_result(received, 25)
    calls = []
    original = code._weights.get_or_compute
    monkeypatch.setattr(
        code._weights, "get_or_compute", lambda key, f: calls.append(key) or original(key, f)
    )
    second = code.decode(dict(reversed(received.items())), 25)
    assert np.array_equal(first.gradient, second)
    assert 1 <= first.condition < 1e3 and first.used == tuple(sorted(received))


def test_verify_reports_for_a_matrix_code():
    code = poly_code(7, 1, 1, [1.0, 1.0, 0.5])
    report = verify(code, exhaustive=True)
    assert report.passed() and report.patterns_checked == 7
    assert report.message_fraction == 1.0 and report.max_relative_error < 1e-12


def test_numerical_soundness_claim():
    limit = HeterogeneousPolyCode.numerically_sound_up_to
    assert limit is not None and 12 < limit <= 50
    s = max(1, limit // 4)  # the docstring's family at the stated limit
    code = poly_code(limit, s, 0, [1.0, 1.0, 0.5])
    assert verify(code, exhaustive=False, limit=20, length=49).max_relative_error < 1e-8
