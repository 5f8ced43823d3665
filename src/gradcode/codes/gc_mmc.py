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

Construction and decoding inside a cluster: ``gradcode.codes.gc_mmc_cluster`` (why the
random construction rather than the paper's Reed-Solomon one, and how a draw is chosen).

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

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, ClassVar

import numpy as np

from gradcode.codes.base import MessageKey, NotDecodableError, Pattern, check_int, require
from gradcode.codes.gc_mmc_cluster import cluster_code, cluster_threshold
from gradcode.codes.gc_mmc_params import FULL_GRID_CLUSTER, cluster_family, fig1_params
from gradcode.codes.linear import LinearCode

DESIGNS = ("correlated", "uncorrelated", "hybrid")

#: largest cluster allowed when the threshold exceeds the cluster size (see the module notes)
MATCHING_MAX_CLUSTER = 8


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
        self._local = cluster_code(design, size, self.r, self.order or 0, self.orders, self.seed)
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
                for params in cluster_family(size):
                    full = {"n": n, "r": params["r"], "clusters": clusters, **params}
                    orders = tuple(sorted(full.get("orders", (full.get("order", 0),))))
                    threshold = cluster_threshold(full["design"], size, orders)
                    if threshold <= size or size <= FULL_GRID_CLUSTER:
                        yield full

    @classmethod
    def paper_fig1_params(cls) -> dict[str, dict[str, Any]]:
        """The GC-type schemes of the paper's Fig. 1 (K = 40 workers, r = 10)."""
        return fig1_params()

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


def _check_matching_size(design: str, size: int, orders: tuple[int, ...]) -> None:
    threshold = cluster_threshold(design, size, orders)
    require(
        threshold <= size or size <= MATCHING_MAX_CLUSTER,
        f"gc-mmc supports a threshold above the cluster size (decodability by matching) only "
        f"for clusters of at most {MATCHING_MAX_CLUSTER} workers (got threshold={threshold}, "
        f"n / clusters={size}, orders={list(orders)})",
    )
