"""Approximate gradient coding by Berrut's rational interpolation (paper 004: Jahani-Nezhad &
Maddah-Ali, "Optimal Communication-Computation Trade-Off in Heterogeneous Gradient Coding",
Section V).

Scheme (Sec. V-B). The encoding is Section III's (eq. 13 with ``a = 0``) for an arbitrary
placement and a freely chosen ``m`` (the paper's ``m = floor(d / R)`` for a budget of ``R``
symbols per message): worker ``w`` sends ``f(alpha_w)`` of the universal polynomial ``f``
(degree ``D = n - r + m - 1``, ``r`` the minimum replication, ``f(beta_u)`` = chunk ``u`` of
the gradient), see ``gradcode.codes.heterogeneous``. Nothing ties ``r``, ``s`` and ``m``
together: Section V is for the cases ``r < s + m`` or more than ``s`` stragglers. From ANY
non-empty set ``F`` of responders the master evaluates Berrut's interpolant (eq. 34)::

    f~(x) = sum_i [(-1)^i / (x - alpha~_i)] f(alpha~_i) / sum_j (-1)^j / (x - alpha~_j),

``alpha~`` the responders' points in increasing order, at the ``beta`` (eq. 35). That is a
fixed linear combination of the messages, cached per responder set as in any ``LinearCode``
(Remark 16: ``O(|F|)`` per output entry; one linear combination per chunk).

Points. As Remark 14 suggests, the workers' ``alpha`` are the Chebyshev points of the second
kind ``cos(t pi / (n - 1))``, ``t = 0 .. n - 1`` (the paper's ``{cos(k pi / N)}_{k=0}^N`` with
``N = n - 1``), assigned to workers by ``assign_nodes`` as in ``heterogeneous`` (in index order
the relative error reaches 1e+13 at ``n = 50``, ``r = 12``; golden order alone leaves 20 for a
placement with two heavy workers at ``n = 10``, the swaps 0.1). The ``beta`` are ``m`` angle
midpoints ``cos((j + 1/2) pi / (n - 1))`` spread evenly (the paper does not place them;
midway between two nodes keeps eq. 13's ``1 / (beta - alpha_j)`` factors smallest).

Accuracy (Remark 15 explains it; measured). Berrut's interpolant reproduces constants, and
linear functions exactly when ``|F|`` is even (``sum_i (-1)^i = 0``: the parity split of
Remark 15). So ``decode`` is exact up to round-off when ``D = 0`` (everyone holds everything,
``m = 1``), and when ``D = 1`` with an even number of responders. Otherwise its error is that
of interpolating ``f`` at the node spacing, and ``f`` is not smooth at that scale: partition
``i``'s term vanishes at every non-holder node and equals 1 at ``beta``, so a non-holder next
to ``beta`` forces a jump within half a node spacing. Mean relative errors of the decoded
gradient over 40 random instances, all ``n`` / ``3n/4`` / ``n/2`` responders: ``n = 30, r =
27, m = 1``: 0.07 / 0.14 / 0.22; ``n = 20, r = 18``: 0.35 / 0.40 / 0.80; ``n = 30, r = 3``:
0.07 / 1.5 / 2.3 (a relative error of 1 is what returning zero gives). So the approximation
is informative with everyone answering and degrades gracefully with stragglers only when the
replication is high; the worst patterns lose both nodes next to a ``beta``. Remark 15's bound
held in every instance we tried (``test_remark15_bound_holds_on_random_instances``; error /
bound at most 0.01) but is far above the error, ``||f''||`` being large for the same reason.
This is a faithful implementation of Section V, which the paper does not evaluate numerically.

Error estimate. ``decode_result`` returns ``approx`` as its ``gradient`` and, as its
``error_estimate``, the larger
2-norm distance between ``approx`` and the Berrut interpolants of the even- and of the
odd-ranked responders. Berrut's interpolant converges like the node gap (Remark 15's ``sin((s1
+ 1) pi / 2N)`` factor), so halving the nodes about doubles the error and these distances are
of the order of the error itself. A computable proxy, not a bound: over 270 random instances
estimate / error had median 2.3, 5 % and 95 % quantiles 1.0 and 6.8, and 97 % of the ratios
lay in [0.3, 10]. ``remark15_bound`` evaluates the paper's bound given ``||f'||, ||f''||``
(``evaluate`` gives ``f`` itself, e.g. to compute them in tests).

``is_decodable`` is the design's stopping rule, ``n - s`` responders (as in
``ignore-stragglers``); ``decode`` accepts any non-empty set of responders (Remark 12).
Round-off is negligible next to the approximation error, hence ``numerically_sound_up_to =
None`` (Remark 17: Berrut's formula is backward stable while its Lebesgue constant is small).

Shapes: ``partials`` ``(load(w), l)``; a message ``(ceil(l / m),)``; ``decode`` ``(l,)``;
``encoding_matrix()`` ``(n, k, m)``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np

from gradcode.codes.base import DecodeResult, MessageKey, NotDecodableError, check_int, require
from gradcode.codes.capabilities import Capabilities
from gradcode.codes.combine import combine_chunks, message_vectors
from gradcode.codes.completion import CompletionRule, order_statistic
from gradcode.codes.placements import cyclic_placement, random_placement, validate_placement
from gradcode.codes.universal_polynomial import UniversalPolynomialCode


def berrut_points(n: int, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Candidate worker nodes ``cos(t pi / (n - 1))`` (``(n,)``) and the ``beta`` (``(m,)``)."""
    nodes = np.cos(np.arange(n) * np.pi / (n - 1))
    slots = np.array([((2 * u + 1) * (n - 1)) // (2 * m) for u in range(m)], dtype=np.float64)
    return nodes, np.cos((slots + 0.5) * np.pi / (n - 1))


def berrut_matrix(nodes: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Berrut's basis (eq. 29) at ``targets``: ``(len(targets), len(nodes))``.

    ``nodes`` in any order: the signs ``(-1)^i`` follow their rank. Targets differ from nodes.
    """
    signs = np.empty(nodes.size)
    signs[np.argsort(nodes, kind="stable")] = (-1.0) ** np.arange(nodes.size)
    terms = signs[None, :] / (targets[:, None] - nodes[None, :])
    return terms / terms.sum(axis=1, keepdims=True)


class BerrutCode(UniversalPolynomialCode):
    """Section V's approximate scheme: eq. 13 encoding, Berrut decoding at the ``beta``.

    Give either ``placement`` (one list of partitions per worker) or ``n`` and ``r`` for the
    cyclic placement with ``k = n`` (worker ``w`` holds ``w .. w + r - 1``; default ``r = min(n,
    s + m)``, the replication exact decoding would need, Sec. V item 1). ``s`` is the number
    of stragglers the design waits for, ``m`` the message reduction.
    """

    name = "berrut"
    exact = False
    capabilities: ClassVar[Capabilities] = Capabilities(estimates_error=True)
    #: approximate scheme: round-off is far below the approximation error at every n <= 50
    numerically_sound_up_to: ClassVar[int | None] = None

    def __init__(
        self,
        placement: Sequence[Sequence[int]] | None = None,
        s: int = 0,
        m: int = 1,
        *,
        n: int | None = None,
        r: int | None = None,
    ) -> None:
        self.s = check_int("s", self.name, s)
        self.m = check_int("m", self.name, m, minimum=1)
        require(
            (placement is None) != (n is None),
            f"{self.name} needs either placement or n (got placement={placement!r}, n={n!r})",
        )
        self._cyclic = placement is None
        if placement is None:
            n = check_int("n", self.name, n, minimum=2)
            r = min(n, self.s + self.m) if r is None else check_int("r", self.name, r, minimum=1)
            require(r <= n, f"{self.name} needs r <= n (got n={n}, r={r})")
            placement = cyclic_placement(n, r)
        else:
            require(r is None, f"{self.name} takes r only with n (got r={r}, and a placement)")
        self._placement = validate_placement(self.name, placement)
        self.n = len(self._placement)
        require(self.n >= 2, f"{self.name} needs n >= 2 workers (got n={self.n})")
        require(self.s < self.n, f"{self.name} needs s < n (got n={self.n}, s={self.s})")
        require(self.m <= self.n - 1, f"{self.name} needs m <= n - 1 (got n={self.n}, m={self.m})")
        self.a = 0
        self._holders = self._holders_of(self._placement)
        self.k = self._holders.shape[1]
        self.r = int(self._holders.sum(axis=0).min())
        self._set_up(*berrut_points(self.n, self.m))

    @classmethod
    def parameter_grid(cls, max_n: int) -> Iterator[dict[str, Any]]:
        """Representative family (placements are unbounded).

        For every ``2 <= n <= max_n``: cyclic placements with ``r`` in ``{1, 2, n - 2, n - 1,
        n}`` and ``(s, m)`` in ``{(0, 1), (1, 1), (2, 2), (n // 3, 1)}`` (within ``s < n``,
        ``m < n``), and for ``n >= 4`` a seeded random placement (``k = n + 2``, ``r = 2``)
        and a heterogeneous one (two workers six times as likely to hold a partition).
        """
        for n in range(2, max_n + 1):
            pairs = sorted({(0, 1), (1, 1), (2, 2), (n // 3, 1)})
            pairs = [(s, m) for s, m in pairs if s < n and m <= n - 1]
            for r in sorted({1, 2, n - 2, n - 1, n} & set(range(1, n + 1))):
                for s, m in pairs:
                    yield {"n": n, "r": r, "s": s, "m": m}
            if n >= 4:
                placements = (
                    random_placement(n, n + 2, 2, seed=n),
                    random_placement(n, n, 2, seed=3 * n, weights=[6.0, 6.0] + [1.0] * (n - 2)),
                )
                for placement in placements:
                    for s, m in pairs[:2]:
                        yield {"placement": placement, "s": s, "m": m}

    def params(self) -> dict[str, Any]:
        if self._cyclic:
            return {"n": self.n, "r": self.r, "s": self.s, "m": self.m}
        return {"placement": self.placement(), "s": self.s, "m": self.m}

    def min_responders(self) -> int:
        return self.n - self.s

    def completion_times(self, arrivals: np.ndarray) -> np.ndarray:
        """The design waits for any ``n - s`` workers: that order statistic."""
        return order_statistic(self._arrivals(arrivals), self.n - self.s)

    def completion_rule(self) -> CompletionRule:
        """Any ``n - s`` of the ``n`` workers (the design's stopping rule)."""
        return CompletionRule.any_of(self.all_message_keys(), self.n - self.s)

    def is_decodable(self, keys: Iterable[MessageKey]) -> bool:
        """The design's stopping rule: at least ``n - s`` workers answered.

        ``decode`` itself accepts any non-empty set and is approximate either way.
        """
        return len(self._known(keys)) >= self.n - self.s

    def _weights(self, keys: tuple[MessageKey, ...]) -> np.ndarray:
        if not keys:
            raise NotDecodableError(
                f"{self.name} needs at least one response", needed=1, candidates=range(self.n)
            )
        return berrut_matrix(self._alpha[list(keys)], self._beta)

    def decode_result(self, messages: Mapping[MessageKey, np.ndarray], length: int) -> DecodeResult:
        """Berrut's approximation of the gradient from any non-empty set of messages, and the
        estimate of ``||approx - gradient||_2`` as ``error_estimate``.

        The estimate is the larger 2-norm distance from ``approx`` to the Berrut interpolants
        of the even- and of the odd-ranked responders (ranked by their points); ``inf`` with
        a single responder. A proxy, not a bound (module docstring). Costs three passes.
        """
        self._known(messages)
        result = super().decode_result(messages, length)
        return replace(result, error_estimate=self._error_estimate(messages, result.gradient))

    def decode(self, messages: Mapping[MessageKey, np.ndarray], length: int) -> np.ndarray:
        """The approximation alone (one pass; the estimate costs two more)."""
        self._known(messages)
        return super().decode_result(messages, length).gradient

    def _error_estimate(
        self, messages: Mapping[MessageKey, np.ndarray], approx: np.ndarray
    ) -> float:
        length = approx.shape[0]
        keys = sorted(self._known(messages), key=lambda key: self._alpha[key])
        if len(keys) < 2:
            return math.inf
        width = self.message_length(length)
        estimate = 0.0
        for half in (keys[0::2], keys[1::2]):
            weights = berrut_matrix(self._alpha[half], self._beta)
            vectors = message_vectors(self.name, messages, half, width)
            coarse = combine_chunks(np.empty((self.m, width)), weights, vectors)
            distance = float(np.linalg.norm(coarse.reshape(-1)[:length] - approx))
            estimate = max(estimate, distance)
        return estimate

    def remark15_bound(self, responders: int, first: float, second: float) -> float:
        """Remark 15's bound on ``sup |f~ - f|`` over ``[-1, 1]`` with ``responders`` answers.

        ``first`` and ``second`` are ``sup |f'|`` and ``sup |f''|`` of the (scalar) function
        interpolated. With ``N = n - 1`` (our nodes are the paper's ``cos(k pi / N)``) and
        ``s1 = n - responders`` stragglers, the bound is ``2 (1 + nu) sin((s1 + 1) pi / 2N)``
        times ``||f''||`` when ``N - s1`` is odd (an even number of responders) and times
        ``||f''|| + ||f'||`` otherwise, ``nu = (s1 + 1)(s1 + 3) pi^2 / 4``; it needs
        ``s1 < N - 2``.
        """
        responders = check_int("responders", self.name, responders, minimum=1)
        big_n = self.n - 1
        stragglers = self.n - responders
        require(
            0 <= stragglers < big_n - 2,
            f"{self.name}: Remark 15 needs 0 <= s1 < N - 2 (got s1={stragglers}, N=n-1={big_n})",
        )
        nu = (stragglers + 1) * (stragglers + 3) * math.pi**2 / 4
        factor = 2 * (1 + nu) * math.sin((stragglers + 1) * math.pi / (2 * big_n))
        if (big_n - stragglers) % 2 == 1:
            return factor * second
        return factor * (second + first)
