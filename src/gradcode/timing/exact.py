"""Exact expectations of order statistics, used to test the Monte Carlo.

When the master needs any ``r`` of ``n`` i.i.d. arrivals with CDF ``F``, the completion time is
the ``r``-th order statistic, and ``E[X_(r)] = lo + integral_lo^inf P(Bin(n, F(t)) < r) dt`` for
arrivals supported on ``[lo, inf)``. Two closed forms cover the papers' models:

- shifted exponential ``shift + Exp(rate)``: ``E[X_(r)] = shift + (H_n - H_(n-r)) / rate``
  (Renyi: the gaps between exponential order statistics are independent exponentials);
- paper 000, Section 5: worker ``i``'s arrival ``d T1_i + T2_i / m`` is the constant
  ``d t1 + t2 / m`` plus the sum of ``Exp(lambda1 / d)`` and ``Exp(m lambda2)``, a
  hypoexponential variable with CDF
  ``1 - (b e^(-a t) - a e^(-b t)) / (b - a)`` (``a != b``) or ``1 - e^(-a t) (1 + a t)``.

``ye_abbe_expected_time`` reproduces every cell of the paper's Table 3 to the four decimals
printed (they are exact expectations, not simulations).
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
from scipy import integrate, stats


def harmonic(count: int) -> float:
    """``H_count = 1 + 1/2 + ... + 1/count`` (``H_0 = 0``)."""
    return math.fsum(1.0 / i for i in range(1, count + 1))


def _check_rank(n: int, r: int) -> None:
    if not 1 <= r <= n:
        raise ValueError(f"order statistic needs 1 <= r <= n (got n={n}, r={r})")


def shifted_exponential_order_mean(shift: float, rate: float, n: int, r: int) -> float:
    """``E`` of the ``r``-th smallest of ``n`` i.i.d. ``shift + Exp(rate)``."""
    _check_rank(n, r)
    return shift + (harmonic(n) - harmonic(n - r)) / rate


def order_statistic_mean(cdf: Callable[[np.ndarray], np.ndarray], n: int, r: int) -> float:
    """``E[X_(r)]`` of ``n`` i.i.d. non-negative variables with CDF ``cdf`` (quadrature)."""
    _check_rank(n, r)

    def survival(t: float) -> float:
        return float(stats.binom.cdf(r - 1, n, cdf(np.asarray(t))))

    value, _ = integrate.quad(survival, 0.0, np.inf, limit=500, epsabs=1e-12, epsrel=1e-10)
    return value


def hypoexponential_cdf(a: float, b: float) -> Callable[[np.ndarray], np.ndarray]:
    """CDF of ``Exp(a) + Exp(b)`` (independent), vectorised over ``t``."""
    if a <= 0 or b <= 0:
        raise ValueError(f"rates must be > 0 (got {a}, {b})")

    def cdf(t: np.ndarray) -> np.ndarray:
        t = np.maximum(np.asarray(t, dtype=np.float64), 0.0)
        if math.isclose(a, b, rel_tol=1e-12):
            return 1.0 - np.exp(-a * t) * (1.0 + a * t)
        return 1.0 - (b * np.exp(-a * t) - a * np.exp(-b * t)) / (b - a)

    return cdf


def ye_abbe_expected_time(
    n: int, d: int, m: int, *, lambda1: float, t1: float, lambda2: float, t2: float
) -> float:
    """``E[T_tot]`` of paper 000, Section 5, for the code ``(n, d, s = d - m, m)`` (``k = n``).

    Worker ``i`` is done at ``d T1_i + T2_i / m``; the master needs the first ``n - s`` of them.
    """
    s = d - m
    if not 1 <= m <= d <= n:
        raise ValueError(f"needs 1 <= m <= d <= n (got n={n}, d={d}, m={m})")
    spread = order_statistic_mean(hypoexponential_cdf(lambda1 / d, lambda2 * m), n, n - s)
    return d * t1 + t2 / m + spread
