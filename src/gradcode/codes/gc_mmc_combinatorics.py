"""Counting and listing GC-MMC's minimal progress vectors: bounded compositions (every worker
sends a prefix of its messages, the uncorrelated and hybrid designs) and disjoint runs on the
cycle (the correlated design, where a worker's last message must be the only copy of its coded
message). Each lister has a closed-form counter, so ``count_patterns`` never lists."""

from __future__ import annotations

import math
from collections.abc import Iterator


def bounded_compositions(parts: int, bound: int, total: int) -> Iterator[tuple[int, ...]]:
    """Every vector in ``[0, bound]^parts`` summing to ``total``."""
    if parts == 0:
        if total == 0:
            yield ()
        return
    for first in range(min(bound, total), -1, -1):
        if total - first <= bound * (parts - 1):
            for rest in bounded_compositions(parts - 1, bound, total - first):
                yield (first, *rest)


def count_bounded_compositions(parts: int, bound: int, total: int) -> int:
    ways = [1] + [0] * total
    for _ in range(parts):
        ways = [sum(ways[max(0, x - bound) : x + 1]) for x in range(total + 1)]
    return ways[total]


def disjoint_runs(size: int, longest: int, total: int) -> Iterator[tuple[int, ...]]:
    """Progress vectors whose runs ``[u, u + p_u)`` on the cycle are disjoint, cover ``total``
    positions and are at most ``longest`` long."""
    progress = [0] * size
    taken = [False] * size

    def visit(u: int, covered: int) -> Iterator[tuple[int, ...]]:
        if covered == total:
            yield tuple(progress)
            return
        if u == size:
            return
        yield from visit(u + 1, covered)
        if taken[u]:
            return
        length = 0
        while length < min(longest, total - covered) and not taken[(u + length) % size]:
            taken[(u + length) % size] = True
            length += 1
            progress[u] = length
            yield from visit(u + 1, covered + length)
        for j in range(length):
            taken[(u + j) % size] = False
        progress[u] = 0

    yield from visit(0, 0)


def count_disjoint_runs(size: int, longest: int, total: int) -> int:
    """Number of ``disjoint_runs``: ``j`` runs composing ``total`` and ``j`` gaps composing
    ``size - total`` around the cycle, each placement counted once per choice of first run."""
    count = 0
    for runs in range(1, total + 1):
        lengths = count_bounded_compositions(runs, longest - 1, total - runs)
        gaps = math.comb(size - total + runs - 1, runs - 1)
        count += size * lengths * gaps // runs
    return count
