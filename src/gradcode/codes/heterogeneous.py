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

Where the parts live: the placements in ``gradcode.codes.placements``, the evaluation points,
eq. 14's coefficients and the interpolation in ``gradcode.codes.universal_polynomial``, steps
1-3 of the decoder in ``gradcode.codes.reed_solomon``; this module holds the code.

Shapes: ``partials`` ``(load(w), l)``; a message ``(ceil(l / m),)``; ``decode`` ``(l,)``;
``encoding_matrix()`` ``(n, k, m)``; ``evaluation_points()`` ``(alpha (n,), beta (m,))``;
``evaluate(partials (k, l), x (X,))`` ``(X, ceil(l / m))``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from gradcode.codes.base import DecodeResult, MessageKey, check_int, require
from gradcode.codes.capabilities import Capabilities
from gradcode.codes.combine import combine_chunks, message_vectors
from gradcode.codes.liars import beyond_a_nonfinite, nonfinite
from gradcode.codes.placements import (
    cyclic_placement,
    random_placement,
    speed_placement,
    validate_placement,
)
from gradcode.codes.reed_solomon import correct_errors, parity_checks
from gradcode.codes.universal_polynomial import (
    InterpolationThreshold,
    UniversalPolynomialCode,
    barycentric_matrix,
    exact_points,
)
from gradcode.lru import LRUCache

#: the placements' builders stay importable here: callers build this code's input with them
__all__ = [
    "HeterogeneousCode",
    "cyclic_placement",
    "random_placement",
    "speed_placement",
    "validate_placement",
]


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


def _stragglers_and_adversaries(r: int, small: bool) -> list[tuple[int, int]]:
    """The ``(s, a)`` the grid tries for minimum replication ``r`` (``r >= s + 2a + 1``)."""
    pairs = {(s, 0) for s in (0, 1, 2, r // 2, r - 1) if 0 <= s <= r - 1}
    for a in range(1, (r - 1) // 2 + 1):
        pairs |= {(s, a) for s in (0, 1, 2) if s <= r - 1 - 2 * a}
    if not small:
        pairs = {(s, a) for s, a in pairs if s <= 3 and a <= 2}
    return sorted(pairs)
