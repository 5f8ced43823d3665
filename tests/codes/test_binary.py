"""Binary gradient coding (paper 003): construction, O(n) decoding, load spread, Section VI."""

import functools
import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradcode.codes import NotDecodableError, build
from gradcode.codes.binary import (
    BinaryCode,
    congruence_classes,
    equalizing_partitions,
    heterogeneous_allocation,
    type_loads,
)
from gradcode.codes.verify import verify
from tests.codes.harness import assert_exact, independent_sum


@functools.cache
def spread(n, s):
    """Paper's Sec. V quantities for k = n: (l, r, max load - min load)."""
    loads = BinaryCode(n, s).loads()
    ell, r = divmod(n, s + 1)
    return ell, r, int(loads.max() - loads.min())


@st.composite
def code_params(draw, max_n=30, heterogeneous=False):
    n = draw(st.integers(1, max_n))
    s = draw(st.integers(0, n - 1))
    smallest = -(-n // (s + 1))
    k = draw(st.one_of(st.none(), st.integers(smallest, 3 * n)))
    times = None
    if heterogeneous:
        times = tuple(draw(st.lists(st.integers(1, 6), min_size=n, max_size=n)))
    return {"n": n, "s": s, "k": k, "times": times}


# -- Section III: the encoding matrix ---------------------------------------------------------
def test_worked_example_n11_s2():
    # n = 11 = 3 * 3 + 2: classes C0, C1 have 4 members and split 11 as 3 + 3 + 3 + 2,
    # C2 has 3 members and splits 11 as 4 + 4 + 3 (the paper's own example matrix was lost
    # in the extraction; this one follows its Algorithms 1 and 2 by hand).
    code = build("binary", n=11, s=2)
    expected = [
        (0, 1, 2),
        (0, 1, 2),
        (0, 1, 2, 3),
        (3, 4, 5),
        (3, 4, 5),
        (4, 5, 6, 7),
        (6, 7, 8),
        (6, 7, 8),
        (8, 9, 10),
        (9, 10),
        (9, 10),
    ]
    assert [code.partitions(i) for i in range(11)] == expected
    assert code.loads().tolist() == [3, 3, 4, 3, 3, 4, 3, 3, 3, 2, 2]
    assert code.classes == ((0, 3, 6, 9), (1, 4, 7, 10), (2, 5, 8))
    matrix = code.encoding_matrix()[:, :, 0]
    assert set(np.unique(matrix)) == {0.0, 1.0}
    np.testing.assert_array_equal(matrix, code.assignment_matrix())
    assert int(matrix.sum()) == 11 * 3  # k (s + 1) partial gradients, as in the paper


def test_divisible_case_is_fractional_repetition():
    code = build("binary", n=6, s=2)
    assert [code.partitions(i) for i in range(6)] == [(0, 1, 2)] * 3 + [(3, 4, 5)] * 3
    assert (code.n, code.k, code.s, code.a, code.m) == (6, 6, 2, 0, 1)


def test_extreme_s():
    assert [build("binary", n=4, s=0).partitions(i) for i in range(4)] == [(0,), (1,), (2,), (3,)]
    full = build("binary", n=4, s=3)
    assert all(full.partitions(i) == (0, 1, 2, 3) for i in range(4))
    assert full.is_decodable([2])


@settings(max_examples=50, deadline=None)
@given(code_params(max_n=40))
def test_every_class_covers_every_partition_once_in_contiguous_blocks(params):
    code = BinaryCode(**params)
    assert code.classes == congruence_classes(code.n, code.s)
    assert code.loads().min() >= 1
    for members in code.classes:
        blocks = [code.partitions(i) for i in members]
        assert [p for block in blocks for p in block] == list(range(code.k))
        loads = [len(block) for block in blocks]
        assert max(loads) - min(loads) <= 1
        assert loads == sorted(loads, reverse=True)  # the first members take the extra one
    assert code.loads().sum() == code.k * (code.s + 1)
    matrix = code.encoding_matrix()
    assert matrix.shape == (code.n, code.k, 1)
    assert set(np.unique(matrix)) <= {0.0, 1.0}


# -- Section IV: decoding ---------------------------------------------------------------------
@pytest.mark.parametrize(
    "params",
    [
        {"n": 11, "s": 2},
        {"n": 10, "s": 3},
        {"n": 7, "s": 5},
        {"n": 9, "s": 2, "k": 20},
        {"n": 12, "s": 4, "k": 5},
        {"n": 12, "s": 2, "k": 10, "times": (1.0,) * 6 + (1.5,) * 6},
    ],
)
def test_exact_on_every_pattern(params):
    report = assert_exact(build("binary", **params), exhaustive=True)
    assert report.max_relative_error < 1e-13


@settings(max_examples=50, deadline=None)
@given(code_params(max_n=40), st.randoms(use_true_random=False))
def test_decode_of_any_n_minus_s_is_the_plain_sum(params, rand):
    code = BinaryCode(**params)
    rng = np.random.default_rng(rand.randrange(2**32))
    partials = rng.standard_normal((code.k, 23))
    alive = sorted(rand.sample(range(code.n), code.n - code.s))
    messages = {i: code.encode(i, partials[list(code.partitions(i))]) for i in alive}
    assert code.is_decodable(alive)
    got = code.decode(messages, 23)
    np.testing.assert_allclose(got, independent_sum(partials), rtol=1e-12, atol=1e-12)
    # the result is literally the sum of one class's messages, in member order
    members = code.classes[code.decodable_class(alive)]
    expected = functools.reduce(np.add, [messages[i] for i in members])
    np.testing.assert_array_equal(got, expected)


def test_integer_partials_decode_without_any_rounding():
    code = build("binary", n=13, s=4)
    rng = np.random.default_rng(3)
    partials = rng.integers(-(2**20), 2**20, size=(code.k, 50)).astype(np.float64)
    messages = {i: code.encode(i, partials[list(code.partitions(i))]) for i in range(13)}
    for dead in itertools.combinations(range(13), 4):
        got = code.decode({i: m for i, m in messages.items() if i not in dead}, 50)
        np.testing.assert_array_equal(got, partials.sum(axis=0))


def test_decode_reads_only_the_chosen_class():
    code = build("binary", n=10, s=2)  # classes (0, 3, 6, 9), (1, 4, 7), (2, 5, 8)
    partials = np.random.default_rng(0).standard_normal((10, 5))
    messages = {i: code.encode(i, partials[list(code.partitions(i))]) for i in (1, 4, 7)}
    messages.update({i: np.full(5, np.nan) for i in (0, 2, 3)})
    np.testing.assert_allclose(code.decode(messages, 5), partials.sum(axis=0), rtol=1e-12)


def test_encode_is_the_plain_sum_of_partials():
    code = build("binary", n=5, s=1)
    partials = np.random.default_rng(1).standard_normal((code.load(2), 7))
    np.testing.assert_array_equal(code.encode(2, partials), partials[0] + partials[1])
    with pytest.raises(ValueError, match=r"worker 2 needs partials of shape \(2, l\)"):
        code.encode(2, partials[:1])


def test_smaller_classes_are_searched_first():
    code = build("binary", n=11, s=2)  # C2 has 3 members, C0 and C1 have 4
    assert code.decodable_class(range(11)) == 2
    assert code.decodable_class([0, 3, 6, 9, 1]) == 0
    assert code.decodable_class([0, 3, 6, 1, 4, 7]) is None


def brute_force_decodable(code, keys):
    return any(set(members) <= set(keys) for members in code.classes)


@pytest.mark.parametrize(("n", "s"), [(7, 2), (8, 3), (9, 1), (10, 4), (6, 5)])
def test_is_decodable_is_exactly_some_class_complete(n, s):
    code = build("binary", n=n, s=s)
    for size in range(n + 1):
        for keys in itertools.combinations(range(n), size):
            assert code.is_decodable(keys) == brute_force_decodable(code, keys)
            if size >= n - s:
                assert code.is_decodable(keys)  # pigeonhole
    # a smallest class alone is enough, long before n - s responders
    ell = n // (s + 1)
    assert code.is_decodable(code.classes[-1]) and len(code.classes[-1]) == ell


def test_not_decodable_names_the_closest_class_and_what_it_lacks():
    code = build("binary", n=11, s=2)
    with pytest.raises(
        NotDecodableError, match=r"class 2 \(workers \[2, 5, 8\]\).*workers \[8\]"
    ) as info:
        code.decode({i: np.zeros(4) for i in (0, 3, 2, 5, 1)}, 4)
    assert info.value.needed == 1 and info.value.candidates == (8,)
    # ties: every worker that brings some closest class nearer is a candidate
    with pytest.raises(NotDecodableError) as info:
        code.decode({0: np.zeros(4), 1: np.zeros(4)}, 4)
    assert info.value.needed == 3  # every class lacks three members
    assert info.value.candidates == (2, 3, 4, 5, 6, 7, 8, 9, 10)
    with pytest.raises(NotDecodableError) as info:
        code.decode({}, 4)
    assert info.value.needed == 3 and info.value.candidates == (2, 5, 8)
    with pytest.raises(NotDecodableError) as info:
        build("binary", n=6, s=1).decode({0: np.zeros(2), 1: np.zeros(2)}, 2)
    assert info.value.needed == 2 and info.value.candidates == (2, 3, 4, 5)


def test_decode_rejects_unknown_keys_and_wrong_shapes():
    code = build("binary", n=5, s=1)
    with pytest.raises(ValueError, match=r"unknown message key 7"):
        code.is_decodable([0, 7])
    with pytest.raises(ValueError, match=r"unknown message key \(0, 1\)"):
        code.decode({(0, 1): np.zeros(3)}, 3)
    with pytest.raises(ValueError, match=r"message of worker 4 must have shape \(3,\)"):
        code.decode({0: np.zeros(3), 2: np.zeros(3), 4: np.zeros(1)}, 3)


def test_round_off_level_error_for_every_n_up_to_50():
    worst = 0.0
    for n in range(1, 51):
        for s in sorted({0, 1, n // 3, n // 2, n - 1} & set(range(n))):
            report = verify(build("binary", n=n, s=s), exhaustive=False, limit=8, seed=n)
            assert report.passed(), report.failures[:2]
            worst = max(worst, report.max_relative_error)
    assert worst < 1e-13
    assert BinaryCode.numerically_sound_up_to is None


# -- Section V: close-to-uniform loads --------------------------------------------------------
ALL_UP_TO_60 = [(n, s) for n in range(1, 61) for s in range(n)]


def test_load_spread_closed_form_and_optimality_for_all_n_up_to_60():
    for n, s in ALL_UP_TO_60:
        ell, r, delta = spread(n, s)
        if r == 0:
            assert delta == 0
            continue
        assert delta == math.ceil(r / ell) + math.ceil((s + 1 - r) / (ell + 1)), (n, s)
        # Proposition 3: no assignment in which every class partitions the data does better,
        # since some member of a class of l gets ceil(n / l) and one of l + 1 floor(n / (l + 1))
        assert delta == math.ceil(n / ell) - n // (ell + 1)
        assert delta >= 2  # uniform iff (s + 1) | n, and a spread of 1 never happens


def test_load_spread_regimes_of_section_v():
    for n, s in ALL_UP_TO_60:
        ell, r, delta = spread(n, s)
        if ell >= s:
            assert delta <= 2, (n, s)
        if ell == s - 1 and r:
            assert (delta == 3) == (r == s), (n, s)
        if ell == s - 2 and s >= 4 and r:
            assert (delta == 3) == (r in {1, s - 1, s}), (n, s)
            assert delta <= 3
        if 2 * ell >= s:
            assert delta <= 3, (n, s)
    # tight: below l = s / 2 some remainder exceeds 3 (the scheme's stated drawback)
    assert spread(7, 5)[2] == 4 and spread(7, 3)[2] == 4
    for s in range(3, 20):
        ell = math.ceil(s / 2) - 1
        worst = max(spread(ell * (s + 1) + r, s)[2] for r in range(1, s + 1))
        assert worst >= 4, s


# -- Section VI: heterogeneous workers --------------------------------------------------------
def test_type_loads_solve_the_papers_system():
    w = type_loads(6, 1, counts=(4, 4), times=(1, 2))
    assert w == (Fraction(2), Fraction(1))
    w = type_loads(10, 2, counts=(5, 4, 3), times=(1, Fraction(3, 2), 4))
    assert sum(c * x for c, x in zip((5, 4, 3), w, strict=True)) == 10 * 3
    assert len({x * t for x, t in zip(w, (1, Fraction(3, 2), 4), strict=True)}) == 1


@pytest.mark.parametrize(
    ("s", "tau", "t"),
    [(1, (4, 4), (1, 2)), (2, (3, 3), (1, 3)), (2, (6, 6), (2, 3)), (3, (8, 4), (2, 5))],
)
def test_two_types_get_the_papers_loads_and_equal_finishing_times(s, tau, t):
    n = sum(tau)
    times = (t[0],) * tau[0] + (t[1],) * tau[1]
    # t2 / t1 = p / q in lowest terms: w1 : w2 = p : q, least k = (tau1 p + tau2 q) / (s + 1)
    ratio = Fraction(t[1], t[0])
    k = equalizing_partitions(n, s, times)
    assert k == (tau[0] * ratio.numerator + tau[1] * ratio.denominator) // (s + 1)
    code = build("binary", n=n, s=s, k=k, times=times)
    w = type_loads(k, s, tau, t)
    assert code.loads().tolist() == [int(w[0])] * tau[0] + [int(w[1])] * tau[1]
    finish = code.expected_times()
    assert np.all(finish == finish[0])
    assert_exact(code, exhaustive=True)
    # any multiple of k equalises too; the rounding is exact there
    double = build("binary", n=n, s=s, k=2 * k, times=times)
    assert np.all(double.expected_times() == 2 * finish[0])


@settings(max_examples=50, deadline=None)
@given(code_params(max_n=24, heterogeneous=True))
def test_heterogeneous_rounding_keeps_classes_and_equalises_within_rounding(params):
    code = BinaryCode(**params)
    times = code.times()
    finish = code.expected_times()
    for members in code.classes:
        members = list(members)
        assert [p for i in members for p in code.partitions(i)] == list(range(code.k))
        target = code.k / np.sum(1 / times[members])  # the real-valued equal finishing time
        assert finish[members].max() <= target + times[members].max() + 1e-9
        if np.all(target / times[members] >= 1):
            # no share below one partition, so the "one partition each" floor never binds and
            # each load is within one partition of its real-valued share
            for i in members:
                assert finish[i] > target - times[i] - 1e-9
    # decoding is unchanged
    partials = np.random.default_rng(0).standard_normal((code.k, 9))
    alive = list(range(code.s, code.n))
    messages = {i: code.encode(i, partials[list(code.partitions(i))]) for i in alive}
    np.testing.assert_allclose(code.decode(messages, 9), partials.sum(axis=0), atol=1e-11)


def compositions(total, parts):
    """All ways to write ``total`` as ``parts`` positive integers."""
    for cuts in itertools.combinations(range(1, total), parts - 1):
        bounds = (0, *cuts, total)
        yield [b - a for a, b in itertools.pairwise(bounds)]


@settings(max_examples=50, deadline=None)
@given(
    st.integers(2, 8).flatmap(
        lambda n: st.tuples(
            st.just(n),
            st.integers(0, n - 1),
            st.lists(st.sampled_from([1, 1.5, 2, 3, 7]), min_size=n, max_size=n),
            st.integers(0, 6),
        )
    )
)
def test_heterogeneous_loads_minimise_each_class_finishing_time(case):
    n, s, times, extra = case
    k = -(-n // (s + 1)) + extra
    code = BinaryCode(n, s, k=k, times=times)
    for members in code.classes:
        t = [Fraction(str(times[i])) for i in members]
        best = min(
            max(w * ti for w, ti in zip(ws, t, strict=True)) for ws in compositions(k, len(members))
        )
        got = max(len(code.partitions(i)) * ti for i, ti in zip(members, t, strict=True))
        assert got == best


def test_equal_times_reproduce_the_homogeneous_code():
    for n, s in [(11, 2), (10, 3), (7, 5)]:
        plain = build("binary", n=n, s=s)
        same = build("binary", n=n, s=s, times=[2.5] * n)
        assert [plain.partitions(i) for i in range(n)] == [same.partitions(i) for i in range(n)]
        np.testing.assert_array_equal(heterogeneous_allocation(n, s), plain.loads())


def test_three_types_equalised():
    times = (1, 1, 1, 2, 2, 2, 4, 4, 4)
    assert equalizing_partitions(9, 2, times) == 7
    code = build("binary", n=9, s=2, k=7, times=times)
    assert code.loads().tolist() == [4, 4, 4, 2, 2, 2, 1, 1, 1]
    assert code.expected_times().tolist() == [4.0] * 9
    assert code.params() == {"n": 9, "s": 2, "k": 7, "times": times}


# -- parameters ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"n": 3, "s": 3}, r"binary needs s < n \(got n=3, s=3\)"),
        ({"n": 0, "s": 0}, r"binary needs n >= 1 \(got n=0\)"),
        ({"n": 4, "s": -1}, r"binary needs s >= 0 \(got s=-1\)"),
        ({"n": 4.0, "s": 1}, r"binary needs an integer n \(got n=4.0\)"),
        ({"n": 7, "s": 2, "k": 2}, r"k >= ceil\(n / \(s \+ 1\)\).*\(got n=7, s=2, k=2\)"),
        ({"n": 3, "s": 1, "times": (1, 2)}, r"len\(times\) == n \(got len\(times\)=2, n=3\)"),
        ({"n": 2, "s": 1, "times": (1, 0)}, r"binary needs times\[1\] > 0 \(got times\[1\]=0\)"),
        ({"n": 2, "s": 1, "times": (1, float("nan"))}, r"needs finite times\[1\]"),
        ({"n": 2, "s": 1, "times": (1, "2")}, r"needs numeric times\[1\]"),
        ({"n": 2, "s": 1, "times": "12"}, r"needs times as a sequence of n numbers"),
    ],
)
def test_invalid_parameters_name_the_constraint(params, match):
    with pytest.raises(ValueError, match=match):
        build("binary", **params)


def test_equalizing_partitions_and_type_loads_validate():
    with pytest.raises(ValueError, match=r"s < n \(got n=2, s=2\)"):
        equalizing_partitions(2, 2, (1, 1))
    with pytest.raises(ValueError, match=r"one time per group \(got 2 counts, 1 times\)"):
        type_loads(4, 1, (2, 2), (1,))


def test_parameter_grid_covers_every_n_s_and_builds():
    grid = list(BinaryCode.parameter_grid(12))
    pairs = {(p["n"], p["s"]) for p in grid if set(p) == {"n", "s"}}
    assert pairs == {(n, s) for n in range(1, 13) for s in range(n)}
    assert any("times" in p for p in grid) and any("k" in p for p in grid)
    for params in grid:
        code = build("binary", **params)
        assert code.n <= 12
        assert code.params()["n"] == params["n"]
    assert all(p["n"] <= 5 for p in BinaryCode.parameter_grid(5))
    assert any(p["n"] > 12 for p in BinaryCode.parameter_grid(50))


def test_repr_and_params_round_trip():
    code = build("binary", n=8, s=1, k=6, times=np.array([1.0] * 4 + [2.0] * 4))
    assert repr(code).startswith("BinaryCode(n=8, s=1, k=6, times=(1.0, 1.0")
    again = build("binary", **code.params())
    assert [again.partitions(i) for i in range(8)] == [code.partitions(i) for i in range(8)]
    partials = np.ones((6, 3))
    messages = {i: code.encode(i, partials[list(code.partitions(i))]) for i in range(8)}
    assert code.decode_result(messages, 3).condition == 1.0
