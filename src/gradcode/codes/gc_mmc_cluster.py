"""The code of one GC-MMC cluster (``gradcode.codes.gc_mmc``): its coded rows, its decodability
rule, its decoder and its minimal patterns. Every cluster of a ``GCMMC`` shares one, so it is
built (and its best draw searched for) once per design, size and seed.

Construction (deviation: the paper defers to the real Reed-Solomon construction of Halbawi et
al.). Measured on this repository's minimal patterns, the real Reed-Solomon code with the
``K l`` Chebyshev evaluation points of all virtual workers conditions badly (worst errors 1e-8 to
1e-6 at ``K = 10-12`` in natural point order, ~1e-10 over interleaved orders), because a
decoding set of ``t`` points can crowd into a small interval. We use the generic construction
behind Tandon et al.'s cyclic code instead: with ``d = min(t, K)``, draw a random
``d``-dimensional subspace ``V`` of ``R^K`` containing the all-ones vector and take every coded
row as a random vector of ``V`` vanishing off its support (for ``d = K``, uniform magnitudes in
``[0.5, 1.5]`` on the support, measured ~100x better conditioned than Gaussian ones). Any ``d``
distinct rows are then a basis of ``V`` with probability one (verified exhaustively in the tests
for small clusters), so they span the all-ones vector, and fewer do not. Of 8 seeded draws the
one with the smallest worst decoding amplification over a fixed sample of decoding sets (every
minimal pattern when there are at most 20,000, else 256 random ones and the longest silent runs)
is kept: single draws occasionally gave errors near 1e-9 at ``K = 12``. Rows are scaled so their
largest entry is ``+1``: ``order = 1`` sends the partials themselves and ``t = 1`` the plain
sum.

Decoding takes, in every cluster, one message per distinct coded row received, solves the
minimum-norm ``a`` with ``a @ B_R = 1`` (least squares on the ``|R| x K`` rows; rows beyond the
threshold only improve conditioning) and caches ``a`` per cluster responder set.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Collection, Iterable, Iterator, Sequence
from typing import ClassVar

import numpy as np

from gradcode.codes.base import NotDecodableError
from gradcode.codes.gc_mmc_combinatorics import (
    bounded_compositions,
    count_bounded_compositions,
    count_disjoint_runs,
    disjoint_runs,
)
from gradcode.lru import LRUCache

#: seeded draws of the random construction among which the best conditioned is kept
_DRAWS = 8
#: a draw is scored on every minimal pattern up to this many, else on a sample of this size
_SAMPLE_ALL = 20_000
_SAMPLE_RANDOM = 256


def cluster_threshold(design: str, size: int, orders: tuple[int, ...]) -> int:
    """The paper's count of coded messages per cluster (``orders = (order,)`` if correlated):
    zeros in a column of the cluster's mask matrix, plus one."""
    coded = orders[:-1] if design == "hybrid" else orders
    return sum(size - o for o in coded) + 1


class ClusterCode:
    """The code of one cluster of ``size`` workers and partitions (shared by all clusters)."""

    #: decoding systems kept per cluster code (one per set of coded messages in hand)
    cache_size: ClassVar[int] = 4096

    def __init__(
        self, design: str, size: int, r: int, order: int, orders: tuple[int, ...], seed: int
    ) -> None:
        self.design, self.size, self.r, self.order, self.orders = design, size, r, order, orders
        if design == "correlated":
            self.l = r - order + 1
            self.supports = [tuple((t + j) % size for j in range(order)) for t in range(size)]
        else:
            self.l = len(orders)
            coded = orders[:-1] if design == "hybrid" else orders
            self.supports = [
                tuple((u + j) % size for j in range(o)) for u in range(size) for o in coded
            ]
        self.threshold = cluster_threshold(design, size, orders)
        self.mds = self.threshold <= size
        self.rank = min(self.threshold, size)
        #: index of the full cluster sum (hybrid) among the distinct coded messages, else -1
        self.full = len(self.supports) if design == "hybrid" else -1
        self._minimal: list[tuple[int, ...]] | None = None
        self._cache: LRUCache[tuple[tuple[int, ...], np.ndarray, float]] = LRUCache(self.cache_size)
        self.rows = self._best_rows(seed)

    # -- structure --------------------------------------------------------------------------
    def local_id(self, u: int, j: int) -> int:
        """Distinct coded message that local worker ``u`` sends as its message ``j``."""
        if self.design == "correlated":
            return (u + j) % self.size
        if self.design == "hybrid":
            return self.full if j == self.l - 1 else u * (self.l - 1) + j
        return u * self.l + j

    def prefix(self, j: int) -> int:
        """Partials (in computing order) that message ``j`` of any worker needs."""
        return j + self.order if self.design == "correlated" else self.orders[j]

    def stragglers(self) -> int:
        """Workers that may send nothing while the others finish (worst case)."""
        size, l = self.size, self.l
        if self.design != "uncorrelated":
            # correlated: a run of s silent workers loses s - l + 1 coded messages; hybrid: K = r
            return self.r - 1
        if self.mds:
            return min((sum(self.orders) - 1) // l, size - 1)

        # Matching rule. The workers whose order-m messages touch a run of x partitions form a
        # window of min(K, x + m - 1) workers (nested over m); s silent workers inside all of
        # them leave sum_m (window - s) rows, and no partition set has fewer neighbours, as
        # |S + [0, m - 1]| >= min(K, |S| + m - 1) on the cycle. Hall: tolerated iff >= x.
        def tolerated(s: int) -> bool:
            return all(
                sum(max(0, min(size, x + o - 1) - s) for o in self.orders) >= x
                for x in range(1, size + 1)
            )

        return max(s for s in range(size) if tolerated(s))

    # -- decodability -----------------------------------------------------------------------
    def ok(self, ids: Collection[int]) -> bool:
        """Whether the distinct coded messages ``ids`` determine the cluster's sum."""
        if self.full in ids:
            return True
        if self.mds:
            return len(ids) >= self.threshold
        return len(ids) >= self.size and self.matching(ids)

    def matching(self, ids: Iterable[int]) -> bool:
        """Whether every partition can be matched to its own received row (Hall)."""
        touching: list[list[int]] = [[] for _ in range(self.size)]
        for i in ids:
            for p in self.supports[i]:
                touching[p].append(i)
        owner: dict[int, int] = {}

        def augment(p: int, seen: set[int]) -> bool:
            for i in touching[p]:
                if i not in seen:
                    seen.add(i)
                    if i not in owner or augment(owner[i], seen):
                        owner[i] = p
                        return True
            return False

        return all(augment(p, set()) for p in range(self.size))

    def ids(self, progress: Sequence[int]) -> set[int]:
        return {self.local_id(u, j) for u, p in enumerate(progress) for j in range(p)}

    def progress_ok(self, progress: Sequence[int]) -> bool:
        return self.ok(self.ids(progress))

    # -- construction -----------------------------------------------------------------------
    def _draw(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """Rows (full sum last in the hybrid) and an orthonormal basis ``(K, d)`` of ``V``."""
        size, d = self.size, self.rank
        rows = np.zeros((len(self.supports), size))
        if not self.mds:
            space = np.eye(size)
            for i, support in enumerate(self.supports):
                rows[i, list(support)] = rng.uniform(0.5, 1.5, len(support))
        else:
            basis = np.column_stack([np.ones(size), rng.standard_normal((size, d - 1))])
            space, _ = np.linalg.qr(basis)  # (K, d), orthonormal, spans the all-ones vector
            for i, support in enumerate(self.supports):
                zeros = np.setdiff1d(np.arange(size), support)
                if len(zeros):
                    _, _, vt = np.linalg.svd(space[zeros])
                    null = vt[len(zeros) :]  # coordinates of V's vectors vanishing on zeros
                else:
                    null = np.eye(d)
                rows[i] = space @ (rng.standard_normal(len(null)) @ null)
                rows[i, zeros] = 0.0
        rows /= rows[np.arange(len(rows)), np.argmax(np.abs(rows), axis=1)][:, None]
        if self.full >= 0:
            rows = np.vstack([rows, np.ones((1, size))])
        return rows, space

    def _best_rows(self, seed: int) -> np.ndarray:
        if not self.supports or self.threshold == 1:
            return self._draw(np.random.default_rng(seed))[0]
        sample = [sorted(ids) for ids in map(self.ids, self._sample()) if self.full not in ids]
        best, best_score = None, math.inf
        for draw in range(_DRAWS):
            rows, space = self._draw(np.random.default_rng([seed, draw]))
            try:
                score = worst_amplification(rows, space, sample)
            except np.linalg.LinAlgError:  # a degenerate draw (probability zero)
                continue
            if score < best_score:
                best, best_score = rows, score
        assert best is not None
        return best

    def _sample(self) -> list[tuple[int, ...]]:
        """Patterns that score a draw: every minimal one when there are at most
        ``_SAMPLE_ALL`` of them, else a fixed random sample of them plus, for every start, the
        longest run of silent workers (the others finished) that still decodes."""
        if self.count_minimal() <= _SAMPLE_ALL:
            return self.minimal()
        rng = np.random.default_rng(0)
        sample = [self.random_progress(rng, minimal=True) for _ in range(_SAMPLE_RANDOM)]
        for start in range(self.size):
            progress = [self.l] * self.size
            for j in range(self.size):
                progress[(start + j) % self.size] = 0
                if not self.progress_ok(progress):
                    progress[(start + j) % self.size] = self.l
                    break
            sample.append(tuple(progress))
        return sample

    # -- decoding ---------------------------------------------------------------------------
    def solve(self, ids: tuple[int, ...], tolerance: float) -> tuple:
        """``(ids used, a, condition)`` with ``a @ rows[ids used] = 1``, cached."""
        hit = self._cache.get(ids)
        if hit is not None:
            return hit
        if self.full in ids:
            entry: tuple = ((self.full,), np.ones(1), 1.0)
        else:
            rows = self.rows[list(ids)]  # (|ids|, K)
            ones = np.ones(self.size)
            solution, _, _, singular = np.linalg.lstsq(rows.T, ones, rcond=None)
            residual = np.abs(solution @ rows - ones).max()
            if not residual <= tolerance:
                raise NotDecodableError(
                    f"gc-mmc: coded messages {list(ids)} do not determine the cluster sum "
                    f"(residual {residual:.2g})",
                    needed=1,
                )
            entry = (ids, solution, float(singular[0] / singular[self.rank - 1]))
        return self._cache.put(ids, entry)

    # -- patterns ---------------------------------------------------------------------------
    def minimal(self) -> list[tuple[int, ...]]:
        """Every minimal decodable progress vector of the cluster, in a fixed order."""
        if self._minimal is None:
            self._minimal = list(self._enumerate_minimal())
        return self._minimal

    def count_minimal(self) -> int:
        size, l, t = self.size, self.l, self.threshold
        if self.design == "correlated":
            return count_disjoint_runs(size, l, t)
        if not self.mds:
            return len(self.minimal())
        if self.design == "uncorrelated":
            return count_bounded_compositions(size, l, t)
        singles = size if l - 1 < t else 0
        return singles + count_bounded_compositions(size, l - 1, t)

    def _enumerate_minimal(self) -> Iterator[tuple[int, ...]]:
        size, l, t = self.size, self.l, self.threshold
        if self.design == "correlated":
            # a worker's last message must be the only copy of its coded message and the union
            # must hold exactly t of them: the runs [u, u + p_u) are pairwise disjoint
            yield from disjoint_runs(size, l, t)
        elif not self.mds:
            yield from self.search_minimal()
        elif self.design == "uncorrelated":
            yield from bounded_compositions(size, l, t)
        else:
            if l - 1 < t:  # a full sum alone, unless its worker's lower messages suffice
                for u in range(size):
                    yield tuple(l if v == u else 0 for v in range(size))
            yield from bounded_compositions(size, l - 1, t)

    def search_minimal(self) -> Iterator[tuple[int, ...]]:
        """Depth-first search for minimal vectors with the decodability rule itself."""
        size, l = self.size, self.l
        progress = [0] * size

        def minimal() -> bool:
            for u in range(size):
                if progress[u]:
                    progress[u] -= 1
                    decodable = self.progress_ok(progress)
                    progress[u] += 1
                    if decodable:
                        return False
            return True

        def visit(u: int) -> Iterator[tuple[int, ...]]:
            if self.progress_ok(progress):
                if minimal():  # anything a later worker added would be removable
                    yield tuple(progress)
                return
            if u == size:
                return
            rest = progress[u:]
            progress[u:] = [l] * (size - u)
            reachable = self.progress_ok(progress)
            progress[u:] = rest
            if not reachable:
                return
            for p in range(l + 1):
                progress[u] = p
                yield from visit(u + 1)
            progress[u] = 0

        yield from visit(0)

    def random_progress(self, rng: np.random.Generator, *, minimal: bool) -> tuple[int, ...]:
        """A random decodable progress vector; with ``minimal``, thinned in random order."""
        size, l = self.size, self.l
        progress = [0] * size
        held: dict[int, int] = {}  # distinct coded message -> copies received

        def send(u: int) -> None:
            i = self.local_id(u, progress[u])
            progress[u] += 1
            held[i] = held.get(i, 0) + 1

        def withdraw(u: int) -> None:
            progress[u] -= 1
            i = self.local_id(u, progress[u])
            held[i] -= 1
            if not held[i]:
                del held[i]

        for u, p in enumerate(rng.integers(0, l + 1, size=size)):
            for _ in range(p):
                send(u)
        while not self.ok(held.keys()):
            send(int(rng.choice([u for u in range(size) if progress[u] < l])))
        changed = minimal
        while changed:
            changed = False
            for u in map(int, rng.permutation(size)):
                if progress[u]:
                    withdraw(u)
                    if self.ok(held.keys()):
                        changed = True
                    else:
                        send(u)
        return tuple(progress)


@functools.lru_cache(maxsize=512)
def cluster_code(
    design: str, size: int, r: int, order: int, orders: tuple[int, ...], seed: int
) -> ClusterCode:
    return ClusterCode(design, size, r, order, orders, seed)


def worst_amplification(
    rows: np.ndarray, space: np.ndarray, sample: Sequence[Sequence[int]]
) -> float:
    """Worst decoding error amplification ``sum_i |a_i| ||row_i|| / sqrt(K)`` over the row
    sets ``sample``, ``a`` the minimum-norm solution of ``a @ rows[ids] = 1``.

    ``space`` ``(K, d)`` is an orthonormal basis of the rows' span: sets of ``d`` rows are
    solved as square systems in its coordinates (batched), others by pseudo-inverse.
    """
    size, d = space.shape
    coordinates = rows @ space  # (rows, d)
    target = space.sum(axis=0)  # coordinates of the all-ones vector
    norms = np.linalg.norm(rows, axis=1)
    by_size: dict[int, list[Sequence[int]]] = {}
    for ids in sample:
        by_size.setdefault(len(ids), []).append(ids)
    worst = 0.0
    for count, group in by_size.items():
        index = np.array(group)
        if count == d:
            systems = coordinates[index].transpose(0, 2, 1)  # (S, d, d)
            solution = np.linalg.solve(systems, np.broadcast_to(target, (len(group), d))[..., None])
            solution = solution[..., 0]
        else:
            solution = np.ones(size) @ np.linalg.pinv(rows[index])  # (S, count)
        worst = max(worst, float((np.abs(solution) * norms[index]).sum(axis=1).max()))
    return worst / math.sqrt(size)
