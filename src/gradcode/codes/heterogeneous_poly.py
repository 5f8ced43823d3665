"""A matrix polynomial of the aggregated gradient matrix, with stragglers and adversaries
(paper 004: Jahani-Nezhad & Maddah-Ali, Section IV, Theorem 2).

Problem. Partition ``i`` yields a ``d x d`` partial gradient matrix ``G_i``; the master wants
``h(G_1 + ... + G_K)`` for a polynomial ``h(X) = c_0 I + c_1 X + ... + c_q X^q`` of degree
``q = deg h >= 1`` (parameter ``h = [c_0, ..., c_q]``, ascending powers, ``c_q != 0``), from
``N`` workers holding an arbitrary placement (``placement[w]`` lists worker ``w``'s partitions,
as for ``heterogeneous``), of which up to ``s`` straggle and up to ``a`` send arbitrary garbage.

Encoding (eq. 19). With ``A_i`` the holders of partition ``i``, one point ``beta`` and the
workers' points ``alpha_n``, worker ``n`` sends the ``d x d`` matrix::

    G~_n = h( sum_{i in Gamma_n} G_i prod_{j not in A_i} (alpha_n - alpha_j) / (beta - alpha_j) )
         = h(f(alpha_n)),   f(x) = sum_i G_i prod_{j not in A_i} (x - alpha_j) / (beta - alpha_j)

(eq. 20): ``f`` has degree ``N - r`` (``r = min_i |A_i|``), vanishes on the partitions a worker
lacks, and ``f(beta) = sum_i G_i``. So ``h(f(x))`` is a matrix polynomial of degree ``D = (N -
r) q`` (eq. 21) whose value at ``beta`` is ``h(sum_i G_i)`` (eq. 22). The encoding is not linear
in the partials (``h`` is applied by the worker), so this is not a ``LinearCode``.

Decoding. Any ``D + 1 + 2a`` responders determine ``h(f(x))`` with up to ``a`` of them corrupted
(eq. 23). Without adversaries the master interpolates entrywise through all responders and
evaluates at ``beta`` (barycentric weights, cached per responder set: one linear combination of
the messages). With ``a > 0`` it first runs the real Reed-Solomon decoder of ``heterogeneous``
(syndromes, projection, Berlekamp-Welch; ``gradcode.codes.reed_solomon.correct_errors``) on
the flattened matrices as degree-``D`` words, sets the liars aside and names the ones whose
message is off the polynomial (``decode_result(...).adversaries``). As there, ``a + 1``
colluding liars can move the word onto another polynomial of degree ``D`` (Theorem 1's
converse): we then return that polynomial's value at ``beta`` and name ``a`` honest workers
(tested).

Theorem 2's condition. ``N - s >= D + 1 + 2a``, i.e. ``r >= N - floor((N - 2a - s - 1) / q)``;
the constructor refuses other placements naming ``r, N, s, a, deg h`` and the ``r`` needed. The
communication cost is one ``d x d`` matrix (``d^2`` numbers) per worker.

Messages are matrices (``capabilities.message == "matrix"``). A gradient is ``l = d * d``
numbers: ``encode(worker, partials)`` takes ``partials`` of shape ``(load(worker), d * d)``, row
``p`` the matrix ``G`` of the worker's ``p``-th partition flattened row-major
(``G.reshape(-1)``); the message is ``G~_n`` flattened the same way, shape ``(d * d,)``
(``message_length(d * d) = d * d``; other lengths raise ``ParameterError``). A runtime sends and
receives messages as flat vectors of that length, as it does any vector message; ``decode``
returns ``h(sum_i G_i)`` flattened, ``(d * d,)``, where other codes return the sum itself
(``reference(total)`` computes it directly from a sum, by numpy matrix powers). A training run
therefore steps along ``h`` of the decoded sum; with ``h = [0, 1]`` that is gradient descent.

Evaluation points. ``beta`` and the ``alpha`` are those of ``heterogeneous`` with ``m = 1``:
Chebyshev points of the first kind for the workers, assigned to them by ``assign_nodes`` to
keep the encoding coefficients small, and a Chebyshev-Lobatto point between two of them for
``beta``. The decoder's amplification of round-off is the Lebesgue constant of the responders'
points at ``beta`` times the ratio of the messages' size to the result's, which grows like the
``q``-th power of ``f``'s coefficients on the workers' points.

Numerical soundness (random Gaussian partials, decoded against ``reference``). Family:
cyclic placement at Theorem 2's least ``r``, ``s = max(1, N // 4)`` stragglers, ``a = 0``,
``h = 1 + X + X^2 / 2`` (``q = 2``) and ``h = 1 + X + X^2 / 2 + X^3 / 6`` (``q = 3``); maximum
relative error over 200 random straggler sets and over all ``N`` windows of ``s`` consecutive
workers (seed 0, ``7 x 7`` matrices)::

    N    q = 2: random | consecutive    q = 3: random | consecutive
    12   5e-14           1e-14          6e-13           4e-14
    20   4e-13           1e-14          1e-12           3e-13
    30   1e-11           3e-14          1e-09           4e-12
    36   3e-10           7e-14          4e-09           1e-12
    40   2e-10           2e-12          1e-09           7e-13
    41   3e-10           3e-13          3e-08           3e-13
    44   5e-10           3e-13          8e-08           1e-12
    46   1e-08           3e-12          4e-08           4e-12
    50   1e-08           3e-13          1e-07           8e-12

Every ``N <= 40`` stays below 1e-8 for both degrees (worst: 4e-9 at ``N = 36``, ``q = 3``);
``q = 3`` first exceeds it at ``N = 41``, ``q = 2`` reaches it at ``N = 46``. Hence
``numerically_sound_up_to = 40``. Random straggler sets are the worst here (unlike
``heterogeneous``, whose worst are consecutive ones): the error follows the Lebesgue constant of
the responders at ``beta`` (``condition``, up to ~1e5 at ``N = 50``) times the growth of the
``q``-th powers on the workers' points. With one liar (``q = 2``, the same family) the
analysis ``heterogeneous-poly`` measures at most 1e-9 through ``N = 50`` (40 patterns per
``N``), every liar named; clean responses' syndromes stay below 1e-15 of the messages' norm
through ``N = 50`` (``q <= 3``, ``a <= 3``), far under ``detection_tol``.

Shapes: ``partials`` ``(load(w), d * d)``; a message ``(d * d,)``; ``decode`` ``(d * d,)``;
``coefficients()`` ``(N, K)``; ``evaluation_points()`` ``(alpha (N,), beta (1,))``;
``evaluate(partials (K, d * d), x (X,))`` ``(X, d * d)``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from gradcode.codes.base import DecodeResult, GradientCode, MessageKey, check_int, require
from gradcode.codes.capabilities import Capabilities
from gradcode.codes.combine import linear_combination, message_vectors
from gradcode.codes.heterogeneous import HeterogeneousCode
from gradcode.codes.liars import beyond_a_nonfinite, nonfinite
from gradcode.codes.placements import Placed, cyclic_placement, random_placement, validate_placement
from gradcode.codes.reed_solomon import correct_errors, parity_checks
from gradcode.codes.universal_polynomial import (
    InterpolationThreshold,
    assign_nodes,
    barycentric_matrix,
    exact_points,
    universal_coefficients,
)
from gradcode.errors import ParameterError
from gradcode.lru import LRUCache


def theorem2_replication(n: int, s: int, a: int, degree: int) -> int:
    """Theorem 2's least ``min_k |A_k|``: ``N - floor((N - 2a - s - 1) / deg h)``.

    Larger than ``n`` when no placement of ``n`` workers suffices (``N < 2a + s + 1``).
    """
    return n - (n - 2 * a - s - 1) // degree


def validate_polynomial(scheme: str, h: Any) -> tuple[float, ...]:
    """``h`` as a tuple of finite floats ``(c_0, ..., c_q)`` with ``q >= 1`` and ``c_q != 0``."""
    if isinstance(h, str | bytes) or not isinstance(h, Sequence):
        raise ParameterError(
            f"{scheme} needs h as a list of coefficients [c_0, c_1, ..., c_q] (got h={h!r})"
        )
    coefficients = []
    for value in h:
        if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
            raise ParameterError(f"{scheme} needs real coefficients in h (got h={list(h)!r})")
        coefficients.append(float(value))
    require(
        all(math.isfinite(c) for c in coefficients),
        f"{scheme} needs finite coefficients in h (got h={coefficients})",
    )
    require(
        len(coefficients) >= 2 and coefficients[-1] != 0.0,
        f"{scheme} needs deg h >= 1 with a non-zero leading coefficient (got h={coefficients})",
    )
    return tuple(coefficients)


def matrix_polynomial(coefficients: Sequence[float], matrix: np.ndarray) -> np.ndarray:
    """``h(X)`` by Horner's rule: ``q`` matrix products for ``X`` ``(d, d)``."""
    identity = np.eye(matrix.shape[0])
    out = coefficients[-1] * identity
    for coefficient in reversed(coefficients[:-1]):
        out = out @ matrix
        out += coefficient * identity
    return out


def square_side(scheme: str, length: int) -> int:
    """``d`` with ``d * d == length``; ``ParameterError`` for other lengths."""
    side = math.isqrt(max(int(length), 0))
    if side < 1 or side * side != length:
        raise ParameterError(
            f"{scheme} needs a gradient of d * d numbers (a d x d matrix), got length {length}"
        )
    return side


class HeterogeneousPolyCode(InterpolationThreshold, Placed, GradientCode):
    """Paper 004, Sec. IV: ``h(sum_k G_k)`` for ``d x d`` partial gradient matrices.

    Parameters: ``placement`` (list of partition lists, one per worker), ``h`` (coefficients
    ``[c_0, ..., c_q]`` of ``h(X) = sum_j c_j X^j``, ``q >= 1``), ``s`` stragglers, ``a``
    adversaries.
    """

    name = "heterogeneous-poly"
    capabilities: ClassVar[Capabilities] = Capabilities(corrects_adversaries=True, message="matrix")
    degree_formula = "(N - r) deg h"
    numerically_sound_up_to: ClassVar[int | None] = 40
    #: relative syndrome size below which responses count as clean (as ``heterogeneous``)
    detection_tol: ClassVar[float] = HeterogeneousCode.detection_tol
    _cache_size: ClassVar[int] = 1024

    #: minimum replication ``min_i |A_i|``
    r: int
    #: degree ``(N - r) deg h`` of ``h(f(x))``
    degree: int

    def __init__(
        self,
        placement: Sequence[Sequence[int]],
        h: Sequence[float],
        s: int = 0,
        a: int = 0,
    ) -> None:
        self._placement = validate_placement(self.name, placement)
        self.h = validate_polynomial(self.name, h)
        self.n = len(self._placement)
        self.s = check_int("s", self.name, s)
        self.a = check_int("a", self.name, a)
        self.m = 1
        self._holders = HeterogeneousCode._holders_of(self._placement)
        self.k = self._holders.shape[1]
        self.r = int(self._holders.sum(axis=0).min())
        q = len(self.h) - 1
        needed = theorem2_replication(self.n, self.s, self.a, q)
        require(
            self.r >= needed,
            f"{self.name} needs min_k |A_k| >= N - floor((N - 2a - s - 1) / deg h) = {needed} "
            f"(Theorem 2; got r={self.r}, N={self.n}, s={self.s}, a={self.a}, deg h={q})",
        )
        self.degree = (self.n - self.r) * q
        self._threshold = self.degree + 1 + 2 * self.a
        nodes, beta = exact_points(self.n, 1)
        self._beta = beta
        self._alpha = nodes[assign_nodes(self._holders, nodes, beta)]
        self._coefficients = universal_coefficients(
            self._alpha, self._holders, self._alpha, self._beta
        )[:, :, 0]
        self._weights: LRUCache[np.ndarray] = LRUCache(self._cache_size)
        self._parity: LRUCache[np.ndarray] = LRUCache(self._cache_size)

    # -- description ------------------------------------------------------------------------
    @classmethod
    def parameter_grid(cls, max_n: int) -> Iterator[dict[str, Any]]:
        """Representative family (placements and polynomials are unbounded).

        For every ``n <= max_n`` and ``(s, a)`` in ``{(0, 0), (1, 0), (2, 0), (0, 1), (1, 1)}``
        (``(1, 2)`` too from ``n = 8``) and ``h`` of degree 1, 2 and 3 (fixed coefficients with
        a constant term, so the messages are not homogeneous in the partials): the cyclic
        placement at Theorem 2's least ``r``, a seeded random placement (``k = n + 2``) at that
        ``r`` and, for ``n >= 4``, one with two workers four times as likely to hold a
        partition. Combinations whose least ``r`` exceeds ``n`` are skipped.
        """
        for n in range(1, max_n + 1):
            pairs = [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1)] + ([(1, 2)] if n >= 8 else [])
            for h in _GRID_POLYNOMIALS:
                q = len(h) - 1
                for s, a in pairs:
                    r = theorem2_replication(n, s, a, q)
                    if r > n:
                        continue
                    seed = 100 * n + 10 * q + s + 3 * a
                    placements = [cyclic_placement(n, r), random_placement(n, n + 2, r, seed=seed)]
                    if n >= 4:
                        weights = [4.0, 4.0] + [1.0] * (n - 2)
                        placements.append(random_placement(n, n, r, seed=seed, weights=weights))
                    for placement in placements:
                        yield {"placement": placement, "h": list(h), "s": s, "a": a}

    def params(self) -> dict[str, Any]:
        return {
            "placement": [list(parts) for parts in self._placement],
            "h": list(self.h),
            "s": self.s,
            "a": self.a,
        }

    def evaluation_points(self) -> tuple[np.ndarray, np.ndarray]:
        """``(alpha, beta)``: the workers' points ``(N,)`` and ``beta`` ``(1,)``."""
        return self._alpha.copy(), self._beta.copy()

    def coefficients(self) -> np.ndarray:
        """``C`` ``(N, K)``: worker ``n`` applies ``h`` to ``sum_i C[n, i] G_i`` (eq. 19)."""
        return self._coefficients.copy()

    def message_length(self, length: int) -> int:
        """One ``d x d`` matrix: ``length = d * d`` numbers (other lengths are refused)."""
        square_side(self.name, length)
        return int(length)

    # -- encoding ---------------------------------------------------------------------------
    def encode(self, worker: int, partials: np.ndarray) -> np.ndarray:
        """``h(f(alpha_worker))`` flattened, ``(d * d,)``; ``partials`` ``(load, d * d)``."""
        partials = np.asarray(partials, dtype=np.float64)
        parts = self.partitions(worker)
        if partials.ndim != 2 or partials.shape[0] != len(parts):
            raise ValueError(
                f"{self.name}: worker {worker} needs partials of shape ({len(parts)}, d * d) "
                f"(got {partials.shape})"
            )
        side = square_side(self.name, partials.shape[1])
        combined = self._coefficients[worker, list(parts)] @ partials  # (d * d,)
        return matrix_polynomial(self.h, combined.reshape(side, side)).reshape(-1)

    def evaluate(self, partials: np.ndarray, x: np.ndarray) -> np.ndarray:
        """``h(f(x))`` (eq. 21) at points ``x``, flattened: ``(len(x), d * d)``.

        ``partials`` holds all ``K`` matrices, ``(K, d * d)``; at ``alpha_n`` this is worker
        ``n``'s message, at ``beta`` ``h(sum_i G_i)``.
        """
        partials = np.asarray(partials, dtype=np.float64)
        side = square_side(self.name, partials.shape[1])
        x = np.asarray(x, dtype=np.float64).reshape(-1)
        inner = universal_coefficients(x, self._holders, self._alpha, self._beta)[:, :, 0]
        return np.stack(
            [
                matrix_polynomial(self.h, (row @ partials).reshape(side, side)).reshape(-1)
                for row in inner
            ]
        )

    def reference(self, total: np.ndarray) -> np.ndarray:
        """``h(total)`` for the flattened sum ``total`` ``(d * d,)``, by numpy matrix powers.

        Shares nothing with ``encode`` (Horner) or the decoder: the verification reference.
        """
        total = np.asarray(total, dtype=np.float64)
        side = square_side(self.name, total.size)
        matrix = total.reshape(side, side)
        out = np.zeros((side, side))
        for power, coefficient in enumerate(self.h):
            out += coefficient * np.linalg.matrix_power(matrix, power)
        return out.reshape(-1)

    # -- decoding ---------------------------------------------------------------------------
    def _known(self, keys: Iterable[MessageKey]) -> set:
        keys = set(keys)
        unknown = [
            key for key in keys if not (isinstance(key, int | np.integer) and 0 <= key < self.n)
        ]
        if unknown:
            raise ValueError(f"{self.name}: unknown message keys {sorted(unknown, key=repr)}")
        return keys

    def _barycentric(self, keys: tuple[MessageKey, ...]) -> np.ndarray:
        """Weights ``(len(keys),)`` of the value at ``beta`` of the interpolant through keys."""
        return self._weights.get_or_compute(
            keys, lambda: barycentric_matrix(self._alpha[list(keys)], self._beta)[0]
        )

    def decode_result(self, messages: Mapping[MessageKey, np.ndarray], length: int) -> DecodeResult:
        """``h(sum_i G_i)`` flattened ``(length,)``; ``adversaries``: responders found lying.

        Raises ``NotDecodableError`` with fewer than ``D + 1 + 2a`` responders or when more
        corruption is detected than the responders can correct.
        """
        keys = tuple(sorted(self._known(messages)))
        if len(keys) < self._threshold:
            raise self._too_few(keys)
        broken = nonfinite({key: messages[key] for key in keys})
        if len(broken) > self.a:
            raise beyond_a_nonfinite(self.name, self.a, broken)
        # a non-finite message is a located liar: an erasure that spends one of the a errors
        keys = tuple(key for key in keys if key not in broken)
        vectors = message_vectors(self.name, messages, keys, self.message_length(length))
        clean, bad = keys, ()
        if self.a > 0:
            checks = self._parity.get_or_compute(
                keys, lambda: parity_checks(self._alpha[list(keys)], self.degree)
            )
            nodes = self._alpha[list(keys)]
            errors = self.a - len(broken)
            clean, bad = correct_errors(
                self.name, keys, vectors, nodes, self.degree, errors, self.detection_tol, checks
            )
            bad = tuple(sorted((*broken, *bad)))
        weights = self._barycentric(clean)
        index = {key: row for row, key in enumerate(keys)}
        out = np.empty(length)
        linear_combination(out, weights, [vectors[index[key]] for key in clean])
        condition = float(np.abs(weights).sum())  # the Lebesgue constant at beta
        return DecodeResult(out, clean, condition, adversaries=bad)


#: the grid's polynomials: deg h = 1, 2, 3 (with a constant term)
_GRID_POLYNOMIALS: tuple[tuple[float, ...], ...] = (
    (0.5, 1.0),
    (1.0, -0.5, 0.25),
    (0.0, 1.0, 0.5, -0.2),
)
