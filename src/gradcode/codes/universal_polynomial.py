"""Paper 004's universal polynomial (eq. 13-14) and what the codes built on it share: the
evaluation points, their assignment to the workers, the encoding coefficients, barycentric
interpolation at the ``beta``, the code class ``UniversalPolynomialCode`` (``heterogeneous``,
``berrut``) and the decodability rule ``InterpolationThreshold`` (``heterogeneous``,
``heterogeneous-poly``). ``gradcode.codes.heterogeneous``'s docstring derives them and reports
the measured effect of the choice of points.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import ClassVar

import numpy as np

from gradcode.codes.base import MessageKey, NotDecodableError
from gradcode.codes.combine import split_chunks
from gradcode.codes.completion import CompletionRule, order_statistic
from gradcode.codes.linear import LinearCode
from gradcode.codes.placements import Placed

_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


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
        # the same entries as ``np.ix_(order, order)`` picks, at a third of its 5 us a call
        numerators = log_nodes[order[:, None], order] @ nonholders  # (n, k)
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


class UniversalPolynomialCode(Placed, LinearCode):
    """Shared part of ``heterogeneous`` and ``berrut``: a placement and eq. 13's encoding.

    Subclasses validate their parameters, set ``_placement``, ``_holders``, ``n, k, r, s, a, m``
    and call ``_set_up(nodes, beta)`` with the candidate worker nodes, which ``assign_nodes``
    hands out to the workers.
    """

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
