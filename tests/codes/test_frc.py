import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradcode.codes import LinearCode, NotDecodableError, build
from tests.codes.harness import assert_exact, independent_sum


def test_groups_hold_the_same_block_and_send_its_plain_sum():
    code = build("frc", n=6, s=2)
    assert (code.n, code.k, code.s, code.a, code.m) == (6, 6, 2, 0, 1)
    assert [code.partitions(i) for i in range(6)] == [(0, 1, 2)] * 3 + [(3, 4, 5)] * 3
    expected = np.kron(np.eye(2), np.ones((3, 3)))
    np.testing.assert_array_equal(code.encoding_matrix()[:, :, 0], expected)
    partials = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(code.encode(1, partials), partials.sum(axis=0))


def test_one_responder_per_group_is_enough():
    code = build("frc", n=6, s=1)  # groups {0, 1}, {2, 3}, {4, 5}
    rng = np.random.default_rng(3)
    partials = rng.standard_normal((6, 13))
    responders = (1, 2, 5)  # only 3 < n - s = 5 workers
    assert code.is_decodable(responders)
    messages = {i: code.encode(i, partials[list(code.partitions(i))]) for i in responders}
    result = code.decode_result(messages, 13)
    np.testing.assert_allclose(result.gradient, independent_sum(partials), atol=1e-12)
    assert result.condition == 1.0


def test_missing_group_names_the_groups_and_their_workers():
    code = build("frc", n=6, s=1)
    assert not code.is_decodable((0, 1, 2, 3))
    with pytest.raises(NotDecodableError, match=r"groups \[2\] have none") as info:
        code.decode({i: np.zeros(5) for i in (0, 1, 2, 3)}, 5)
    assert info.value.needed == 1 and info.value.candidates == (4, 5)
    with pytest.raises(NotDecodableError, match=r"groups \[0, 2\]") as info:
        code.decode({3: np.zeros(5)}, 5)
    assert info.value.needed == 2 and info.value.candidates == (0, 1, 4, 5)


@pytest.mark.parametrize(("n", "s"), [(6, 1), (6, 2), (8, 3), (9, 2)])
def test_combinatorial_rule_matches_the_rank_rule(n, s):
    code = build("frc", n=n, s=s)
    for size in range(1, n + 1):
        for keys in itertools.combinations(range(n), size):
            try:
                LinearCode._solve(code, keys)  # generic least squares on the encoding rows
                by_rank = True
            except NotDecodableError:
                by_rank = False
            assert code.is_decodable(keys) == by_rank, keys


def test_any_n_minus_s_responders_decode():
    code = build("frc", n=8, s=3)
    for stragglers in itertools.combinations(range(8), 3):
        assert code.is_decodable(set(range(8)) - set(stragglers))


def test_lowest_responder_of_each_group_is_used():
    code = build("frc", n=12, s=1)
    used, coefficients, _ = code._coefficients((11, 10, 3, 9, 0, 5, 7, 2))
    assert used == (0, 2, 5, 7, 9, 10)
    np.testing.assert_array_equal(coefficients, np.ones((1, 6)))


def test_cached_decode_reuses_the_coefficients():
    code = build("frc", n=4, s=1)
    messages = {0: np.ones(3), 3: 2 * np.ones(3)}
    np.testing.assert_array_equal(code.decode(messages, 3), 3 * np.ones(3))
    entry = code._coefficients((0, 3))
    code.decode(messages, 3)
    assert code._coefficients((3, 0)) is entry


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"n": 7, "s": 2}, r"frc needs \(s \+ 1\) \| n \(got n=7, s=2\)"),
        ({"n": 4, "s": 4}, r"frc needs \(s \+ 1\) \| n \(got n=4, s=4\)"),
        ({"n": 0, "s": 0}, r"frc needs n >= 1 \(got n=0\)"),
        ({"n": 4, "s": -1}, r"frc needs s >= 0 \(got s=-1\)"),
        ({"n": 4, "s": 1.0}, "frc needs an integer s"),
    ],
)
def test_invalid_parameters(params, match):
    with pytest.raises(ValueError, match=match):
        build("frc", **params)


def test_grid_is_every_divisor_pair():
    grid = list(build("frc", n=1, s=0).parameter_grid(12))
    assert {(p["n"], p["s"]) for p in grid} == {
        (n, s) for n in range(1, 13) for s in range(n) if n % (s + 1) == 0
    }
    assert build("frc", **grid[-1]).params() == grid[-1]


@settings(max_examples=40, deadline=None)
@given(groups=st.integers(1, 6), s=st.integers(0, 5), seed=st.integers(0, 2**32 - 1))
def test_random_codes_decode_exactly(groups, s, seed):
    code = build("frc", n=groups * (s + 1), s=s)
    assert_exact(code, exhaustive=code.count_patterns() <= 300, limit=50, seed=seed % 1000)
    rng = np.random.default_rng(seed)
    keys = [i for i in range(code.n) if rng.random() < 0.5]
    covered = {i // (s + 1) for i in keys}
    assert code.is_decodable(keys) == (len(covered) == groups)
