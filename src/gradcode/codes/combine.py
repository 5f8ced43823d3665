"""The decoders' arithmetic: messages as checked vectors, split into chunks, and their linear
combinations, summed in place at close to the memory's speed (``combine_chunks``).

Every decoder ends here: whatever coefficients a scheme solves for, the gradient is
``sum_r A[u, r] * message_r`` per chunk ``u``, and that sum over the messages' memory is most of
a decode's time at the sizes the runtime sees (``docs/measurements/decode-cost.md``).
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import numpy as np

from gradcode.blas import daxpy, single_threaded_blas

#: multiply-adds below which a combination skips ``single_threaded_blas``: OpenBLAS runs an
#: axpy of at most 10,000 elements and a product of at most 65,536 * 4 multiply-adds on one
#: thread whatever its setting (interface/axpy.c, interface/gemm.c), so limiting and restoring
#: its threads (26 us, more on busy cores) costs a small decode more than its arithmetic (4.8 s
#: of 62 in a profile of the exhaustive checks of ``heterogeneous`` and ``gc-mmc``, length 37)
SMALL_WORK = 8192


def _blas_threads(work: int) -> AbstractContextManager[Any]:
    """``single_threaded_blas()``, or nothing for ``work`` (multiply-adds) that BLAS runs on
    one thread anyway."""
    return nullcontext() if work <= SMALL_WORK else single_threaded_blas()


def split_chunks(partials: np.ndarray, m: int) -> np.ndarray:
    """Pad rows to a multiple of ``m`` and split: ``(r, l) -> (r, m, ceil(l / m))``."""
    rows, length = partials.shape
    width = -(-length // m)
    if width * m != length:
        padded = np.zeros((rows, width * m), dtype=np.result_type(partials, np.float64))
        padded[:, :length] = partials
        partials = padded
    return partials.reshape(rows, m, width)


def message_vectors(
    scheme: str, messages: Mapping[Hashable, np.ndarray], keys: Sequence[Hashable], width: int
) -> list[np.ndarray]:
    """The messages ``keys`` as contiguous float64 vectors of length ``width``, checked."""
    vectors = []
    for key in keys:
        vector = np.ascontiguousarray(messages[key], dtype=np.float64)
        if vector.shape != (width,):
            raise ValueError(
                f"{scheme}: message {key!r} has shape {vector.shape}, expected ({width},)"
            )
        vectors.append(vector)
    return vectors


def linear_combination(
    out: np.ndarray, coefficients: np.ndarray, vectors: Sequence[np.ndarray]
) -> np.ndarray:
    """``out[:] = sum_r coefficients[r] * vectors[r]``, in place, one pass per vector.

    In-place BLAS ``axpy`` avoids both the temporary of ``c * v`` and stacking the messages
    into a fresh matrix (whose page faults alone cost more than summing the messages).
    """
    # level-1 BLAS is memory-bound: a second thread gains nothing, and on busy cores (MPI
    # ranks, other jobs) OpenBLAS's spinning threads make daxpy 3-100x slower
    with _blas_threads(len(vectors) * out.size):
        return _linear_combination(out, coefficients, vectors)


#: bytes of the messages' columns that ``combine_chunks`` gathers per block: the block and the
#: block of the output stay in a 2 MB L2 cache, where the product runs near the dgemm peak (36
#: messages, m = 9: 56 GFlop/s at 512 KB blocks, 32 at 1 MB, 20 at 4 MB, the size used before).
#: Smaller blocks cost more Python calls (about 6 us a block at 36 messages) than they save.
CHUNK_BLOCK_BYTES = 1 << 19
#: fewest columns per block, which bounds the Python calls when there are many messages
MIN_BLOCK_COLUMNS = 512
#: from this many chunks on, ``combine_chunks`` multiplies gathered blocks; below it (m = 1)
#: ``linear_combination`` is faster (0.95x the memory floor against 1.1-1.3x at n = 20, 40)
BLOCKED_FROM_CHUNKS = 2
#: columns per product when the messages are rows of one matrix (no gather): 2048 measured
#: 0.8-1.0x the memory floor for 17-40 messages at m = 9; 4096 (1.2 MB of 36 rows) 1.3-1.5x
ROWS_BLOCK_COLUMNS = 2048
#: ... and at most this many bytes of the rows per product, so many messages keep it in L2
ROWS_BLOCK_BYTES = 1 << 20


def combine_chunks(
    out: np.ndarray, coefficients: np.ndarray, vectors: Sequence[np.ndarray]
) -> np.ndarray:
    """``out[u] = sum_r coefficients[u, r] * vectors[r]`` for every chunk ``u``, in place.

    Shapes: ``out`` ``(m, width)``, ``coefficients`` ``(m, N)``, ``vectors`` ``N`` arrays
    ``(width,)``. One ``linear_combination`` per chunk would read every vector ``m`` times;
    from ``BLOCKED_FROM_CHUNKS`` chunks on, L2-sized column blocks of the vectors are gathered
    into one matrix and multiplied by ``coefficients`` straight into ``out``'s columns, so each
    vector is read from memory once. The decode then costs the gather (a copy of the messages,
    1.2-1.4x the time of reading them) plus the ``2 m N width`` flops of the products, which at
    m = 9 take 0.6-0.7x the memory floor on their own (``benchmarks/decode_cost.py``, paper
    000's codes, the same run, ratios to the memory floor: n = 20, m = 2, 4, 9: 1.06, 0.93,
    1.72, were 1.86, 1.95, 3.37; n = 40, m = 2, 4, 9: 1.22, 1.32, 1.93, were 1.86, 1.91, 3.61).

    Vectors that are already consecutive rows of one array (``consecutive_rows``; the MPI
    master holds results that way, ``gradcode.train.rows``) need no gather: blocks of
    ``ROWS_BLOCK_COLUMNS`` columns of the rows go straight into the product, whose memory reads
    then overlap its flops (the same run: n = 20, m = 2, 4, 9: 0.64, 0.72, 1.07; n = 40: 0.65,
    1.18, 1.15).
    """
    m = coefficients.shape[0]
    if m < BLOCKED_FROM_CHUNKS:
        for chunk in range(m):
            linear_combination(out[chunk], coefficients[chunk], vectors)
        return out
    count, width = len(vectors), out.shape[1]
    rows = consecutive_rows(vectors)
    if rows is not None:
        matrix, order = rows
        ordered = np.ascontiguousarray(coefficients[:, order])
        block = max(MIN_BLOCK_COLUMNS, min(ROWS_BLOCK_COLUMNS, ROWS_BLOCK_BYTES // (8 * count)))
        # no gather: each block of the rows is read from memory once, by the product itself
        with _blas_threads(m * count * width):
            for start in range(0, width, block):
                stop = min(start + block, width)
                np.matmul(ordered, matrix[:, start:stop], out=out[:, start:stop])
        return out
    block = max(MIN_BLOCK_COLUMNS, CHUNK_BLOCK_BYTES // (8 * count))
    # one flat buffer: np.concatenate of the slices into it is the cheapest gather (np.stack
    # adds a few us per block); matmul writes into the strided view of ``out`` through BLAS's
    # leading dimension, with no product temporary to copy back (measured: 1 ms of 5 at m = 9)
    gathered = np.empty(count * min(block, width))
    with _blas_threads(m * count * width):
        for start in range(0, width, block):
            stop = min(start + block, width)
            columns = gathered[: count * (stop - start)]
            np.concatenate([vector[start:stop] for vector in vectors], out=columns)
            np.matmul(coefficients, columns.reshape(count, -1), out=out[:, start:stop])
    return out


def consecutive_rows(vectors: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray] | None:
    """``vectors`` as one ``(N, width)`` view when they are ``N`` consecutive rows (in any
    order) of one array, else ``None``.

    Consecutive rows: contiguous, of one length, in the same allocation (one ``base``), at
    equal distances of at least a row apart. Returns the view, valid while ``vectors`` are, and
    ``order`` (shape ``(N,)``): row ``j`` of the view is ``vectors[order[j]]``. Nothing is
    copied; every byte the view reads is one of the vectors'.
    """
    base = vectors[0].base if vectors else None
    if base is None:
        return None
    width, itemsize = vectors[0].shape[0], vectors[0].itemsize
    for vector in vectors:
        contiguous = vector.ndim == 1 and vector.strides[0] == itemsize
        if vector.base is not base or not contiguous or vector.shape[0] != width:
            return None
    addresses = np.array([vector.ctypes.data for vector in vectors])
    order = np.argsort(addresses, kind="stable")
    steps = np.diff(addresses[order])
    pitch = int(steps[0]) if steps.size else width * itemsize
    if pitch < width * itemsize or pitch % itemsize or (steps != pitch).any():
        return None
    first = vectors[int(order[0])]
    view = np.lib.stride_tricks.as_strided(
        first, shape=(len(vectors), width), strides=(pitch, itemsize), writeable=False
    )
    return view, order


def _linear_combination(
    out: np.ndarray, coefficients: np.ndarray, vectors: Sequence[np.ndarray]
) -> np.ndarray:
    started = False
    for coefficient, vector in zip(coefficients, vectors, strict=True):
        if coefficient == 0.0:
            continue
        if not started:
            if coefficient == 1.0:
                np.copyto(out, vector)
            else:
                np.multiply(vector, coefficient, out=out)
            started = True
        elif coefficient == 1.0:
            np.add(out, vector, out=out)
        else:
            daxpy(vector, out, float(coefficient))
    if not started:
        out.fill(0.0)
    return out
