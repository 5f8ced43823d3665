import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradcode.codes import NotDecodableError, build
from gradcode.codes.ye_abbe import CHEBYSHEV_SOUND_UP_TO, YeAbbe, chebyshev_points, paper_points
from tests.codes.harness import SOUND_TOLERANCE, assert_exact, independent_sum

FIG2_POINTS = (-2.0, -1.0, 0.0, 1.0, 2.0)
#: Fig. 2 prints every worker's message up to a factor; ours are these multiples of it
FIG2_SCALE = np.array([2.0, 1.0, 2.0, -1.0, 2.0])

# Fig. 2 of the paper (n = k = 5, d = 3, l = 2): coefficient of g_j(u), rows j = 1..5, one
# matrix per worker W1..W5. The extraction kept the magnitudes and most signs; the remaining
# signs follow from the figure's theta = (-2, -1, 0, 1, 2) (and agree with what survived).
FIG2A = [  # s = 2, m = 1: W_i sends a combination of g_j(0) (and the same of g_j(1))
    [1, 3, 6, 0, 0],
    [0, 2, 6, -3, 0],
    [0, 0, 1, -2, 1],
    [-2, 0, 0, 3, -6],
    [3, 1, 0, 0, 6],
]
FIG2B = [  # s = 1, m = 2: [coefficients of g_j(0)], [coefficients of g_j(1)]
    ([1, 3, 6, 0, 0], [-3, -3, 6, 0, 0]),
    ([0, 2, 6, -3, 0], [0, 0, 12, 3, 0]),
    ([0, 0, 1, -2, 1], [0, 0, 3, 0, -3]),
    ([-2, 0, 0, 3, -6], [0, 0, 0, 3, 12]),
    ([3, 1, 0, 0, 6], [3, 3, 0, 0, -6]),
]


def test_figure_2a_s2_m1():
    code = build("ye-abbe", n=5, d=3, s=2, m=1, points=FIG2_POINTS)
    encoding = code.encoding_matrix()[:, :, 0]
    np.testing.assert_allclose(encoding, FIG2_SCALE[:, None] * np.array(FIG2A), atol=1e-12)


def test_figure_2b_s1_m2():
    code = build("ye-abbe", n=5, d=3, s=1, m=2, points=FIG2_POINTS)
    assert code.message_length(2) == 1  # each worker transmits one scalar
    expected = np.array(FIG2B, dtype=float).transpose(0, 2, 1)  # (worker, j, u)
    np.testing.assert_allclose(
        code.encoding_matrix(), FIG2_SCALE[:, None, None] * expected, atol=1e-12
    )


def test_table_2_decoding_coefficients():
    # Table 2: the sum from 4 of the 5 messages of Fig. 2b, in the figure's scaling of f_i.
    # Legible in the extraction: straggler W1: (1/2 f2 - 2 f3 ..., -1/6 f2 + f3 ... + 1/3 f5);
    # straggler W3: (1/3 f1 ..., ... 1/6 f5); the f4 terms were lost.
    code = build("ye-abbe", n=5, d=3, s=1, m=2, points=FIG2_POINTS)
    used, coefficients, _ = code._coefficients((1, 2, 3, 4))
    assert used == (1, 2, 3, 4)
    in_figure_scale = coefficients * FIG2_SCALE[list(used)]
    np.testing.assert_allclose(
        in_figure_scale, [[1 / 2, -2, -1 / 2, 0], [-1 / 6, 1, 1 / 2, 1 / 3]], atol=1e-12
    )
    used, coefficients, _ = code._coefficients((0, 1, 3, 4))
    in_figure_scale = coefficients * FIG2_SCALE[list(used)]
    np.testing.assert_allclose(
        in_figure_scale, [[1 / 3, -1 / 6, 1 / 6, 1 / 3], [-1 / 6, 1 / 6, 1 / 6, 1 / 6]], atol=1e-12
    )


@pytest.mark.parametrize(
    ("n", "d", "s", "m", "points"),
    [
        (5, 3, 1, 2, "paper"),
        (8, 5, 2, 3, "paper"),
        (9, 9, 0, 9, "chebyshev"),
        (7, 1, 0, 1, "paper"),
    ],
)
def test_b_matrix_properties(n, d, s, m, points):
    code = build("ye-abbe", n=n, d=d, s=s, m=m, points=points)
    b = code.b_matrix()
    width = n - s
    assert b.shape == (m * n, width)
    # eq. (13): the last m columns are n stacked identities
    np.testing.assert_array_equal(b[:, width - m :], np.tile(np.eye(m), (n, 1)))
    # eq. (12): B [1, x, ..., x^(N-1)]^T evaluates the polynomials, i.e. the encoding
    vander = np.vander(code.thetas, width, increasing=True)  # (n, N)
    evaluated = (b @ vander.T).reshape(n, m, n).transpose(2, 0, 1)  # (worker, j, u)
    np.testing.assert_allclose(code.encoding_matrix(), evaluated, rtol=1e-9, atol=1e-9)
    # eq. (9): exact zeros where the worker lacks the partition, p_j(theta_i) != 0 elsewhere
    holds = code.assignment_matrix().astype(bool)
    assert np.all(code.encoding_matrix()[~holds] == 0)
    assert np.all(code.encoding_matrix()[holds][:, 0] != 0)
    assert code.loads().tolist() == [d] * n


def test_evaluation_points():
    np.testing.assert_array_equal(paper_points(4), [1, -1, 1.5, -1.5])
    np.testing.assert_array_equal(paper_points(5), [0, 1, -1, 1.5, -1.5])
    np.testing.assert_array_equal(build("ye-abbe", n=6, d=2, s=1, m=1).thetas, paper_points(6))
    cheb = chebyshev_points(9)
    expected = np.cos((2 * np.arange(9) + 1) * np.pi / 18)
    np.testing.assert_allclose(np.sort(cheb), np.sort(expected))
    assert abs(cheb[0]) == pytest.approx(np.max(np.abs(expected)))
    for count in range(2, 9):  # Leja: each point is farthest (in product) from the earlier ones
        products = [np.prod(np.abs(x - cheb[:count])) for x in cheb[count:]]
        assert np.prod(np.abs(cheb[count] - cheb[:count])) >= max(products, default=0) - 1e-12


def test_decode_exact_with_padding_and_extra_responders():
    code = build("ye-abbe", n=7, d=5, s=2, m=3)
    rng = np.random.default_rng(2)
    partials = rng.standard_normal((7, 31))  # 31 is not a multiple of m = 3
    for responders in [(0, 2, 3, 5, 6), (1, 2, 3, 4, 5, 6), tuple(range(7))]:
        messages = {i: code.encode(i, partials[list(code.partitions(i))]) for i in responders}
        assert all(message.shape == (11,) for message in messages.values())
        result = code.decode_result(messages, 31)
        np.testing.assert_allclose(result.gradient, independent_sum(partials), atol=1e-11)
        vander = np.vander(code.thetas[list(responders[:5])], increasing=True)
        assert result.condition == pytest.approx(np.linalg.cond(vander))


def test_extra_responders_use_the_lowest_indices():
    code = build("ye-abbe", n=12, d=3, s=1, m=2)  # N = 11: 10 and 11 sort before 2 by repr
    used, _, _ = code._coefficients(tuple(range(12)))
    assert used == tuple(range(11))


def test_too_few_responders():
    code = build("ye-abbe", n=6, d=4, s=2, m=2)
    assert code.is_decodable((0, 2, 3, 5)) and not code.is_decodable((0, 2, 3))
    with pytest.raises(NotDecodableError, match=r"ye-abbe needs any n - s = 4 workers; got 2") as e:
        code.decode({1: np.zeros(2), 4: np.zeros(2)}, 4)
    assert e.value.needed == 2 and e.value.candidates == (0, 2, 3, 5)


def test_d_above_s_plus_m_tolerates_d_minus_m():
    code = build("ye-abbe", n=8, d=5, s=1, m=2)
    assert code.s == 3 and code.requested_s == 1
    assert code.params() == {"n": 8, "d": 5, "s": 1, "m": 2, "points": "paper"}
    assert code.is_decodable((0, 3, 5, 6, 7))
    assert code.encoding_matrix().shape == (8, 8, 2)
    np.testing.assert_array_equal(
        code.encoding_matrix(), build("ye-abbe", n=8, d=5, s=3, m=2).encoding_matrix()
    )
    report = assert_exact(code)
    assert report.patterns_total == math.comb(8, 3)


def test_solve_is_cached_per_responder_set(monkeypatch):
    code = build("ye-abbe", n=6, d=3, s=1, m=2)
    calls = []
    original = YeAbbe._solve
    monkeypatch.setattr(
        YeAbbe, "_solve", lambda self, keys: calls.append(keys) or original(self, keys)
    )
    messages = {i: np.ones(4) for i in (0, 1, 2, 4, 5)}
    code.decode(messages, 8)
    code.decode(dict(reversed(messages.items())), 8)
    assert calls == [(0, 1, 2, 4, 5)]


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"n": 5, "d": 3, "s": 2, "m": 2}, r"ye-abbe needs d >= s \+ m \(got d=3, s=2, m=2\)"),
        ({"n": 4, "d": 5, "s": 1, "m": 1}, r"ye-abbe needs d <= n \(got n=4, d=5\)"),
        ({"n": 4, "d": 2, "s": 1, "m": 0}, r"ye-abbe needs m >= 1 \(got m=0\)"),
        ({"n": 4, "d": 0, "s": 0, "m": 1}, r"ye-abbe needs d >= 1 \(got d=0\)"),
        ({"n": 4, "d": 2, "s": -1, "m": 1}, r"ye-abbe needs s >= 0 \(got s=-1\)"),
        ({"n": 4, "d": 2, "s": 1, "m": 1, "points": "equispaced"}, r"points in \('paper', "),
        ({"n": 4, "d": 2, "s": 1, "m": 1, "points": (0, 1, 2)}, "needs n = 4 finite points"),
        ({"n": 3, "d": 2, "s": 1, "m": 1, "points": (0, 1, np.inf)}, "needs n = 3 finite"),
        ({"n": 3, "d": 2, "s": 1, "m": 1, "points": (0, 1, 1)}, "needs distinct points"),
    ],
)
def test_invalid_parameters(params, match):
    with pytest.raises(ValueError, match=match):
        build("ye-abbe", **params)


def test_grid():
    grid = list(YeAbbe.parameter_grid(12))
    plain = [p for p in grid if "points" not in p and p["d"] == p["s"] + p["m"]]
    assert len(plain) == sum(n * (n + 1) // 2 for n in range(1, 13))
    assert any(p.get("points") == "chebyshev" for p in grid)
    assert any(p["d"] > p["s"] + p["m"] for p in grid)
    assert all(p["n"] <= 5 for p in YeAbbe.parameter_grid(5))


@pytest.mark.parametrize(("n", "d", "s", "m"), [(20, 6, 3, 3), (22, 14, 4, 10), (40, 4, 1, 3)])
def test_chebyshev_points_stay_accurate_further(n, d, s, m):
    assert n <= CHEBYSHEV_SOUND_UP_TO or m <= 3
    code = build("ye-abbe", n=n, d=d, s=s, m=m, points="chebyshev")
    assert_exact(code, exhaustive=False, limit=20, tolerance=SOUND_TOLERANCE)


@st.composite
def parameters(draw):
    n = draw(st.integers(1, 12))
    d = draw(st.integers(1, n))
    m = draw(st.integers(1, d))
    s = draw(st.integers(0, d - m))
    points = draw(st.sampled_from(["paper", "chebyshev"]))
    return {"n": n, "d": d, "s": s, "m": m, "points": points}


@settings(max_examples=50, deadline=None)
@given(params=parameters(), seed=st.integers(0, 1000))
def test_random_parameters_decode_exactly(params, seed):
    code = build("ye-abbe", **params)
    assert code.s == params["d"] - params["m"] >= params["s"]
    assert build("ye-abbe", **code.params()).params() == code.params()
    assert_exact(code, exhaustive=code.count_patterns() <= 200, limit=40, seed=seed)
