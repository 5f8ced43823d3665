"""GC-MMC: gradient coding with clustering and multi-message communication.

Implements Ozfatura, Gündüz and Ulukus, "Gradient Coding with Clustering and Multi-message
Communication" (paper 002): the correlated design (Sec. III-A), the uncorrelated design with
virtual workers (Sec. III-B), clustering (Sec. III-C) and the hybrid with fractional repetition
(Sec. III-D).

Assignment. The ``n`` workers and ``k = n`` partitions are split into ``clusters`` equal groups
of ``K = n / clusters``; one code is applied inside every cluster independently (the same local
code in each). Local worker ``u`` of a cluster computes the cluster's local partitions
``u, u + 1, ..., u + r - 1 (mod K)`` in that order (cyclic repetition).

Messages. A coded message of *order* ``o`` combines ``o`` partials the worker has computed,
so it goes out as soon as those are done. Keys are ``(worker, j)``, ``j`` in sending order:

- ``correlated`` (``order``): worker ``u`` sends ``l = r - order + 1`` messages; message ``j``
  combines partials ``u + j, ..., u + j + order - 1`` (the ``order`` most recent ones), i.e. it
  is coded message ``c_{u + j}`` of the order-``order`` cyclic code of the cluster. Workers
  ``u`` and ``u + 1`` can both send ``c_{u + 1}``: a cluster has ``K`` distinct coded messages
  and needs ``K - order + 1`` *distinct* ones (duplicates count once).
- ``uncorrelated`` (``orders = [m_0, ..., m_{l-1}]``): every worker acts as ``l`` (virtual)
  workers; its message of order ``m_i`` combines its *first* ``m_i`` partials in computing
  order (the paper's Example 1: the virtual worker gets "the first two partial gradients"), so
  messages go out in increasing order. Each of the ``K l`` coded messages is sent by exactly
  one worker; any ``K l - sum(m_i) + 1`` of them decode (every column of the ``K l x K`` mask
  has ``K l - sum(m_i)`` zeros).
- ``hybrid`` (``orders``, cluster size ``K = r``; Sec. III-D): the uncorrelated design, except
  that a worker that finishes all its ``r`` partials sends the plain sum of its cluster
  (fractional repetition: the paper notes FRC is clustering with cluster size ``r``, where
  every worker holds its whole cluster) instead of the order-``r`` coded message. A cluster
  decodes from any one such sum, or from ``K (l - 1) - sum(lower orders) + 1`` lower-order
  messages. ``orders = [r]`` is exactly fractional repetition.

Plain GC is ``correlated`` with ``order = r``; uncoded multi-message communication (UC-MMC) is
``correlated`` with ``order = 1`` (Sec. IV). ``paper_fig1_params`` lists the Fig. 1 schemes.

Decodability. Write ``t`` for the paper's count (``threshold``). When ``t <= K`` the rule is
exactly "``t`` distinct coded messages in every cluster" (MDS-like). When ``t > K`` (possible in
the uncorrelated and hybrid designs, e.g. the paper's Example 1 continued: ``K = 6``,
``orders = [2, 3]``, ``t = 8``) the coded rows are generic vectors of ``R^K`` on their
supports and a cluster decodes exactly when its received rows can be matched one-to-one to its
``K`` partitions (Hall's condition): every ``t`` messages still suffice and ``t - 1`` may not,
but some sets of ``K .. t - 1`` messages decode too. We limit that regime to clusters of at
most 8 workers, where its patterns can still be enumerated for verification.

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

Shapes: ``partials`` ``(r, length)`` in ``partitions`` order (message ``j`` reads only its first
``message_prefix`` rows); every message ``(length,)`` (``m = 1``).

Numerical soundness (measured with ``verify``): every minimal pattern of the
``parameter_grid(12)`` family (340 parameter sets, 86,688 patterns) decodes with relative error
below 2.4e-11; 60 random patterns on each of the 427 distinct cluster structures of
``parameter_grid(50)`` with ``n > 12`` stay below 1.5e-11, as do 300 random patterns on single
clusters of 30-50 workers (e.g. ``n = r = 50, order = 25``: 1.0e-12; ``n = 50, r = 25,
order = 13``: 1.4e-11) and the Fig. 1 configurations (below 4e-13). The error depends on the
cluster size, not on ``n``, and stays far from 1e-8 up to 50: ``numerically_sound_up_to`` is
None.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Collection, Iterable, Iterator, Sequence
from typing import Any, ClassVar

import numpy as np

from gradcode.codes.base import (
    LinearCode,
    MessageKey,
    NotDecodableError,
    Pattern,
    check_int,
    require,
)
from gradcode.lru import LRUCache

DESIGNS = ("correlated", "uncorrelated", "hybrid")

#: largest cluster allowed when the threshold exceeds the cluster size (see the module notes)
MATCHING_MAX_CLUSTER = 8
#: seeded draws of the random construction among which the best conditioned is kept
_DRAWS = 8
#: a draw is scored on every minimal pattern up to this many, else on a sample of this size
_SAMPLE_ALL = 20_000
_SAMPLE_RANDOM = 256
#: cluster sizes up to which ``parameter_grid`` lists every (r, order) of the correlated design
_FULL_GRID_CLUSTER = 6
#: largest cluster size for which ``parameter_grid`` lists three-order uncorrelated designs
_THREE_ORDERS_CLUSTER = 10


class _ClusterCode:
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
        self.threshold = _threshold(design, size, orders)
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
                score = _worst_amplification(rows, space, sample)
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
            return _count_disjoint_runs(size, l, t)
        if not self.mds:
            return len(self.minimal())
        if self.design == "uncorrelated":
            return _count_bounded_compositions(size, l, t)
        singles = size if l - 1 < t else 0
        return singles + _count_bounded_compositions(size, l - 1, t)

    def _enumerate_minimal(self) -> Iterator[tuple[int, ...]]:
        size, l, t = self.size, self.l, self.threshold
        if self.design == "correlated":
            # a worker's last message must be the only copy of its coded message and the union
            # must hold exactly t of them: the runs [u, u + p_u) are pairwise disjoint
            yield from _disjoint_runs(size, l, t)
        elif not self.mds:
            yield from self.search_minimal()
        elif self.design == "uncorrelated":
            yield from _bounded_compositions(size, l, t)
        else:
            if l - 1 < t:  # a full sum alone, unless its worker's lower messages suffice
                for u in range(size):
                    yield tuple(l if v == u else 0 for v in range(size))
            yield from _bounded_compositions(size, l - 1, t)

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
def _cluster_code(
    design: str, size: int, r: int, order: int, orders: tuple[int, ...], seed: int
) -> _ClusterCode:
    return _ClusterCode(design, size, r, order, orders, seed)


def _worst_amplification(
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


class GCMMC(LinearCode):
    """Gradient coding with clustering and multi-message communication.

    Parameters
    ----------
    n : int
        Number of workers ``K`` (and of partitions, ``k = n``).
    r : int
        Computation load: partitions per worker, ``1 <= r <= n / clusters``.
    clusters : int, default 1
        Number ``P`` of equal disjoint clusters, ``P | n``.
    design : {"correlated", "uncorrelated", "hybrid"}
    order : int, optional
        Correlated design: order of every message, ``1 <= order <= r`` (default ``r``: plain GC).
    orders : sequence of int
        Uncorrelated and hybrid designs: the order vector, distinct values in ``[1, r]`` with
        ``max(orders) == r``; messages go out in increasing order. Hybrid needs
        ``n / clusters == r``.
    seed : int, default 0
        Seed of the random construction.

    Attributes beyond the interface: ``cluster_size``, ``messages_per_worker`` (``l``),
    ``threshold`` (distinct coded messages per cluster that always suffice), ``mds`` (whether
    fewer never do).
    """

    name = "gc-mmc"
    numerically_sound_up_to: ClassVar[int | None] = None
    #: coefficients cached per cluster responder set (shared by the identical clusters)

    def __init__(
        self,
        n: int,
        r: int,
        clusters: int = 1,
        design: str = "correlated",
        order: int | None = None,
        orders: Sequence[int] | None = None,
        seed: int = 0,
    ) -> None:
        name = self.name
        self.n = check_int("n", name, n, minimum=1)
        self.clusters = check_int("clusters", name, clusters, minimum=1)
        require(
            self.n % self.clusters == 0,
            f"{name} needs clusters | n (got n={self.n}, clusters={self.clusters})",
        )
        size = self.cluster_size = self.n // self.clusters
        self.r = check_int("r", name, r, minimum=1)
        require(
            self.r <= size,
            f"{name} needs r <= n / clusters (got r={self.r}, n={self.n}, "
            f"clusters={self.clusters})",
        )
        require(design in DESIGNS, f"{name} needs design in {DESIGNS} (got design={design!r})")
        self.design = design
        self.seed = check_int("seed", name, seed)
        if design == "correlated":
            require(orders is None, f"{name} takes order, not orders, with design='correlated'")
            self.order: int | None = self.r if order is None else check_int("order", name, order)
            require(
                1 <= self.order <= self.r,
                f"{name} needs 1 <= order <= r (got order={self.order}, r={self.r})",
            )
            self.orders: tuple[int, ...] = (self.order,)
        else:
            require(order is None, f"{name} takes orders, not order, with design={design!r}")
            require(
                orders is not None and len(orders) > 0,
                f"{name} needs a non-empty orders with design={design!r} (got orders={orders})",
            )
            values = [
                check_int("orders", name, o, minimum=1)
                for o in (orders if orders is not None else ())
            ]
            require(
                len(set(values)) == len(values),
                f"{name} needs distinct orders (got orders={values})",
            )
            require(
                max(values) == self.r,
                f"{name} needs max(orders) == r (got orders={values}, r={self.r})",
            )
            require(
                design != "hybrid" or size == self.r,
                f"{name} hybrid needs n / clusters == r so that every worker holds its whole "
                f"cluster (got n={self.n}, clusters={self.clusters}, r={self.r})",
            )
            self.order = None
            self.orders = tuple(sorted(values))
            _check_matching_size(design, size, self.orders)
        self._local = _cluster_code(design, size, self.r, self.order or 0, self.orders, self.seed)
        self.messages_per_worker = self._local.l
        self.threshold = self._local.threshold
        self.mds = self._local.mds
        self.k, self.a, self.m = self.n, 0, 1
        self.s = self._local.stragglers()
        self._keys: list[MessageKey] = []
        self._key_map: dict[MessageKey, tuple[int, int]] = {}
        for worker in range(self.n):
            cluster, u = divmod(worker, size)
            for j in range(self.messages_per_worker):
                self._keys.append((worker, j))
                self._key_map[(worker, j)] = (cluster, self._local.local_id(u, j))
        encoding = np.zeros((len(self._keys), self.k, 1))
        for q, key in enumerate(self._keys):
            cluster, local = self._key_map[key]
            encoding[q, cluster * size : (cluster + 1) * size, 0] = self._local.rows[local]
        self._init_linear(encoding)

    # -- parameters -------------------------------------------------------------------------
    @classmethod
    def parameter_grid(cls, max_n: int) -> Iterator[dict[str, Any]]:
        """A representative family (order vectors make the full space unbounded).

        For every ``n <= max_n`` and every cluster count with cluster size ``K``:

        - correlated: every ``(r, order)`` when ``K <= 6``; for ``7 <= K <= 12``, ``r`` in
          ``{2, ceil(K / 2)}`` with ``order`` in ``{1, ceil(r / 2), r}``; for larger ``K``,
          ``r = ceil(K / 4)`` with ``order`` in ``{ceil(r / 2), r}``;
        - uncorrelated, ``r`` in ``{2, ..., K}`` (``K <= 6``) or ``{ceil(K / 2), K}``:
          ``orders`` in ``[r - 1, r]``, ``[ceil(r / 2), r]`` and, for ``K <= 10``,
          ``[ceil(r / 2), r - 1, r]``;
        - hybrid (``r = K``): ``[r]`` (fractional repetition), ``[r - 1, r]``,
          ``[ceil(r / 2), r]``;

        keeping the valid ones (threshold above ``K`` only for ``K <= 6`` here). The exhaustive
        patterns are all minimal decodable progress vectors of a cluster, whose number grows
        exponentially with ``K``; this family keeps ``parameter_grid(12)`` near a minute.
        """
        for n in range(1, max_n + 1):
            for clusters in (p for p in range(1, n + 1) if n % p == 0):
                size = n // clusters
                for params in _cluster_family(size):
                    full = {"n": n, "r": params["r"], "clusters": clusters, **params}
                    orders = tuple(sorted(full.get("orders", (full.get("order", 0),))))
                    threshold = _threshold(full["design"], size, orders)
                    if threshold <= size or size <= _FULL_GRID_CLUSTER:
                        yield full

    @classmethod
    def paper_fig1_params(cls) -> dict[str, dict[str, Any]]:
        """The GC-type schemes of the paper's Fig. 1 (K = 40 workers, r = 10)."""
        return {
            "GC": {"n": 40, "r": 10, "clusters": 1, "design": "correlated", "order": 10},
            "UC-MMC": {"n": 40, "r": 10, "clusters": 1, "design": "correlated", "order": 1},
            "GC-MMC-1": {"n": 40, "r": 10, "clusters": 4, "design": "correlated", "order": 6},
            "GC-MMC-2": {
                "n": 40,
                "r": 10,
                "clusters": 4,
                "design": "uncorrelated",
                "orders": [6, 8, 10],
            },
        }

    @classmethod
    def paper_fig1_schemes(cls) -> dict[str, GCMMC]:
        """``paper_fig1_params`` built (Fig. 1's fifth scheme, LCC, is ``lcc`` n=40, k=4)."""
        return {label: cls(**params) for label, params in cls.paper_fig1_params().items()}

    def params(self) -> dict[str, Any]:
        params: dict[str, Any] = {
            "n": self.n,
            "r": self.r,
            "clusters": self.clusters,
            "design": self.design,
        }
        if self.design == "correlated":
            params["order"] = self.order
        else:
            params["orders"] = list(self.orders)
        params["seed"] = self.seed
        return params

    # -- assignment and messages ------------------------------------------------------------
    def partitions(self, worker: int) -> tuple[int, ...]:
        cluster, u = divmod(worker, self.cluster_size)
        base = cluster * self.cluster_size
        return tuple(base + (u + j) % self.cluster_size for j in range(self.r))

    def cluster_of(self, worker: int) -> int:
        """The cluster worker ``worker`` belongs to."""
        return worker // self.cluster_size

    def message_keys(self, worker: int) -> tuple[MessageKey, ...]:
        return tuple((worker, j) for j in range(self.messages_per_worker))

    def all_message_keys(self) -> tuple[MessageKey, ...]:
        return tuple(self._keys)

    def message_prefix(self, key: MessageKey) -> int:
        if key not in self._key_map:
            raise ValueError(f"{self.name}: unknown message key {key!r}")
        return self._local.prefix(key[1])  # type: ignore[index]

    def coded_message(self, key: MessageKey) -> tuple[int, int]:
        """``(cluster, index)`` of the distinct coded message that ``key`` carries.

        Keys with equal values carry the same coded partial gradient (correlated design; the
        hybrid's full sums of a cluster). A simulator can count distinct indices per cluster
        incrementally against ``threshold``.
        """
        if key not in self._key_map:
            raise ValueError(f"{self.name}: unknown message key {key!r}")
        return self._key_map[key]

    def distinct_messages(self) -> int:
        """Number of distinct coded messages per cluster (the hybrid's full sums count once)."""
        return len(self._local.rows)

    def local_encoding(self) -> np.ndarray:
        """Rows of one cluster's distinct coded messages, shape ``(distinct_messages(), K)``."""
        return self._local.rows.copy()

    # -- decodability -----------------------------------------------------------------------
    def _group(self, keys: Iterable[MessageKey]) -> list[dict[int, MessageKey]]:
        """Per cluster: distinct coded index -> first key carrying it."""
        groups: list[dict[int, MessageKey]] = [{} for _ in range(self.clusters)]
        for key in keys:
            try:
                cluster, local = self._key_map[key]
            except (KeyError, TypeError):
                raise ValueError(f"{self.name}: unknown message key {key!r}") from None
            groups[cluster].setdefault(local, key)
        return groups

    def is_decodable(self, keys: Iterable[MessageKey]) -> bool:
        return all(self._local.ok(group.keys()) for group in self._group(keys))

    def completion_times(self, arrivals: np.ndarray) -> np.ndarray:
        """``is_decodable`` over time, vectorised when the clusters decode by count (``mds``).

        A distinct coded message counts from its first copy (``min`` over the keys carrying
        it); a cluster decodes at the ``threshold``-th distinct lower-order message or at its
        first full sum (hybrid), whichever is earlier; the gradient at the slowest cluster.
        Clusters that decode by matching use the generic rule.
        """
        arrivals = self._arrivals(arrivals)
        if not self._local.mds:
            return super().completion_times(arrivals)
        # inf column for the padding of coded messages with fewer copies
        padded = np.concatenate([arrivals, np.full((arrivals.shape[0], 1), np.inf)], axis=1)
        first = padded[:, self._copies()].min(axis=3)  # (trials, clusters, distinct)
        coded = len(self._local.supports)  # distinct ids 0 .. coded - 1; the full sum after
        if self.threshold <= coded:
            done = np.partition(first[:, :, :coded], self.threshold - 1, axis=2)
            done = done[:, :, self.threshold - 1]
        else:
            done = np.full(first.shape[:2], np.inf)
        if self._local.full >= 0:
            done = np.minimum(done, first[:, :, self._local.full])
        return done.max(axis=1)

    def _copies(self) -> np.ndarray:
        """Key columns carrying each distinct coded message, ``(clusters, distinct, copies)``,
        padded with ``len(keys)`` (the inf column ``completion_times`` appends)."""
        cached = getattr(self, "_copy_index", None)
        if cached is not None:
            return cached
        carriers: list[list[list[int]]] = [
            [[] for _ in range(self.distinct_messages())] for _ in range(self.clusters)
        ]
        for q, key in enumerate(self._keys):
            cluster, local = self._key_map[key]
            carriers[cluster][local].append(q)
        width = max(len(keys) for cluster in carriers for keys in cluster)
        index = np.full((self.clusters, self.distinct_messages(), width), len(self._keys))
        for c, cluster in enumerate(carriers):
            for i, keys in enumerate(cluster):
                index[c, i, : len(keys)] = keys
        self._copy_index: np.ndarray = index
        return index

    def progress_decodable(self, progress: Sequence[int]) -> bool:
        """Whether worker ``i`` having sent its first ``progress[i]`` messages suffices."""
        size = self.cluster_size
        require(
            len(progress) == self.n,
            f"{self.name} needs one progress entry per worker (got {len(progress)}, n={self.n})",
        )
        return all(
            self._local.progress_ok(progress[c * size : (c + 1) * size])
            for c in range(self.clusters)
        )

    # -- decoding ---------------------------------------------------------------------------
    def _solve(self, keys: tuple[MessageKey, ...]) -> tuple[tuple[MessageKey, ...], np.ndarray]:
        groups = self._group(keys)
        short = [c for c, group in enumerate(groups) if not self._local.ok(group.keys())]
        if short:
            local = self._local
            needed = sum(
                1 if local.full >= 0 else max(local.rank - len(groups[c]), 1) for c in short
            )
            candidates = [
                key
                for key in self._keys
                if self._key_map[key][0] in short
                and self._key_map[key][1] not in groups[self._key_map[key][0]]
            ]
            detail = "; ".join(f"cluster {c} has {len(groups[c])}" for c in short)
            raise NotDecodableError(
                f"{self.name} needs {self.threshold} distinct coded messages per cluster"
                f"{'' if self.mds else ' (fewer if they can be matched to its partitions)'}"
                f"{' or one full sum' if local.full >= 0 else ''}: {detail}",
                needed=needed,
                candidates=candidates,
            )
        used: list[MessageKey] = []
        coefficients: list[np.ndarray] = []
        for group in groups:
            ids, local_a, _ = self._local.solve(tuple(sorted(group)), self.residual_tol)
            used.extend(group[i] for i in ids)
            coefficients.append(local_a)
        return tuple(used), np.concatenate(coefficients)[None, :]

    def _condition(self, used: tuple) -> float:
        """Worst condition number of the clusters' decoding systems (singular values of the
        received rows restricted to the code's subspace)."""
        return max(
            self._local.solve(tuple(sorted(group)), self.residual_tol)[2]
            for group in self._group(used)
        )

    # -- verification hooks -----------------------------------------------------------------
    def minimal_progress_vectors(self) -> list[tuple[int, ...]]:
        """Every minimal decodable progress vector of one cluster, in a fixed order.

        Entry ``u`` is how many messages local worker ``u`` has sent; minimal means that
        withdrawing the last message of any worker breaks decodability. Their number grows
        exponentially with the cluster size; ``count_patterns`` counts without listing.
        """
        return self._local.minimal()

    def _pattern(self, local: Sequence[Sequence[int]]) -> Pattern:
        size = self.cluster_size
        return Pattern(
            frozenset(
                (c * size + u, j)
                for c, vector in enumerate(local)
                for u, p in enumerate(vector)
                for j in range(p)
            )
        )

    def patterns(
        self, *, exhaustive: bool = True, rng: np.random.Generator | None = None, limit: int = 200
    ) -> Iterator[Pattern]:
        """Message sets in which every worker sent a prefix of its messages.

        Exhaustive: every minimal decodable progress vector of a cluster (``count_patterns``
        of them), cluster ``c`` at vector ``(i + c) mod count`` in pattern ``i``: clusters
        decode independently, so each meets every vector. Random: ``limit`` patterns with
        every cluster alternately at a random minimal vector (thinned in random order) or at a
        random decodable one (where the correlated design's duplicates show up).
        """
        if exhaustive:
            vectors = self.minimal_progress_vectors()
            for i in range(len(vectors)):
                yield self._pattern([vectors[(i + c) % len(vectors)] for c in range(self.clusters)])
            return
        rng = rng if rng is not None else np.random.default_rng(0)
        for i in range(limit):
            yield self._pattern(
                [
                    self._local.random_progress(rng, minimal=(i + c) % 2 == 0)
                    for c in range(self.clusters)
                ]
            )

    def count_patterns(self) -> int:
        return self._local.count_minimal()


def _threshold(design: str, size: int, orders: tuple[int, ...]) -> int:
    """The paper's count of coded messages per cluster (``orders = (order,)`` if correlated):
    zeros in a column of the cluster's mask matrix, plus one."""
    coded = orders[:-1] if design == "hybrid" else orders
    return sum(size - o for o in coded) + 1


def _check_matching_size(design: str, size: int, orders: tuple[int, ...]) -> None:
    threshold = _threshold(design, size, orders)
    require(
        threshold <= size or size <= MATCHING_MAX_CLUSTER,
        f"gc-mmc supports a threshold above the cluster size (decodability by matching) only "
        f"for clusters of at most {MATCHING_MAX_CLUSTER} workers (got threshold={threshold}, "
        f"n / clusters={size}, orders={list(orders)})",
    )


def _cluster_family(size: int) -> Iterator[dict[str, Any]]:
    """The per-cluster-size part of ``GCMMC.parameter_grid``."""

    def half(x: int) -> int:
        return -(-x // 2)

    if size <= _FULL_GRID_CLUSTER:
        correlated = [(r, o) for r in range(1, size + 1) for o in range(1, r + 1)]
        loads = list(range(2, size + 1))
    elif size <= 12:
        correlated = [(r, o) for r in sorted({2, half(size)}) for o in sorted({1, half(r), r})]
        loads = sorted({half(size), size})
    else:
        r = -(-size // 4)
        correlated = [(r, o) for o in sorted({half(r), r})]
        loads = sorted({half(size), size})
    for r, o in correlated:
        yield {"r": r, "design": "correlated", "order": o}
    families = []
    for r in loads:
        for orders in ([r - 1, r], [half(r), r], [half(r), r - 1, r]):
            if len(orders) == 3 and size > _THREE_ORDERS_CLUSTER:
                continue
            if len(set(orders)) == len(orders) and min(orders) >= 1:
                families.append(("uncorrelated", r, orders))
    for orders in ([size], [size - 1, size], [half(size), size]):
        if len(set(orders)) == len(orders) and min(orders) >= 1:
            families.append(("hybrid", size, orders))
    for design, r, orders in dict.fromkeys((d, r, tuple(o)) for d, r, o in families):
        yield {"r": r, "design": design, "orders": list(orders)}


def _bounded_compositions(parts: int, bound: int, total: int) -> Iterator[tuple[int, ...]]:
    """Every vector in ``[0, bound]^parts`` summing to ``total``."""
    if parts == 0:
        if total == 0:
            yield ()
        return
    for first in range(min(bound, total), -1, -1):
        if total - first <= bound * (parts - 1):
            for rest in _bounded_compositions(parts - 1, bound, total - first):
                yield (first, *rest)


def _count_bounded_compositions(parts: int, bound: int, total: int) -> int:
    ways = [1] + [0] * total
    for _ in range(parts):
        ways = [sum(ways[max(0, x - bound) : x + 1]) for x in range(total + 1)]
    return ways[total]


def _disjoint_runs(size: int, longest: int, total: int) -> Iterator[tuple[int, ...]]:
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


def _count_disjoint_runs(size: int, longest: int, total: int) -> int:
    """Number of ``_disjoint_runs``: ``j`` runs composing ``total`` and ``j`` gaps composing
    ``size - total`` around the cycle, each placement counted once per choice of first run."""
    count = 0
    for runs in range(1, total + 1):
        lengths = _count_bounded_compositions(runs, longest - 1, total - runs)
        gaps = math.comb(size - total + runs - 1, runs - 1)
        count += size * lengths * gaps // runs
    return count
