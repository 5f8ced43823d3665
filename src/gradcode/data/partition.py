"""Deterministic partitioning of training rows into the ``k`` data partitions a code needs.

Gradient codes assume the data set is split into ``k`` partitions ``D_1..D_k`` (of equal size
in the papers). ``partition_rows`` splits ``n`` rows into ``k`` parts whose sizes differ by at
most one (the first ``n mod k`` parts are one row larger); trimming the training rows to a
multiple of ``k`` first (``trimmed_size``) makes them exactly equal, as in the papers'
experiments (Tandon et al.'s code drops the remainder rows in the same way).
"""

from __future__ import annotations

import numpy as np

from gradcode.data.errors import OptionError


def _count(value: object, what: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise OptionError(f"{what} must be an integer (got {value!r})")
    if value < minimum:
        raise OptionError(f"{what} must be >= {minimum} (got {value})")
    return int(value)


def partition_offsets(n_rows: int, k: int) -> np.ndarray:
    """Boundaries of ``k`` contiguous blocks of ``n_rows`` rows, sizes differing by at most one.

    Returns int64 ``(k + 1,)``: block ``j`` is rows ``offsets[j]:offsets[j + 1]``; the first
    ``n_rows mod k`` blocks hold ``n_rows // k + 1`` rows, the others ``n_rows // k``.
    Raises ``OptionError`` unless ``1 <= k <= n_rows``.
    """
    n_rows = _count(n_rows, "number of rows", 1)
    k = _count(k, "number of partitions", 1)
    if k > n_rows:
        raise OptionError(f"cannot split {n_rows} rows into {k} non-empty partitions")
    base, extra = divmod(n_rows, k)
    sizes = np.full(k, base, dtype=np.int64)
    sizes[:extra] += 1
    return np.concatenate(([0], np.cumsum(sizes)))


def partition_rows(n_rows: int, k: int, seed: int | None = None) -> list[np.ndarray]:
    """Split rows ``0..n_rows-1`` into ``k`` partitions; a list of ``k`` int64 index arrays.

    Without ``seed`` partition ``j`` is the ``j``-th contiguous block (``partition_offsets``).
    With ``seed`` the rows are first permuted by ``numpy.random.default_rng(seed)`` and each
    block of the permutation is returned sorted (for memory locality when slicing). Either way
    every row is in exactly one partition and sizes differ by at most one; the result depends
    only on ``(n_rows, k, seed)``.
    """
    offsets = partition_offsets(n_rows, k)
    if seed is None:
        return [np.arange(offsets[j], offsets[j + 1], dtype=np.int64) for j in range(k)]
    seed = _count(seed, "seed", 0)
    order = np.random.default_rng(seed).permutation(n_rows).astype(np.int64)
    return [np.sort(order[offsets[j] : offsets[j + 1]]) for j in range(k)]


def trimmed_size(n_rows: int, multiple: int) -> int:
    """The largest multiple of ``multiple`` not above ``n_rows``; ``OptionError`` if that is 0."""
    n_rows = _count(n_rows, "number of rows", 1)
    multiple = _count(multiple, "trim multiple", 1)
    kept = n_rows - n_rows % multiple
    if kept == 0:
        raise OptionError(f"trimming {n_rows} rows to a multiple of {multiple} leaves no rows")
    return kept
