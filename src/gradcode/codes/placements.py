"""Placements: which partitions each worker holds, for the codes that take an arbitrary one
(paper 004's ``heterogeneous`` and ``berrut``, ``heterogeneous-poly``). A placement is a list
with one list of partitions per worker; ``validate_placement`` checks one where it enters a
code, the others build one (cyclic, seeded random with optional weights, sized to the workers'
speeds), and ``Placed`` answers a code's questions about the one it holds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from gradcode.codes.base import check_int, require


def validate_placement(scheme: str, placement: Any) -> tuple[tuple[int, ...], ...]:
    """Check a placement (list of partition lists, one per worker) and return it as tuples.

    Every worker holds at least one partition, no partition twice, and the partitions are
    exactly ``0 .. k - 1``.
    """
    if isinstance(placement, str | bytes) or not isinstance(placement, Sequence):
        raise ValueError(
            f"{scheme} needs a placement: a list with one list of partitions per worker "
            f"(got {placement!r})"
        )
    require(len(placement) >= 1, f"{scheme} needs at least one worker (got placement=[])")
    rows: list[tuple[int, ...]] = []
    for worker, parts in enumerate(placement):
        if isinstance(parts, str | bytes) or not isinstance(parts, Sequence):
            raise ValueError(
                f"{scheme} needs a list of partitions for worker {worker} (got {parts!r})"
            )
        require(
            len(parts) >= 1, f"{scheme} needs every worker to hold a partition (worker {worker})"
        )
        row = []
        for part in parts:
            if isinstance(part, bool) or not isinstance(part, int | np.integer) or part < 0:
                raise ValueError(
                    f"{scheme} needs partitions as integers >= 0 (worker {worker}: {part!r})"
                )
            row.append(int(part))
        require(
            len(set(row)) == len(row),
            f"{scheme} needs distinct partitions per worker (worker {worker}: {row})",
        )
        rows.append(tuple(row))
    held = {part for row in rows for part in row}
    k = max(held) + 1
    missing = sorted(set(range(k)) - held)
    require(
        not missing,
        f"{scheme} needs partitions 0..k-1 each held by some worker (k={k}, missing {missing})",
    )
    return tuple(rows)


def cyclic_placement(n: int, r: int) -> list[list[int]]:
    """``k = n`` partitions, worker ``w`` holds ``w, w + 1, ..., w + r - 1`` (mod ``n``)."""
    n = check_int("n", "cyclic_placement", n, minimum=1)
    r = check_int("r", "cyclic_placement", r, minimum=1)
    require(r <= n, f"cyclic_placement needs r <= n (got n={n}, r={r})")
    return [[(w + j) % n for j in range(r)] for w in range(n)]


def random_placement(
    n: int, k: int, r: int, seed: int = 0, *, weights: Sequence[float] | None = None
) -> list[list[int]]:
    """A seeded random placement: every partition on ``r`` distinct workers.

    Holders are drawn without replacement with probabilities proportional to ``weights``
    (default uniform; e.g. ``[4, 4, 1, 1, 1]`` makes workers 0 and 1 hold about four times as
    many partitions). A worker left without a partition then gets one of the most replicated
    partitions, so ``min_i |A_i| = r`` still holds unless ``k = 1`` (then everyone holds it).
    """
    n = check_int("n", "random_placement", n, minimum=1)
    k = check_int("k", "random_placement", k, minimum=1)
    r = check_int("r", "random_placement", r, minimum=1)
    require(r <= n, f"random_placement needs r <= n (got n={n}, r={r})")
    if weights is None:
        p = np.full(n, 1.0 / n)
    else:
        p = np.asarray(weights, dtype=np.float64)
        require(
            p.shape == (n,) and bool(np.all(p > 0)) and bool(np.all(np.isfinite(p))),
            f"random_placement needs n positive weights (got {list(weights)})",
        )
        p = p / p.sum()
    rng = np.random.default_rng(seed)
    held: list[set[int]] = [set() for _ in range(n)]
    for part in range(k):
        for worker in rng.choice(n, size=r, replace=False, p=p):
            held[int(worker)].add(part)
    replication = np.full(k, r)
    for worker in range(n):
        if not held[worker]:
            # the most replicated partition: the least replicated ones stay at r
            part = int(rng.choice(np.flatnonzero(replication == replication.max())))
            held[worker].add(part)
            replication[part] += 1
    return [sorted(parts) for parts in held]


def speed_placement(k: int, r: int, times: Sequence[float]) -> list[list[int]]:
    """Every one of ``k`` partitions on exactly ``r`` workers, loads sized to ``times``.

    ``times[w]`` is worker ``w``'s expected time per partition. Starting from one partition
    each, the ``k r`` slots go one at a time to the worker that would finish its next
    partition earliest (``(load + 1) times[w]``, ties to the lower index, at most ``k`` each),
    which minimises the largest expected finishing time ``load * times[w]`` over integer
    loads. Worker ``w`` then holds the next ``load_w`` partitions cyclically after worker
    ``w - 1``'s, so the arcs wind ``r`` times round the ``k`` partitions: each is held exactly
    ``r`` times and no worker holds one twice. Equal times give ``r`` partitions each.
    """
    n = len(times)
    k = check_int("k", "speed_placement", k, minimum=1)
    r = check_int("r", "speed_placement", r, minimum=1)
    require(n >= 1 and r <= n, f"speed_placement needs 1 <= r <= n (got n={n}, r={r})")
    require(k * r >= n, f"speed_placement needs k r >= n (got n={n}, k={k}, r={r})")
    cost = [float(t) for t in times]
    require(
        all(math.isfinite(t) and t > 0 for t in cost),
        f"speed_placement needs finite times > 0 (got {list(times)})",
    )
    loads = [1] * n
    for _ in range(k * r - n):
        worker = min((w for w in range(n) if loads[w] < k), key=lambda w: (loads[w] + 1) * cost[w])
        loads[worker] += 1
    placement, start = [], 0
    for load in loads:
        placement.append(sorted((start + j) % k for j in range(load)))
        start += load
    return placement


class Placed:
    """A code's assignment read from its placement (``_placement``, as ``validate_placement``
    returns it); comes before ``GradientCode`` in the code's bases, where it implements
    ``partitions``."""

    _placement: tuple[tuple[int, ...], ...]

    def partitions(self, worker: int) -> tuple[int, ...]:
        return self._placement[worker]

    def placement(self) -> list[list[int]]:
        """The placement, one list of partitions per worker."""
        return [list(parts) for parts in self._placement]
