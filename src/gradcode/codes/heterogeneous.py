"""Heterogeneous gradient coding with arbitrary placement, stragglers and adversaries (paper 004:
Jahani-Nezhad & Maddah-Ali, "Optimal Communication-Computation Trade-Off in Heterogeneous
Gradient Coding", Sections III-B to III-D).

Placement. ``placement[w]`` lists the partitions worker ``w`` holds (any sizes, ``|Gamma_w| >
0``), ``A_i`` is the set of workers holding partition ``i`` and ``r = min_i |A_i|``. With ``s``
stragglers and ``a`` adversaries Theorem 1 needs ``r >= s + 2a + 1`` and gives the optimal
message length ``l / (r - s - 2a)``, so ``m = r - s - 2a`` by default (any ``1 <= m <= r - s -
2a`` is accepted: the scheme works unchanged and then needs only ``n - r + m + 2a``
responders). ``cyclic_placement`` and ``random_placement`` (seeded, optionally weighted for
heterogeneous loads) build placements.

Encoding (eq. 13). Each partial is split into ``m`` chunks ``g_i[u]``; worker ``w`` sends
``f(alpha_w)`` of the universal polynomial (eq. 14)::

    f(x) = sum_u L_u(x) sum_i g_i[u] prod_{j not in A_i} (x - alpha_j) / (beta_u - alpha_j),
    L_u(x) = prod_{v != u} (x - beta_v) / (beta_u - beta_v),

which only involves the partitions worker ``w`` holds (the product vanishes at every
non-holder), has degree ``D = n - r + m - 1`` (``= n - s - 2a - 1`` for the default ``m``) and
satisfies ``f(beta_u) = sum_i g_i[u]`` (eq. 15). The encoding tensor ``(n, k, m)`` holds
``f``'s coefficients at ``x = alpha_w``; with the example's points (``alpha_n = n``, ``beta =
(0, -1)``) it reproduces the five messages printed in Sec. III-B exactly (tested).

Decoding, ``a = 0``: a ``LinearCode``. From any ``D + 1`` responders (``n - s`` for the default
``m``) the master interpolates ``f`` through the responders' points and evaluates it at the
``beta`` (second barycentric formula over all responders: exact since ``deg f = D``, and
better conditioned than any ``D + 1`` of them). The ``(m, |R|)`` coefficients are cached per
responder set, so a repeated decode is one linear combination of the messages per chunk.

Decoding, ``a > 0`` (the paper invokes "Reed-Solomon decoding" without details). The
responses form a real Reed-Solomon code of length ``M = |R|`` and dimension ``D + 1``. Our
decoder, deterministic given its inputs, costs about ``2a + 3 + m`` passes over the messages:

1. Syndromes. ``H`` (orthonormal rows, ``(M - D - 1, M)``) spans the checks of degree-``D``
   polynomials at the responders' points; ``Sigma = G^T H X`` with a fixed seeded Gaussian
   ``G`` of ``a + 1`` columns. ``Sigma ~ 0`` (relative size below ``detection_tol = 1e-12``;
   clean words measure <= 2e-15) means no detectable corruption: decode linearly from all.
2. Projection. ``Y = X Sigma^T`` (``(M, a + 1)``): the messages projected on their own syndrome
   directions. Every corrupted message keeps a non-zero projection (row ``b`` of the error part
   is ``Gram(errors)[b] G^T H_B``, and ``G^T H_B`` has full row rank), so colluding,
   scaled-copy or tiny corruptions stay visible and there is no fixed projection to dodge.
3. Berlekamp-Welch on the ``a + 1`` scalar words at once, in the Chebyshev basis: error
   locators of degree ``a`` span the null space of the stacked ``P_perp diag(y_t) V_E``
   (``P_perp``: complement of the degree ``D + a`` polynomials), found by SVD. The ``a``
   responders where a basis of the (numerical) null space is smallest, dimension 1, 2, ...
   tried in turn, are set aside; the rest ``S`` is accepted only if its projections lie on a
   degree-``D`` polynomial. Since ``|S| >= D + 1 + a``, that proves ``S`` clean: a corrupted
   member would leave ``D + 1`` clean points on the same polynomial, i.e. no error.
4. The gradient is decoded linearly (cached coefficients) from ``S``. Set-aside responders
   whose projection misses ``S``'s least-squares polynomial by more than 30 noise levels (the
   noise measured from ``S``'s own residual) are reported (``decode_result(...).adversaries``);
   the honest ones set aside with them are not.

Non-finite messages. A message holding a NaN or an infinity would pass step 1 silently (``not
nan > tol``); it is a liar located before step 1, left out as an erasure and counted among
the ``a`` (``gradcode.codes.liars.nonfinite``); more than ``a`` of them (any, for ``a = 0``)
are refused at once.

Guarantees. With ``M >= D + 1 + 2a`` responders (``is_decodable``: ``n - s`` for the default
``m``) of which at most ``a`` are corrupted, ``decode`` is exact and names exactly the
corrupted responders whose corruption is above round-off (``detection_tol`` of the messages'
norm; smaller ones cannot be told from round-off and perturb the result by about as much).
More than ``a`` corruptions are detected, not corrected: in general position (e.g. random
noise, independent of the data) on any number of responders they raise
``NotDecodableError`` ("more than a = ..."; ``needed=None``, waiting does not help, as we
never correct more than ``a``), with probability 1. But ``a + 1`` colluding adversaries can
turn the word into another gradient's codeword with ``a`` errors (Theorem 1's converse), which
no decoder can tell apart: we then return that gradient and name ``a`` honest workers
(``test_colluding_a_plus_one_can_impersonate_another_gradient`` shows it). The MPI runtime's
emulation, which knows who lies, stops such a run when an honest worker is named
(``gradcode.train.faults.caught``); a real deployment cannot.

Evaluation points (the paper leaves them free). The ``2n + 1`` Chebyshev-Lobatto points
``cos(j pi / 2n)`` are split: odd ``j`` (the Chebyshev points of the first kind) are the
workers' ``alpha``, ``m`` evenly spread interior even ``j`` are the ``beta``, so every
``beta`` lies between two ``alpha``. Which worker gets which ``alpha`` decides the size of the
encoding coefficients, hence how much round-off the decoder amplifies: ``assign_nodes``
starts from the golden-ratio order (spreads cyclic windows of workers over the interval) and
swaps workers while the coefficient sums shrink (at most ``40 n`` trials, ~0.1 s at ``n =
50``). Max relative errors over 200 random straggler patterns, in index order / golden order
/ after the swaps: cyclic ``n = 30``, ``s = 7``, ``m = 2``: 0.6 / 5e-10 / 8e-12; cyclic ``n =
50``, ``s = 12``, ``m = 2``: 2e+9 / 2e-6 / 2e-7; random placement ``n = 50``, ``r = 25``, ``s =
2``: 3e-5 / 3e-2 / 7e-10. No deviation from eq. 13; only the choice of points.

Numerical soundness (``verify``, random partials). ``numerically_sound_up_to = 31``: the
stability family of ``gradcode.codes.stability`` (cyclic, ``s = max(1, n // 4)``, ``r = s +
2``, ``m = 2``) stays below 1e-8 on every straggler pattern we tried up to ``n = 31``, and
from ``n = 32`` on its worst patterns (``s`` stragglers on consecutive nodes, leaving a gap
next to a ``beta``: polynomial interpolation across a gap) exceed it; on random patterns it
stays below 1e-8 up to ``n = 40``. This module's own family (``parameter_grid``: ``s <= 3``,
``a <= 2`` above ``n = 12``) stays below 4e-10 through ``n = 50``.

    n    stability family, 200 random | clustered stragglers | parameter_grid, 40 random
    13   6e-14                        | 1e-13                | 3e-13
    20   6e-12                        | 1e-11                | 3e-12
    25   5e-12                        | 2e-10                | 9e-12
    31   5e-11                        | 6e-09                | 5e-12
    32   5e-11                        | 4e-08                | 3e-10
    40   2e-10                        | 7e-06                | 3e-11
    41   6e-08                        | 5e-06                | 1e-10
    50   1e-08                        | 1e-03                | 1e-10

Shapes: ``partials`` ``(load(w), l)``; a message ``(ceil(l / m),)``; ``decode`` ``(l,)``;
``encoding_matrix()`` ``(n, k, m)``; ``evaluation_points()`` ``(alpha (n,), beta (m,))``;
``evaluate(partials (k, l), x (X,))`` ``(X, ceil(l / m))``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from gradcode.codes.base import DecodeResult, MessageKey, NotDecodableError, check_int, require
from gradcode.codes.capabilities import Capabilities
from gradcode.codes.combine import combine_chunks, message_vectors, split_chunks
from gradcode.codes.completion import CompletionRule, order_statistic
from gradcode.codes.liars import beyond_a_nonfinite, nonfinite
from gradcode.codes.linear import LinearCode
from gradcode.lru import LRUCache

_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0
_EPS = float(np.finfo(np.float64).eps)
_TINY = float(np.finfo(np.float64).tiny)
#: a set-aside responder is reported corrupted when its misfit exceeds this many noise levels
_NOISE_SIGMAS = 30.0


# -- placements -----------------------------------------------------------------------------
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


# -- evaluation points and the universal polynomial -------------------------------------------
def golden_order(n: int) -> np.ndarray:
    """``order[w]``: the rank of ``frac(w * 0.618...)`` among ``w = 0..n-1`` (a permutation)."""
    fractions = (np.arange(n) * _GOLDEN) % 1.0
    order = np.empty(n, dtype=np.int64)
    order[np.argsort(fractions, kind="stable")] = np.arange(n)
    return order


def exact_points(n: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Candidate ``alpha`` nodes (``(n,)``, not yet assigned to workers) and the ``beta``.

    All are Chebyshev-Lobatto points ``cos(j pi / 2n)``: odd ``j`` (Chebyshev points of the
    first kind) for the workers, ``m`` evenly spread interior even ``j`` for the ``beta``.
    """
    nodes = np.cos((2 * np.arange(n) + 1) * np.pi / (2 * n))
    if m <= n - 1:
        slots = [((u + 1) * 2 * n + (m + 1)) // (2 * (m + 1)) for u in range(m)]
    else:  # m == n only when everyone holds everything and s = a = 0
        slots = list(range(m))
    beta = np.cos(np.array(slots, dtype=np.float64) * np.pi / n)
    return nodes, beta


def _encoding_size(
    holders: np.ndarray, nodes: np.ndarray, beta: np.ndarray
) -> Callable[[np.ndarray], float]:
    """``size(order)``: log of the 2-norm over workers of their encoding coefficients' sum.

    ``order[w]`` is worker ``w``'s node. Works in log space per factor (eq. 13's products of
    up to ``n`` ratios), then one matrix product per term: ~0.1 ms at ``n = 50``.
    """
    nonholders = (1 - holders).astype(np.float64)
    held = holders.astype(bool)
    differences = nodes[:, None] - nodes[None, :]
    np.fill_diagonal(differences, 1.0)  # a worker never multiplies by its own factor
    log_nodes = np.log(np.abs(differences))
    log_beta = np.log(np.abs(beta[:, None] - nodes[None, :]))  # (m, n)
    lagrange = np.ones((nodes.size, beta.size))
    for u in range(beta.size):
        for v in range(beta.size):
            if u != v:
                lagrange[:, u] *= (nodes - beta[v]) / (beta[u] - beta[v])
    lagrange = np.abs(lagrange)

    def size(order: np.ndarray) -> float:
        numerators = log_nodes[np.ix_(order, order)] @ nonholders  # (n, k)
        denominators = -(log_beta[:, order] @ nonholders)  # (m, k)
        shift = denominators.max(axis=0)
        inner = lagrange[order] @ np.exp(denominators - shift)  # (n, k)
        logs = np.where(held, numerators + shift, -np.inf)
        top = logs.max(axis=1, keepdims=True)
        per_worker = top[:, 0] + np.log((np.exp(logs - top) * inner).sum(axis=1))
        largest = per_worker.max()
        return float(largest + 0.5 * np.log(np.sum(np.exp(2.0 * (per_worker - largest)))))

    return size


def assign_nodes(
    holders: np.ndarray, nodes: np.ndarray, beta: np.ndarray, *, seed: int = 0
) -> np.ndarray:
    """``order[w]``: which of ``nodes`` worker ``w`` gets, chosen to keep the encoding small.

    Starts from the golden-ratio order (spreads cyclic windows of workers over the interval)
    and swaps random pairs of workers while the 2-norm of the workers' coefficient sums
    (``_encoding_size``) decreases: at most ``40 n`` proposals, stopping after ``3 n`` in a
    row fail. Deterministic given the placement. Smaller coefficients mean smaller messages
    for the same gradient, hence less round-off to amplify when decoding.
    """
    n = holders.shape[0]
    order = golden_order(n)
    if n < 3:
        return order
    size = _encoding_size(holders, nodes, beta)
    current = size(order)
    rng = np.random.default_rng(seed)
    failures = 0
    for u, v in rng.integers(0, n, size=(40 * n, 2)):
        if u == v:
            continue
        order[[u, v]] = order[[v, u]]
        candidate = size(order)
        if candidate < current - 1e-9:
            current, failures = candidate, 0
            continue
        order[[u, v]] = order[[v, u]]
        failures += 1
        if failures > 3 * n:
            break
    return order


def universal_coefficients(
    x: np.ndarray, holders: np.ndarray, alpha: np.ndarray, beta: np.ndarray
) -> np.ndarray:
    """Coefficients of ``f(x)`` (eq. 14) on the chunks: shape ``(len(x), k, m)``.

    ``holders`` is the ``(n, k)`` 0/1 placement matrix; ``f(x) = sum_{i,u} C[x, i, u] g_i[u]``
    (``g_i[u]`` the ``u``-th chunk of partial ``i``). Products are summed in log space, so they
    neither overflow nor underflow for large ``n``; a factor ``x - alpha_j = 0`` gives an exact
    zero.
    """
    x = np.asarray(x, dtype=np.float64).reshape(-1)
    nonholders = (1 - holders).astype(np.float64)  # (n, k)
    ratio = (x[:, None, None] - alpha[None, :, None]) / (beta[None, None, :] - alpha[None, :, None])
    zero = ratio == 0
    logs = np.log(np.abs(np.where(zero, 1.0, ratio)))  # (X, n, m)
    negative = (ratio < 0).astype(np.float64)
    log_p = np.einsum("xjl,ji->xil", logs, nonholders)
    sign_p = 1.0 - 2.0 * (np.einsum("xjl,ji->xil", negative, nonholders) % 2)
    sign_p[np.einsum("xjl,ji->xil", zero.astype(np.float64), nonholders) > 0] = 0.0
    lagrange = np.ones((x.size, beta.size))
    for u in range(beta.size):
        for v in range(beta.size):
            if u != v:
                lagrange[:, u] *= (x - beta[v]) / (beta[u] - beta[v])
    return sign_p * np.exp(log_p) * lagrange[:, None, :]


def barycentric_matrix(nodes: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Weights ``W`` (``(len(targets), len(nodes))``) of polynomial interpolation.

    ``W @ values`` evaluates the interpolant of degree ``len(nodes) - 1`` through
    ``(nodes, values)`` at ``targets`` (second barycentric formula; targets differ from nodes).
    """
    differences = nodes[:, None] - nodes[None, :]
    np.fill_diagonal(differences, 1.0)
    # the barycentric formula is invariant to a common scale of the weights: rescale each
    # factor by the capacity of [-1, 1] to keep the products in range
    signs = np.prod(np.sign(differences), axis=1)
    logs = np.log(np.abs(2.0 * differences)).sum(axis=1)
    weights = signs * np.exp(-(logs - logs.min()))
    terms = weights[None, :] / (targets[:, None] - nodes[None, :])
    return terms / terms.sum(axis=1, keepdims=True)


def _complement(basis: np.ndarray) -> np.ndarray:
    """Orthonormal basis ``(rows, rows - cols)`` of the complement of ``basis``'s columns."""
    q, _ = np.linalg.qr(basis, mode="complete")
    return q[:, basis.shape[1] :]


class UniversalPolynomialCode(LinearCode):
    """Shared part of ``heterogeneous`` and ``berrut``: a placement and eq. 13's encoding.

    Subclasses validate their parameters, set ``_placement``, ``_holders``, ``n, k, r, s, a, m``
    and call ``_set_up(nodes, beta)`` with the candidate worker nodes, which ``assign_nodes``
    hands out to the workers.
    """

    _placement: tuple[tuple[int, ...], ...]
    _holders: np.ndarray
    _alpha: np.ndarray
    _beta: np.ndarray
    #: minimum replication ``min_i |A_i|``
    r: int
    #: degree ``n - r + m - 1`` of the universal polynomial ``f``
    degree: int

    @staticmethod
    def _holders_of(placement: tuple[tuple[int, ...], ...]) -> np.ndarray:
        """The ``(n, k)`` 0/1 placement matrix."""
        holders = np.zeros((len(placement), 1 + max(p for row in placement for p in row)), int)
        for worker, parts in enumerate(placement):
            holders[worker, list(parts)] = 1
        return holders

    def _set_up(self, nodes: np.ndarray, beta: np.ndarray) -> None:
        self._beta = beta
        self._alpha = nodes[assign_nodes(self._holders, nodes, beta)]
        self.degree = self.n - self.r + self.m - 1
        self._init_linear(
            universal_coefficients(self._alpha, self._holders, self._alpha, self._beta)
        )

    def partitions(self, worker: int) -> tuple[int, ...]:
        return self._placement[worker]

    def placement(self) -> list[list[int]]:
        """The placement, one list of partitions per worker."""
        return [list(parts) for parts in self._placement]

    def evaluation_points(self) -> tuple[np.ndarray, np.ndarray]:
        """``(alpha, beta)``: the workers' points ``(n,)`` and the chunks' points ``(m,)``."""
        return self._alpha.copy(), self._beta.copy()

    def evaluate(self, partials: np.ndarray, x: np.ndarray) -> np.ndarray:
        """The universal polynomial ``f`` (eq. 14) at points ``x``: shape ``(len(x), L / m)``.

        ``partials`` holds all ``k`` partials, shape ``(k, l)``; ``f(alpha_w)`` is worker
        ``w``'s message and ``f(beta_u)`` chunk ``u`` of the gradient.
        """
        coefficients = universal_coefficients(x, self._holders, self._alpha, self._beta)
        return np.einsum("xil,ilw->xw", coefficients, split_chunks(np.asarray(partials), self.m))

    def _known(self, keys: Iterable[MessageKey]) -> set:
        keys = set(keys)
        unknown = [key for key in keys if key not in self._key_index]
        if unknown:
            raise ValueError(f"{self.name}: unknown message keys {sorted(unknown, key=repr)}")
        return keys

    def _weights(self, keys: tuple[MessageKey, ...]) -> np.ndarray:
        """Decoding weights ``(m, len(keys))`` of the responders ``keys``."""
        raise NotImplementedError

    def _solve(self, keys: tuple[MessageKey, ...]) -> tuple[tuple[MessageKey, ...], np.ndarray]:
        return keys, self._weights(keys)

    def _condition(self, used: tuple) -> float:
        # the Lebesgue constant at the beta: how much the decoder amplifies message errors
        return float(np.abs(self._weights(used)).sum(axis=1).max())


class InterpolationThreshold:
    """The decodability rule of a code decoded by interpolating a polynomial of degree
    ``degree`` through the responders with up to ``a`` of them wrong (eq. 23): any
    ``degree + 1 + 2a`` distinct workers, ``_threshold``. Hosts set ``degree``, ``a`` and
    ``_threshold``, implement ``_known(keys)`` (the keys, checked) and name in
    ``degree_formula`` how ``D`` arises (for the ``NotDecodableError`` message)."""

    degree_formula: ClassVar[str]
    degree: int
    a: int
    n: int
    name: ClassVar[str]
    _threshold: int

    # no stubs of the host's methods here: the mixin comes first in the host's bases, so a
    # stub would shadow them (``_known``, and ``GradientCode._arrivals``)

    def min_responders(self) -> int:
        return self._threshold

    def completion_times(self, arrivals: np.ndarray) -> np.ndarray:
        """Any ``D + 1 + 2a`` workers decode: that order statistic of the arrivals."""
        return order_statistic(self._arrivals(arrivals), self._threshold)

    def completion_rule(self) -> CompletionRule:
        """Any ``D + 1 + 2a`` of the ``n`` workers."""
        keys = self.all_message_keys()
        return CompletionRule.any_of(keys, self._threshold)

    def is_decodable(self, keys: Iterable[MessageKey]) -> bool:
        """At least ``D + 1 + 2a`` distinct workers answered: the interpolation rule of the
        paper's decoder, which is what ``decode`` runs."""
        return len(self._known(keys)) >= self._threshold

    def _too_few(self, keys: Iterable[MessageKey]) -> NotDecodableError:
        got = set(keys)
        return NotDecodableError(
            f"{self.name} needs D + 1 + 2a = {self._threshold} responders "
            f"(D = {self.degree_formula} = {self.degree}, a = {self.a}); got {len(got)}",
            needed=self._threshold - len(got),
            candidates=[w for w in range(self.n) if w not in got],
        )


class HeterogeneousCode(InterpolationThreshold, UniversalPolynomialCode):
    """Paper 004's universal-polynomial gradient code for an arbitrary placement.

    Parameters: ``placement`` (list of partition lists, one per worker), ``s`` stragglers,
    ``a`` adversaries, ``m`` chunks (default and maximum ``r - s - 2a``).
    """

    name = "heterogeneous"
    capabilities: ClassVar[Capabilities] = Capabilities(corrects_adversaries=True)
    degree_formula = "n - r + m - 1"
    numerically_sound_up_to: ClassVar[int | None] = 31
    #: relative size below which a syndrome or a residual counts as round-off (see docstring)
    detection_tol: ClassVar[float] = 1e-12
    _parity_cache_size: ClassVar[int] = 256

    def __init__(
        self,
        placement: Sequence[Sequence[int]],
        s: int = 0,
        a: int = 0,
        m: int | None = None,
    ) -> None:
        self._placement = validate_placement(self.name, placement)
        self.n = len(self._placement)
        self.s = check_int("s", self.name, s)
        self.a = check_int("a", self.name, a)
        self._holders = self._holders_of(self._placement)
        self.k = self._holders.shape[1]
        self.r = int(self._holders.sum(axis=0).min())
        require(
            self.r >= self.s + 2 * self.a + 1,
            f"{self.name} needs r >= s + 2a + 1 (got r={self.r}, s={self.s}, a={self.a})",
        )
        largest = self.r - self.s - 2 * self.a
        self.m = largest if m is None else check_int("m", self.name, m, minimum=1)
        require(
            self.m <= largest,
            f"{self.name} needs m <= r - s - 2a "
            f"(got m={self.m}, r={self.r}, s={self.s}, a={self.a})",
        )
        self._m_given = m is not None
        self._set_up(*exact_points(self.n, self.m))
        self._threshold = self.degree + 1 + 2 * self.a
        self._parity: LRUCache[np.ndarray] = LRUCache(self._parity_cache_size)

    # -- description ------------------------------------------------------------------------
    @classmethod
    def parameter_grid(cls, max_n: int) -> Iterator[dict[str, Any]]:
        """Representative family (the placement space is unbounded).

        For every ``n <= max_n``, cyclic placements (``k = n``, worker ``w`` holds ``w .. w + r
        - 1``) with every ``r`` for ``n <= 12`` and ``r`` in ``{2, 3, 5, n // 2, n - 1, n}``
        above; seeded random placements (``k`` in ``{n, n + 3, ceil(n / 2)}``, ``r`` in ``{2,
        3, 4}``); and heterogeneous loads (``random_placement`` with two workers four times as
        likely to hold a partition, ``r`` in ``{3, 5}``). Each with ``a = 0`` and ``s`` in
        ``{0, 1, 2, r // 2, r - 1}``, and every ``a >= 1`` the replication allows with ``s`` in
        ``{0, 1, 2}``, at the optimal ``m``; ``m = 1`` is added where it is smaller
        and ``s = 0, a <= 1``. Above ``n = 12`` (random patterns only in the tests) ``s <= 3``
        and ``a <= 2``, the range whose error we measured below 4e-10 through ``n = 50``.
        """
        for n in range(1, max_n + 1):
            yield from cls._grid_for(n)

    @classmethod
    def _grid_for(cls, n: int) -> Iterator[dict[str, Any]]:
        small = n <= 12
        replications = range(1, n + 1) if small else (2, 3, 5, n // 2, n - 1, n)
        families = [(cyclic_placement(n, r), r) for r in sorted(set(replications))]
        if n >= 3:
            for k in sorted({n, n + 3, -(-n // 2)}):
                for r in (2, 3, 4):
                    if r <= n:
                        seed = 1000 * n + 10 * k + r
                        families.append((random_placement(n, k, r, seed=seed), r))
            for r in (3, 5):
                if r <= n:
                    weights = [4.0, 4.0] + [1.0] * (n - 2)
                    families.append((random_placement(n, n, r, seed=7 * n + r, weights=weights), r))
        for placement, r in families:
            for s, a in _stragglers_and_adversaries(r, small):
                yield {"placement": placement, "s": s, "a": a}
                if s == 0 and a <= 1 and r - 2 * a > 1:
                    yield {"placement": placement, "s": s, "a": a, "m": 1}

    @classmethod
    def for_worker_times(cls, times: Sequence[float]) -> Iterator[dict[str, Any]]:
        """``speed_placement`` (loads sized to the workers' times) for ``k`` in ``{n, 2 n}``
        and every replication ``r``, with ``a = 0``, ``s < r`` (``s <= 3`` above ``n = 12``,
        the range ``parameter_grid`` measured) and the optimal ``m = r - s``."""
        n = len(times)
        for k in (n, 2 * n):
            for r in range(1, n + 1):
                placement = speed_placement(k, r, times)
                for s in range(min(r, 4) if n > 12 else r):
                    yield {"placement": placement, "s": s}

    def params(self) -> dict[str, Any]:
        params: dict[str, Any] = {
            "placement": [list(parts) for parts in self._placement],
            "s": self.s,
            "a": self.a,
        }
        if self._m_given:
            params["m"] = self.m
        return params

    # -- decoding ---------------------------------------------------------------------------
    def _weights(self, keys: tuple[MessageKey, ...]) -> np.ndarray:
        if len(keys) < self.degree + 1:
            raise self._too_few(keys)
        return barycentric_matrix(self._alpha[list(keys)], self._beta)

    def decode_result(self, messages: Mapping[MessageKey, np.ndarray], length: int) -> DecodeResult:
        """The gradient ``(length,)``; ``adversaries``: the responders found corrupted.

        Raises ``NotDecodableError`` with fewer than ``D + 1 + 2a`` responders or when more
        corruption is detected than the responders can correct.
        """
        keys = tuple(sorted(self._known(messages), key=repr))
        if len(keys) < self._threshold:
            raise self._too_few(keys)
        broken = nonfinite({key: messages[key] for key in keys})
        if len(broken) > self.a:
            raise beyond_a_nonfinite(self.name, self.a, broken)
        if self.a == 0:
            return super().decode_result(messages, length)
        # a non-finite message is a located liar: an erasure that spends one of the a errors
        # (M - e responders still reach D + 1 + 2 (a - e))
        keys = tuple(key for key in keys if key not in broken)
        width = self.message_length(length)
        vectors = message_vectors(self.name, messages, keys, width)
        clean, bad = self._correct(keys, vectors, self.a - len(broken))
        bad = tuple(sorted((*broken, *bad), key=repr))
        used, coefficients, condition = self._coefficients(clean)
        index = {key: row for row, key in enumerate(keys)}
        chosen = [vectors[index[key]] for key in used]
        out = combine_chunks(np.empty((self.m, width)), coefficients, chosen)
        return DecodeResult(out.reshape(-1)[:length], used, condition, adversaries=bad)

    def _parity_checks(self, keys: tuple[MessageKey, ...]) -> np.ndarray:
        """Orthonormal rows ``(M - D - 1, M)`` orthogonal to degree-``D`` polynomials."""
        return self._parity.get_or_compute(
            keys, lambda: parity_checks(self._alpha[list(keys)], self.degree)
        )

    def _correct(
        self, keys: tuple[MessageKey, ...], vectors: list[np.ndarray], errors: int
    ) -> tuple[tuple[MessageKey, ...], tuple[MessageKey, ...]]:
        """Split ``keys`` into ``(clean responders to decode from, corrupted responders)``,
        with at most ``errors`` corrupted."""
        return correct_errors(
            self.name,
            keys,
            vectors,
            self._alpha[list(keys)],
            self.degree,
            errors,
            self.detection_tol,
            self._parity_checks(keys),
        )


def parity_checks(nodes: np.ndarray, degree: int) -> np.ndarray:
    """Orthonormal rows ``(M - D - 1, M)`` orthogonal to degree-``D`` polynomials on ``nodes``."""
    return _complement(np.polynomial.chebyshev.chebvander(nodes, degree)).T


def correct_errors(
    scheme: str,
    keys: tuple[MessageKey, ...],
    vectors: list[np.ndarray],
    nodes: np.ndarray,
    degree: int,
    a: int,
    tol: float,
    checks: np.ndarray,
) -> tuple[tuple[MessageKey, ...], tuple[MessageKey, ...]]:
    """Steps 1-3 of the module docstring's decoder: ``(clean keys, corrupted keys)``.

    ``vectors[q]`` (all of one length) is the value at ``nodes[q]`` of a polynomial of degree
    ``degree`` (entrywise), up to ``a`` of them corrupted; ``checks`` is
    ``parity_checks(nodes, degree)``; ``tol`` the relative syndrome size that counts as
    round-off. Raises ``NotDecodableError`` when more corruption is found than ``a``.
    """
    count = len(keys)
    spare = count - degree - 1
    rng = np.random.default_rng([count, degree, 20240531])
    mixing = rng.standard_normal((spare, a + 1))
    mixing /= np.linalg.norm(mixing, axis=0)
    projector = mixing.T @ checks  # (T, M), unit rows
    syndromes = combine_chunks(np.empty((projector.shape[0], vectors[0].size)), projector, vectors)
    total = math.sqrt(sum(float(v @ v) for v in vectors))
    size = float(np.linalg.norm(syndromes)) / math.sqrt(projector.shape[0])
    # finite but huge messages can overflow the norms: an infinite size is corruption
    if math.isfinite(size) and size <= tol * total:
        return keys, ()
    projected = np.array([syndromes @ vector for vector in vectors])  # (M, T)
    located = _locate_errors(nodes, projected, degree, a, tol)
    if located is None:
        raise NotDecodableError(
            f"{scheme}: more than a = {a} of the {count} responses are corrupted "
            "(detected, not correctable)",
            needed=None,
        )
    suspects, residuals = located
    bad = tuple(keys[row] for row, flag in zip(suspects, residuals, strict=True) if flag)
    clean = tuple(key for row, key in enumerate(keys) if row not in set(suspects))
    return clean, bad


def _locate_errors(
    nodes: np.ndarray, values: np.ndarray, degree: int, errors: int, tol: float
) -> tuple[list[int], list[bool]] | None:
    """Berlekamp-Welch for ``values`` (``(M, T)``, ``T`` words on ``nodes``), real arithmetic.

    Returns ``(suspects, corrupted)``: ``errors`` row indices set aside, and for each whether
    its value disagrees with the polynomial of the others; ``None`` if no choice leaves a
    consistent set.
    """
    count = nodes.size
    scale = np.abs(values).max(axis=0)
    values = values[:, scale > 0] / scale[scale > 0]
    chebvander = np.polynomial.chebyshev.chebvander
    locator_basis = chebvander(nodes, errors)  # (M, e + 1)
    outside = _complement(chebvander(nodes, degree + errors))  # (M, M - D - e - 1)
    system = np.vstack(
        [outside.T @ (values[:, [t]] * locator_basis) for t in range(values.shape[1])]
    )
    _, _, right = np.linalg.svd(system)
    for dimension in range(1, errors + 2):
        locators = locator_basis @ right[-dimension:].T  # (M, dimension)
        size = np.linalg.norm(locators, axis=1)
        suspects = sorted(np.argsort(size, kind="stable")[:errors].tolist())
        keep = [row for row in range(count) if row not in set(suspects)]
        q, triangle = np.linalg.qr(chebvander(nodes[keep], degree), mode="complete")
        kept = values[keep]
        residual = q[:, degree + 1 :].T @ kept
        if np.linalg.norm(residual) <= tol * max(float(np.linalg.norm(kept)), _TINY):
            # the residual of a clean set is pure round-off: its rms per entry is the noise
            # level, which reaches the degree-D fit at a set-aside point amplified by ``gain``
            noise = max(
                float(np.sqrt(np.mean(residual**2))), _EPS * float(np.abs(kept).max()), _TINY
            )
            triangle = triangle[: degree + 1]
            coefficients = np.linalg.solve(triangle, q[:, : degree + 1].T @ kept)
            at_suspects = chebvander(nodes[suspects], degree)
            misfit = np.linalg.norm(values[suspects] - at_suspects @ coefficients, axis=1)
            gain = np.linalg.norm(np.linalg.solve(triangle.T, at_suspects.T), axis=0)
            spread = np.sqrt(values.shape[1] * (1.0 + gain**2))
            return suspects, (misfit > _NOISE_SIGMAS * noise * spread).tolist()
    return None


def _stragglers_and_adversaries(r: int, small: bool) -> list[tuple[int, int]]:
    """The ``(s, a)`` the grid tries for minimum replication ``r`` (``r >= s + 2a + 1``)."""
    pairs = {(s, 0) for s in (0, 1, 2, r // 2, r - 1) if 0 <= s <= r - 1}
    for a in range(1, (r - 1) // 2 + 1):
        pairs |= {(s, a) for s in (0, 1, 2) if s <= r - 1 - 2 * a}
    if not small:
        pairs = {(s, a) for s, a in pairs if s <= 3 and a <= 2}
    return sorted(pairs)
