"""Partitioning training rows into the k data partitions of a gradient code."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradcode.data import OptionError, partition_offsets, partition_rows, trimmed_size


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 500), st.integers(1, 60), st.one_of(st.none(), st.integers(0, 2**32)))
def test_every_row_once_and_sizes_differ_by_at_most_one(n_rows, k, seed):
    if k > n_rows:
        with pytest.raises(OptionError, match="non-empty partitions"):
            partition_rows(n_rows, k, seed)
        return
    parts = partition_rows(n_rows, k, seed)
    assert len(parts) == k
    sizes = [p.size for p in parts]
    assert max(sizes) - min(sizes) <= 1 and sizes == sorted(sizes, reverse=True)
    assert np.array_equal(np.sort(np.concatenate(parts)), np.arange(n_rows))
    assert all(p.dtype == np.int64 and np.all(np.diff(p) > 0) for p in parts)
    if seed is None:  # contiguous blocks in order
        assert np.array_equal(np.concatenate(parts), np.arange(n_rows))


def test_contiguous_blocks_match_offsets():
    assert partition_offsets(10, 4).tolist() == [0, 3, 6, 8, 10]
    assert [p.tolist() for p in partition_rows(5, 2)] == [[0, 1, 2], [3, 4]]


def test_seeded_partition_is_deterministic_and_shuffled():
    a = partition_rows(1000, 7, seed=3)
    b = partition_rows(1000, 7, seed=3)
    c = partition_rows(1000, 7, seed=4)
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert not all(np.array_equal(x, y) for x, y in zip(a, c, strict=True))
    assert not np.array_equal(a[0], np.arange(a[0].size))


def test_trimming_makes_equal_partitions():
    # the Amazon split has 26,215 training rows; paper 000 used n = 10, 15, 20 workers
    assert trimmed_size(26_215, 10) == 26_210
    assert trimmed_size(26_215, 60) == 26_160
    kept = trimmed_size(26_215, 15)
    assert {p.size for p in partition_rows(kept, 15)} == {kept // 15}


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: partition_rows(5, 0), "number of partitions must be >= 1"),
        (lambda: partition_rows(0, 1), "number of rows must be >= 1"),
        (lambda: partition_rows(5, True), "must be an integer"),
        (lambda: partition_rows(5, 2.0), "must be an integer"),
        (lambda: partition_rows(5, 2, seed=-1), "seed must be >= 0"),
        (lambda: trimmed_size(5, 6), "leaves no rows"),
        (lambda: trimmed_size(5, 0), "trim multiple must be >= 1"),
    ],
)
def test_invalid_parameters(call, message):
    with pytest.raises(OptionError, match=message):
        call()
