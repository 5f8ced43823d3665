"""The results a master holds, laid out as consecutive rows of one matrix as they arrive.

A code that combines its messages into ``m >= 2`` chunks (``decodes_faster_from_rows``)
multiplies them in place when they are consecutive rows of one matrix, and otherwise first
gathers them into one, a copy on the critical path between the last result and the decoded
gradient (``gradcode.codes.base.combine_chunks``; at m = 9 the gather and product take
1.6-2.4x the memory floor, the product on rows 1.07-1.25x, ``benchmarks/decode_cost.py``). The
master therefore copies each result it will hold into the next row of ``MessageRows`` when it
arrives, while it waits for the others, so only the last result's copy stays on the critical
path. The rows cost one more message per key in memory (n = 40, m = 2, l = 10^6: 165 MB).

The results are copied, not received in place: receives are posted per worker before it is
known which result arrives next, and results the decoder does not hold (stale ones, those of
a batch after the decodable one) are never copied.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from gradcode.train.transport import Result


class MessageRows:
    """``rows`` results of ``width`` numbers each, one iteration at a time.

    ``hold(result)`` copies ``result.data`` into the next free row and returns the result with
    its ``data`` that row (its header and buffer are the port's still, released as before);
    ``start()`` frees every row for a new iteration. A result of another width, or one that
    finds every row taken (a key held twice, from a worker and its spare), keeps its own
    buffer; the decoder then gathers, as it would without rows.
    """

    def __init__(self, rows: int, width: int) -> None:
        # touched once here, so that no iteration pays the page faults of a fresh matrix
        self._matrix = np.zeros((rows, width))
        self._used = 0

    def start(self) -> None:
        self._used = 0

    def hold(self, result: Result) -> Result:
        rows, width = self._matrix.shape
        if self._used == rows or result.data.shape != (width,):
            return result
        row = self._matrix[self._used]
        np.copyto(row, result.data)
        self._used += 1
        return dataclasses.replace(result, data=row)
