"""CodedReduce's theory (paper 001): the size of an ``(n, L)``-regular tree, Theorem 1's optimal
load ``r_CR`` and Theorem 2's bounds on the expected run time. ``gradcode.codes.coded_reduce``
builds the code on them.

Theorem 2 (run time under shifted-exponential computation and single-port links) is an
asymptotic statement with ``o(n)`` and ``o(1)`` terms; ``theorem2_bounds`` returns its bounds with
those terms set to zero, and also the exact expected per-group computation time
``E[T_(n-s)] = (r_CR d / mu)(H_n - H_s) + a r_CR d`` the proof builds on.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from gradcode.codes.base import check_int, require


def tree_size(n: int, L: int) -> int:
    """Number of workers ``N = n + n^2 + ... + n^L`` of an ``(n, L)``-regular tree."""
    return sum(n**layer for layer in range(1, L + 1))


def check_tree(scheme: str, n: Any, L: Any, s: Any) -> tuple[int, int, int]:
    """``(n, L, s)`` checked for scheme (or function) ``scheme``: ``n, L >= 1``, ``0 <= s < n``."""
    n = check_int("n", scheme, n, minimum=1)
    L = check_int("L", scheme, L, minimum=1)
    s = check_int("s", scheme, s)
    require(s < n, f"{scheme} needs s < n (got n={n}, s={s})")
    return n, L, s


def r_cr(n: int, L: int, s: int) -> Fraction:
    """Theorem 1: the optimal load ``1 / (q + q^2 + ... + q^L)`` with ``q = n / (s + 1)``.

    The fraction of the data set every worker of an ``(n, L)``-regular tree computes on when
    every parent tolerates ``s`` straggling children; e.g. ``r_cr(3, 2, 1) == Fraction(4, 15)``.
    """
    n, L, s = check_tree("r_cr", n, L, s)
    q = Fraction(n, s + 1)
    return 1 / sum(q**layer for layer in range(1, L + 1))


@dataclass(frozen=True)
class Theorem2Bounds:
    """Expected run time of CodedReduce, Theorem 2 of paper 001 (seconds).

    ``lower`` and ``upper`` are eq. (7) and (8) with their ``o(n)`` and ``o(1)`` terms set to
    zero, so they hold only asymptotically (``n -> infinity`` with ``alpha = s / n`` fixed);
    ``computation`` is the exact ``E[T_(n-s)] = (r d / mu)(H_n - H_s) + a r d`` of one group
    of siblings, and ``upper_proof`` the bound of Appendix D before its last relaxation,
    ``computation + L (n - s) tc`` (again without its ``o(1)``).
    """

    lower: float
    upper: float
    computation: float
    upper_proof: float


def _harmonic(count: int) -> float:
    return math.fsum(1.0 / i for i in range(1, count + 1))


def theorem2_bounds(
    n: int, L: int, s: int, *, d: float, mu: float, a: float, tc: float
) -> Theorem2Bounds:
    """Theorem 2's bounds on ``E[T_CR]`` for an ``(n, L)``-regular tree.

    Parameters follow eq. (6): a worker with ``d_i = r_CR d`` data points finishes after
    ``a d_i`` plus an exponential time of rate ``mu / d_i``; ``d`` is the data set size, ``tc``
    the time of one child-to-parent transfer. Needs ``s >= 1`` (the bounds contain
    ``log(1 / alpha)``, ``alpha = s / n``).
    """
    n, L, s = check_tree("theorem2_bounds", n, L, s)
    require(s >= 1, f"theorem2_bounds needs s >= 1 for log(1/alpha) (got s={s})")
    for name, value in (("d", d), ("mu", mu), ("a", a), ("tc", tc)):
        require(
            value >= 0 and math.isfinite(value),
            f"theorem2_bounds needs finite {name} >= 0 (got {name}={value})",
        )
    require(mu > 0, f"theorem2_bounds needs mu > 0 (got mu={mu})")
    load = float(r_cr(n, L, s)) * d
    alpha = s / n
    head = load / mu * math.log(1 / alpha) + a * load
    computation = load / mu * (_harmonic(n) - _harmonic(s)) + a * load
    return Theorem2Bounds(
        lower=head + (n - s + L - 1) * tc,
        upper=head + n * L * tc,
        computation=computation,
        upper_proof=computation + L * (n - s) * tc,
    )
