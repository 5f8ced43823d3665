import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradcode.codes import NotDecodableError, available, build
from gradcode.codes.combine import split_chunks
from tests.codes.harness import assert_exact, independent_sum


def test_available_lists_every_scheme_of_the_issue():
    assert set(available()) == {
        "uncoded",
        "ignore-stragglers",
        "frc",
        "crc",
        "ye-abbe",
        "binary",
        "heterogeneous",
        "heterogeneous-poly",
        "berrut",
        "gc-mmc",
        "coded-reduce",
        "draco-repetition",
        "draco-cyclic",
        "detox",
        "byzshield",
        "lcc",
        "ring-allreduce",
    }


def test_unknown_scheme_names_the_alternatives():
    with pytest.raises(ValueError, match=r"unknown scheme 'nope'.*uncoded"):
        build("nope")


def test_unknown_parameter_names_the_scheme():
    with pytest.raises(ValueError, match=r"uncoded:.*'q'"):
        build("uncoded", n=3, q=1)


@pytest.mark.parametrize("n", [1, 2, 7])
def test_uncoded_exact_and_needs_everyone(n):
    code = build("uncoded", n=n)
    assert (code.n, code.k, code.s, code.a, code.m) == (n, n, 0, 0, 1)
    assert_exact(code)
    if n > 1:
        with pytest.raises(NotDecodableError) as info:
            code.decode({i: np.zeros(3) for i in range(1, n)}, 3)
        assert info.value.needed == 1 and info.value.candidates == (0,)


def test_ignore_stragglers_sums_what_arrived():
    code = build("ignore-stragglers", n=5, s=2)
    rng = np.random.default_rng(1)
    partials = rng.standard_normal((5, 11))
    got = code.decode({i: code.encode(i, partials[[i]]) for i in (0, 3, 4)}, 11)
    np.testing.assert_allclose(got, independent_sum(partials[[0, 3, 4]]), rtol=1e-12)
    with pytest.raises(NotDecodableError, match="waits for n - s = 3"):
        code.decode({0: partials[0]}, 11)
    scaled = build("ignore-stragglers", n=5, s=2, rescale=True)
    got = scaled.decode({i: partials[i] for i in (0, 3, 4)}, 11)
    np.testing.assert_allclose(got, independent_sum(partials[[0, 3, 4]]) * 5 / 3, rtol=1e-12)


def test_split_chunks_pads_with_zeros():
    chunks = split_chunks(np.arange(10.0).reshape(2, 5), 2)
    assert chunks.shape == (2, 2, 3)
    assert chunks[0, 1, 2] == 0 and chunks[1, 1, 1] == 9


def test_parameter_errors_name_constraint_and_values():
    with pytest.raises(ValueError, match=r"ignore-stragglers needs s < n \(got n=3, s=3\)"):
        build("ignore-stragglers", n=3, s=3)
    with pytest.raises(ValueError, match="integer n"):
        build("uncoded", n=2.5)


def test_linear_combination_in_place_on_row_views():
    from gradcode.codes.base import linear_combination

    rng = np.random.default_rng(3)
    vectors = [rng.standard_normal(50) for _ in range(4)]
    out = np.full((2, 50), np.nan)
    for row, coefficients in enumerate(([0.0, 1.0, -2.5, 1.0], [0.0, 0.0, 0.0, 0.0])):
        linear_combination(out[row], np.array(coefficients), vectors)
        expected = sum(c * v for c, v in zip(coefficients, vectors, strict=True))
        np.testing.assert_allclose(out[row], expected, rtol=1e-14, atol=1e-14)


@pytest.mark.parametrize(
    ("m", "count", "width"),
    [(1, 4, 50), (2, 3, 9), (2, 7, 3001), (3, 5, 7), (4, 3, 9000), (9, 40, 8193)],
)
def test_combine_chunks_reads_every_vector_once_and_matches_the_sums(monkeypatch, m, count, width):
    from gradcode.codes import combine

    # small blocks (1024 columns): the widths above span one, several and a ragged last block;
    # m = 1 takes linear_combination, m >= 2 the gathered blocks
    monkeypatch.setattr(combine, "CHUNK_BLOCK_BYTES", 8 * 1024 * count)
    assert combine.BLOCKED_FROM_CHUNKS == 2
    rng = np.random.default_rng(m * 100 + count)
    vectors = [rng.standard_normal(width) for _ in range(count)]
    coefficients = rng.standard_normal((m, count))
    coefficients[0, 0] = 0.0
    out = combine.combine_chunks(np.full((m, width), np.nan), coefficients, vectors)
    for chunk in range(m):
        expected = sum(float(c) * v for c, v in zip(coefficients[chunk], vectors, strict=True))
        np.testing.assert_allclose(out[chunk], expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize(("m", "count", "width"), [(2, 3, 9), (4, 7, 3001), (9, 40, 8193)])
def test_combine_chunks_multiplies_consecutive_rows_in_place(monkeypatch, m, count, width):
    from gradcode.codes import combine

    # the rows of one matrix (past a header, in a shuffled order, with unused rows around them)
    # are multiplied without a gather: a spy on np.concatenate sees no call
    monkeypatch.setattr(combine, "ROWS_BLOCK_COLUMNS", 1024)
    rng = np.random.default_rng(m * 100 + count)
    matrix = rng.standard_normal((count + 3, 5 + width))
    order = rng.permutation(count) + 1
    vectors = [matrix[row, 5:] for row in order]
    coefficients = rng.standard_normal((m, count))
    gathers = []
    real = combine.np.concatenate
    monkeypatch.setattr(
        combine.np, "concatenate", lambda *a, **k: gathers.append(1) or real(*a, **k)
    )
    out = combine.combine_chunks(np.full((m, width), np.nan), coefficients, vectors)
    assert not gathers
    for chunk in range(m):
        expected = sum(float(c) * v for c, v in zip(coefficients[chunk], vectors, strict=True))
        np.testing.assert_allclose(out[chunk], expected, rtol=1e-12, atol=1e-12)


def test_consecutive_rows_are_recognised_only_when_they_are_rows_of_one_matrix():
    from gradcode.codes.base import consecutive_rows

    matrix = np.arange(5 * 8, dtype=float).reshape(5, 8)
    found = consecutive_rows([matrix[3, 2:], matrix[1, 2:], matrix[2, 2:]])
    assert found is not None
    view, order = found
    assert np.shares_memory(view, matrix)
    np.testing.assert_array_equal(view, matrix[1:4, 2:])
    np.testing.assert_array_equal(order, [1, 2, 0])
    assert consecutive_rows([matrix[0, 3:], matrix[2, 3:], matrix[4, 3:]]) is not None
    refused = {
        "a gap": [matrix[0], matrix[2], matrix[3]],
        "a row twice": [matrix[1], matrix[1]],
        "other lengths": [matrix[0, 2:], matrix[1, 3:]],
        "overlapping": [matrix.reshape(-1)[0:10], matrix.reshape(-1)[4:14]],
        "copies": [matrix[0].copy(), matrix[1].copy()],
        "two matrices": [matrix[0], matrix.copy()[1]],
        "strided rows": [matrix[0, ::2], matrix[1, ::2]],
        "columns": [matrix[:, 0], matrix[:, 1]],
    }
    for name, vectors in refused.items():
        assert consecutive_rows(vectors) is None, name


def test_decode_rejects_messages_of_the_wrong_length():
    code = build("uncoded", n=2)
    with pytest.raises(ValueError, match=r"message 1 has shape \(4,\), expected \(5,\)"):
        code.decode({0: np.zeros(5), 1: np.zeros(4)}, 5)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 30), s=st.integers(0, 29), length=st.integers(1, 50))
def test_baselines_hypothesis(n, s, length):
    s = min(s, n - 1)
    rng = np.random.default_rng(n * 100 + s)
    partials = rng.standard_normal((n, length))
    uncoded = build("uncoded", n=n)
    got = uncoded.decode({i: uncoded.encode(i, partials[[i]]) for i in range(n)}, length)
    np.testing.assert_allclose(got, independent_sum(partials), rtol=1e-12, atol=1e-12)
    sgd = build("ignore-stragglers", n=n, s=s)
    alive = sorted(rng.choice(n, size=n - s, replace=False))
    got = sgd.decode({i: sgd.encode(i, partials[[i]]) for i in alive}, length)
    np.testing.assert_allclose(got, independent_sum(partials[alive]), rtol=1e-12, atol=1e-12)


def test_uncoded_keeps_no_identity_matrix():
    """8 n^2 bytes at n workers (800 MB at 10,000): built when asked for, never stored."""
    code = build("uncoded", n=20000)
    assert all(getattr(value, "nbytes", 0) < 10**6 for value in vars(code).values()), (
        "an n x n array is stored"
    )
    small = build("uncoded", n=4)
    np.testing.assert_array_equal(small.encoding_matrix()[:, :, 0], np.eye(4))
    partials = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(small.encode(1, partials[:1]), partials[0])
    messages = {w: np.full(3, float(w)) for w in range(4)}
    result = small.decode_result(messages, 3)
    np.testing.assert_allclose(result.gradient, [6.0, 6.0, 6.0])
    assert result.condition == 1.0
