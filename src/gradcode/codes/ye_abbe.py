"""Ye & Abbe, "Communication-Computation Efficient Gradient Coding" (ICML 2018), Section 3.

Parameters ``(n, d, s, m)`` with ``k = n``: every worker computes ``d`` partial gradients, any
``n - s`` workers suffice, and every message is ``1/m`` of the gradient length; the code exists
iff ``d >= s + m`` (their Theorem 1, eq. 5) and the construction below attains ``d = s + m``.

Construction (0-based indices, ``N = n - s`` responders needed):

- worker ``W_i`` holds ``D_i, D_{i+1}, ..., D_{i+d-1}`` (mod ``n``) and owns a distinct real
  evaluation point ``theta_i``;
- ``p_j(x) = prod_{t=1}^{n-d} (x - theta_{j+t})``: its roots are the points of the ``n - d``
  workers that do not hold ``D_j`` (eq. 6), so ``p_j`` is monic of degree ``n - d``;
- the recursion ``p_j^(1) = p_j``, ``p_j^(u) = x p_j^(u-1) - [x^{n-d-1}] p_j^(u-1) * p_j`` (eqs.
  7-10) gives ``m`` multiples of ``p_j`` of degrees ``n - d + u - 1`` whose coefficients at
  ``x^{n-d}, ..., x^{n-s-1}`` form the ``u``-th unit vector;
- ``B`` (shape ``(m n, N)``, eq. 11) stacks their coefficient vectors, so its last ``m`` columns
  are ``n`` stacked identities ``I_m`` (eq. 13);
- worker ``W_i`` sends, for every chunk position ``w``, ``sum_{j,u} p_j^(u)(theta_i) g_j^u[w]``,
  i.e. ``E[i, j, u] = p_j^(u+1)(theta_i)``; it is zero unless ``W_i`` holds ``D_j`` (eq. 9).

Decoding (Section 3, eqs. 17-19): the messages of a responder set ``F`` (``|F| = N``) are the
values at ``theta_F`` of a polynomial of degree ``< N`` whose top ``m`` coefficients are the ``m``
chunks of the gradient, so the master applies columns ``n - d, ..., N - 1`` of the inverse of
the ``N x N`` Vandermonde matrix ``A = [theta_r^c]``. Those columns are read off the Lagrange
basis without forming ``A^{-1}``: ``L_r(x) = prod_{t != r}(x - theta_t) / w_r`` with barycentric
weights ``w_r = prod_{t != r}(theta_r - theta_t)``, and the top ``m`` coefficients of the
numerator come from ``m`` steps of synthetic division, ``O(m N)`` per responder after an
``O(N^2)`` setup. With more than ``N`` responders the first ``N`` (by index) are used.

Deviations from the paper, and why:

- Chunks are contiguous (``g_j^u`` is the ``u``-th of ``m`` equal slices of ``g_j``, as in
  ``base.split_chunks``) instead of the paper's interleaving ``g_j(v m + u - 1)``: the same code
  up to a fixed permutation of coordinates, and a slice of a vector is a view, not a copy.
- ``d > s + m`` is allowed (the trade-off is an inequality) and is served by the construction
  for ``s' = d - m`` stragglers: the same load and message size, and it tolerates more. The
  attribute ``s`` is that effective ``s' = d - m`` (the tolerance actually delivered, which is
  what ``is_decodable`` and the default patterns use); ``params()`` keeps the requested ``s``.
  Padding instead (holding ``d`` partitions but coding only ``s + m`` of them) would waste load.
- Evaluation points: ``points="paper"`` are the paper's experimental points (Section 4) in the
  order the paper lists them, ``theta = (0,) 1, -1, 1.5, -1.5, ...`` (``+-(1 + i/2)``, plus ``0``
  first for odd ``n``); the paper gives the set, not which worker gets which point. The order
  matters a lot: the roots of ``p_j`` are the points of ``n - d`` *consecutive* workers, and
  sorted points cluster them, which measured ~100x larger decoding errors than this interleaved
  order (e.g. 1.6e-9 vs 1.2e-11 at ``n = 20``). ``points="chebyshev"`` uses Chebyshev points of
  the first kind ``cos((2i + 1) pi / (2n))`` in Leja order (each point maximises its product of
  distances to the earlier ones), which spreads every ``p_j``'s roots over ``[-1, 1]``. An
  explicit sequence of ``n`` distinct reals is accepted too (Fig. 2 of the paper uses
  ``theta = (-2, -1, 0, 1, 2)``; the tests pin it).

Numerics. Decoding reads the top ``m`` monomial coefficients of an interpolating polynomial, so
the error grows with ``n`` and, much faster, with ``m`` (for ``m`` close to ``d`` the lower
monomial coefficients are read off a polynomial whose values are up to ~1e14 at the paper's
points). It is *not* governed by the Vandermonde condition number ``_condition`` reports (1e45
at ``n = 40`` with paper points while the error stays ~3e-9 for ``m <= 3``). Measured maximum
relative decoding error (``verify``, gradient length 37, 40 random straggler patterns per
parameter set, or all of them, for every ``(d, s = d - m, m)``; and for ``s`` in ``0..3``,
``m`` in ``1..3``, ``d = s + m``, with all patterns or 200 random ones):

====  ==================  ==================  ===============  ==================
 n    paper, every d, m   Chebyshev, every    paper, s, m<=3   Chebyshev, s, m<=3
====  ==================  ==================  ===============  ==================
 12   1.1e-10             1.1e-12             4.3e-13          6.5e-14
 13   1.4e-9              --                  3.1e-13          5.6e-14
 14   1.6e-8              --                  9.3e-13          1.4e-13
 16   3.7e-6 (m = 13)     3.7e-11             1.8e-12          1.4e-13
 19   --                  7.8e-10             5.9e-12          4.1e-13
 20   6.4e-2 (m = 19)     1.0e-9              1.7e-11          2.2e-13
 22   --                  5.7e-9              2.1e-11          2.7e-13
 23   --                  1.0e-8              4.1e-11          6.9e-13
 28   4.3e7               6.9e-7              1.6e-10          3.9e-13
 34   --                  --                  5.7e-10          1.6e-12
 36   --                  7.5e-4              1.3e-9           7.9e-13
 42   --                  --                  6.4e-9           1.2e-12
 43   --                  --                  1.2e-8           1.8e-12
 50   --                  2.8e2               6.2e-8           1.8e-12
====  ==================  ==================  ===============  ==================

``numerically_sound_up_to = 13`` for the default paper points, over *every* valid ``(d, s, m)``
(below 1e-8; ``n = 14`` reaches 1.6e-8 at ``d = m = 13``; below the exhaustive tests' 1e-9 it
would be 12). With ``points="chebyshev"`` it is 22 (``CHEBYSHEV_SOUND_UP_TO``; ``n = 23`` reaches
1.01e-8). For ``s, m <= 3`` the paper points stay below 1e-8 up to ``n = 42`` and Chebyshev
points below 3e-12 through ``n = 50``, consistent with the paper's remark that the scheme is
usable up to ``n = 20``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from gradcode.codes.base import NotDecodableError, check_int, require
from gradcode.codes.completion import CompletionRule, order_statistic
from gradcode.codes.linear import LinearCode

POINT_SETS = ("paper", "chebyshev")
#: measured like ``YeAbbe.numerically_sound_up_to``, for ``points="chebyshev"``
CHEBYSHEV_SOUND_UP_TO = 22


def paper_points(n: int) -> np.ndarray:
    """The paper's points in the order it lists them: ``0`` (odd ``n`` only), ``1, -1, 1.5,
    -1.5, ...``, i.e. ``+-(1 + i/2)`` for ``i = 0 .. n//2 - 1``."""
    half = 1.0 + np.arange(n // 2) / 2.0
    pairs = np.stack([half, -half], axis=1).reshape(-1)
    return np.concatenate([[0.0], pairs]) if n % 2 else pairs


def leja_order(points: np.ndarray) -> np.ndarray:
    """``points`` reordered greedily so that each maximises its product of distances to the
    ones before it (a Leja sequence), starting from the largest magnitude; ties go to the
    smallest value."""
    remaining = np.sort(np.asarray(points, dtype=np.float64))
    chosen = [int(np.argmax(np.abs(remaining)))]
    log_distance = np.zeros(len(remaining))
    for _ in range(len(remaining) - 1):
        with np.errstate(divide="ignore"):
            log_distance += np.log(np.abs(remaining - remaining[chosen[-1]]))
        log_distance[chosen[-1]] = -np.inf
        chosen.append(int(np.argmax(log_distance)))
    return remaining[chosen]


def chebyshev_points(n: int) -> np.ndarray:
    """Chebyshev points of the first kind ``cos((2i + 1) pi / (2n))`` on ``[-1, 1]``, in Leja
    order."""
    return leja_order(np.cos((2 * np.arange(n) + 1) * np.pi / (2 * n)))


class YeAbbe(LinearCode):
    """Ye & Abbe's recursive-polynomial code with communication reduction ``m``.

    Parameters
    ----------
    n : int
        Number of workers (and partitions, ``k = n``).
    d : int
        Partitions per worker, ``d <= n``; worker ``i`` holds ``i, ..., i + d - 1`` (mod ``n``).
    s : int
        Stragglers to tolerate, ``s >= 0``; needs ``d >= s + m``. The code tolerates
        ``d - m >= s`` (attribute ``s``).
    m : int
        Communication reduction: every message has length ``ceil(l / m)``.
    points : {"paper", "chebyshev"} or sequence of n distinct floats
        Evaluation points ``theta`` of the workers.
    """

    name = "ye-abbe"
    numerically_sound_up_to = 13  # paper points; see the module docstring

    def __init__(
        self, n: int, d: int, s: int, m: int, points: str | Sequence[float] = "paper"
    ) -> None:
        self.n = check_int("n", self.name, n, minimum=1)
        self.d = check_int("d", self.name, d, minimum=1)
        requested_s = check_int("s", self.name, s)
        self.m = check_int("m", self.name, m, minimum=1)
        require(self.d <= self.n, f"{self.name} needs d <= n (got n={self.n}, d={self.d})")
        require(
            self.d >= requested_s + self.m,
            f"{self.name} needs d >= s + m (got d={self.d}, s={requested_s}, m={self.m})",
        )
        self.requested_s = requested_s
        self.s = self.d - self.m
        self.k, self.a = self.n, 0
        self.points = self._validate_points(points)
        #: evaluation point of every worker, shape ``(n,)``
        self.thetas = self._make_points(self.points)
        self._b = self._build_b()
        self._init_linear(self._build_encoding())

    # -- construction ------------------------------------------------------------------------
    def _validate_points(self, points: Any) -> str | tuple[float, ...]:
        if isinstance(points, str):
            require(
                points in POINT_SETS,
                f"{self.name} needs points in {POINT_SETS} or n distinct reals "
                f"(got points={points!r})",
            )
            return points
        values = np.asarray(points, dtype=np.float64)
        require(
            values.shape == (self.n,) and bool(np.all(np.isfinite(values))),
            f"{self.name} needs n = {self.n} finite points (got points={points!r})",
        )
        require(
            len(np.unique(values)) == self.n,
            f"{self.name} needs distinct points (got points={points!r})",
        )
        return tuple(float(v) for v in values)

    def _make_points(self, points: str | tuple[float, ...]) -> np.ndarray:
        if points == "paper":
            return paper_points(self.n)
        if points == "chebyshev":
            return chebyshev_points(self.n)
        return np.array(points, dtype=np.float64)

    def _roots(self, j: int) -> np.ndarray:
        """Points of the ``n - d`` workers that do not hold partition ``j``."""
        return self.thetas[(j + np.arange(1, self.n - self.d + 1)) % self.n]

    def _build_b(self) -> np.ndarray:
        """The paper's ``B``, shape ``(m n, n - s)``; row ``j m + u`` holds ``p_j^(u+1)``."""
        n, d, m = self.n, self.d, self.m
        width = n - self.s  # = n - d + m
        b = np.zeros((m * n, width))
        for j in range(n):
            base = np.atleast_1d(np.poly(self._roots(j)))[::-1]  # low-to-high, monic, degree n - d
            current = base
            for u in range(m):
                if u:
                    # n - d - 1 < 0 when d = n: p_j = 1 has no such coefficient
                    lead = current[n - d - 1] if n - d >= 1 else 0.0
                    current = np.concatenate([[0.0], current])
                    current[: len(base)] -= lead * base
                b[j * m + u, : len(current)] = current
        return b + 0.0

    def _build_encoding(self) -> np.ndarray:
        """``E[i, j, u] = p_j^(u+1)(theta_i)``, shape ``(n, n, m)``.

        ``p_j^(u+1) = p_j q_{j,u}`` with ``q_{j,u}`` monic of degree ``u``; ``p_j`` is evaluated
        as a product over its roots so that it is exactly zero at the workers lacking ``D_j``.
        """
        n, d, m = self.n, self.d, self.m
        encoding = np.zeros((n, n, m))
        for j in range(n):
            roots = self._roots(j)
            p_values = np.prod(self.thetas[:, None] - roots[None, :], axis=1)  # (n,)
            quotient = np.array([1.0])  # q_{j,0}, low-to-high
            for u in range(m):
                if u:
                    # q_u = x q_{u-1} - [x^{n-d-1}] (q_{u-1} p_j)
                    lead = self._b[j * m + u - 1, n - d - 1] if n - d >= 1 else 0.0
                    quotient = np.concatenate([[-lead], quotient])
                encoding[:, j, u] = p_values * np.polyval(quotient[::-1], self.thetas)
        return encoding + 0.0  # turns the -0.0 of negative factors times zero into 0.0

    @classmethod
    def parameter_grid(cls, max_n: int) -> Iterator[dict[str, Any]]:
        """Every ``(n, d, s, m)`` with ``d = s + m`` and ``n <= max_n`` (paper points), and a few
        with ``d > s + m``, Chebyshev points or explicit points.

        Codes with ``d > s + m`` equal the ``d = s + m`` code with ``s' = d - m``, so they are
        sampled rather than enumerated.
        """
        for n in range(1, max_n + 1):
            for d in range(1, n + 1):
                for m in range(1, d + 1):
                    yield {"n": n, "d": d, "s": d - m, "m": m}
        extras: list[dict[str, Any]] = [
            {"n": 5, "d": 4, "s": 1, "m": 2},
            {"n": 7, "d": 5, "s": 0, "m": 3},
            {"n": 9, "d": 6, "s": 2, "m": 2},
            {"n": 6, "d": 4, "s": 2, "m": 2, "points": "chebyshev"},
            {"n": 10, "d": 5, "s": 3, "m": 2, "points": "chebyshev"},
            {"n": 12, "d": 7, "s": 4, "m": 3, "points": "chebyshev"},
            {"n": 5, "d": 3, "s": 1, "m": 2, "points": (-2.0, -1.0, 0.0, 1.0, 2.0)},
        ]
        for extra in extras:
            if extra["n"] <= max_n:
                yield extra

    def params(self) -> dict[str, Any]:
        return {"n": self.n, "d": self.d, "s": self.requested_s, "m": self.m, "points": self.points}

    def partitions(self, worker: int) -> tuple[int, ...]:
        return tuple((worker + t) % self.n for t in range(self.d))

    def b_matrix(self) -> np.ndarray:
        """The paper's ``B`` (eq. 11), shape ``(m n, n - s)``: row ``j m + u`` holds the
        coefficients (low to high) of ``p_j^(u+1)``."""
        return self._b.copy()

    # -- decoding ----------------------------------------------------------------------------
    def completion_times(self, arrivals: np.ndarray) -> np.ndarray:
        """Any ``n - s`` workers decode: the ``(n - s)``-th arrival."""
        return order_statistic(self._arrivals(arrivals), self.n - self.s)

    def completion_rule(self) -> CompletionRule:
        """Any ``n - s`` of the ``n`` workers (``s = d - m``)."""
        return CompletionRule.any_of(self.all_message_keys(), self.n - self.s)

    def is_decodable(self, keys: Iterable[int]) -> bool:
        """Any ``n - s`` distinct workers (``s = d - m``)."""
        return len({key for key in keys if 0 <= key < self.n}) >= self.n - self.s

    def _solve(self, keys: tuple[int, ...]) -> tuple[tuple[int, ...], np.ndarray]:
        size = self.n - self.s
        if len(keys) < size:
            raise NotDecodableError(
                f"{self.name} needs any n - s = {size} workers; got {len(keys)}",
                needed=size - len(keys),
                candidates=[w for w in range(self.n) if w not in set(keys)],
            )
        used = tuple(sorted(keys)[:size])  # the cache hands keys sorted by repr
        t = self.thetas[list(used)]
        differences = t[:, None] - t[None, :]
        np.fill_diagonal(differences, 1.0)
        weights = differences.prod(axis=1)  # barycentric w_r, (N,)
        # top coefficients of prod_{t != r}(x - theta_t): synthetic division of
        # prod_t (x - theta_t) by (x - theta_r), highest first
        full = np.poly(t)  # (N + 1,), highest first
        top = np.empty((self.m, size))
        top[0] = 1.0
        for step in range(1, self.m):
            top[step] = full[step] + t * top[step - 1]
        # chunk u is coefficient n - d + u = N - m + u, i.e. step m - 1 - u from the top
        coefficients = top[::-1] / weights[None, :]
        return used, coefficients

    def _condition(self, used: tuple) -> float:
        """Condition number of the Vandermonde matrix ``[theta_r^c]`` inverted for ``used``."""
        vandermonde = np.vander(self.thetas[list(used)], increasing=True)
        return float(np.linalg.cond(vandermonde))
