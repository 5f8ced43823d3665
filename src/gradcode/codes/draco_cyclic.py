"""DRACO's cyclic code (Chen, Wang, Charles, Papailiopoulos, ICML 2018, Sec. 4.2), derived
here in real arithmetic: a cyclic MDS code whose decoder locates and corrects up to ``a``
adversarial messages, with ``s`` stragglers.

Placement: ``k = n`` partitions, worker ``w`` holds the ``r = 2a + s + 1`` cyclically
consecutive partitions ``w, w + 1, ..., w + r - 1`` (partition ``j`` is on workers ``j - r + 1
.. j``), and sends one real combination of them (``m = 1``).

Code. The paper's messages are a codeword of a cyclic code whose spectrum vanishes on
``q = 2a + s`` consecutive frequencies (its Fourier-based construction). We keep that
structure and make it real: the vanishing frequencies are the ``q`` consecutive ones centred
on ``n / 2``, a set closed under conjugation, so the codewords are exactly the real
trigonometric polynomials of degree ``h = (n - q - 1) / 2`` sampled at ``theta_w = 2 pi w /
n``. This needs ``n - q`` odd, i.e. ``n - r`` even (``n`` odd in the paper's ``s = 0``
case); other ``n`` are refused. Partition ``j``'s column of the encoding matrix ``B`` is the
codeword supported on its ``r`` holders (it exists and is unique up to scale, since a
trigonometric polynomial of degree ``h`` is fixed by ``2h`` zeros outside the holders; by
the BCH bound it is non-zero on all ``r`` of them), scaled so its entries sum to 1; the columns
are cyclic shifts of one another. The messages ``Y = B G`` are then samples of a trigonometric
polynomial ``T`` (per coordinate) whose sum over all ``n`` workers is the gradient: ``sum_j
g_j = n * T``'s constant term.

Decoding from responders ``R`` (``|R| >= n - s = 2h + 1 + 2a``, ``is_decodable``):

1. Syndromes ``S = H Y_R`` with ``H`` an orthonormal basis of the checks of degree-``h``
   trigonometric polynomials on ``R``. ``S ~ 0`` (relative ``detection_tol``) means no
   corruption: decode from all of ``R``.
2. Projection ``W = Y_R S^T``: the messages projected on their own syndromes, a small ``|R| x
   (|R| - 2h - 1)`` word in which a corrupted row stays corrupted (row ``b`` of its error part
   is ``Gram(E)[b] H_J^T``, non-zero since any ``2a`` columns of ``H`` are independent).
3. Location: for ``e = 1 .. a`` the sets ``J`` of ``e`` responders are tried in turn, and the
   first ``e`` for which ``W`` without ``J`` lies on a degree-``h`` trigonometric polynomial
   (least residual, below ``detection_tol``) gives the liars. ``R \\ J`` has at least ``2h + 1
   + a`` points, so a liar left in it would leave ``2h + 1`` honest points on the same
   polynomial: no error. So ``J`` is exactly the liars, named in
   ``DecodeResult.adversaries``. The search costs ``sum_e C(|R|, e)`` least-squares fits of
   the small ``W`` (55 for ``|R| = 10``, ``a = 2``), not of the messages.
4. The gradient: ``n`` times the constant term of the least-squares trigonometric fit through
   ``R \\ J`` (cached coefficients per responder set, one linear combination of the messages).

A message holding a NaN or an infinity is a liar located before step 1 (NaN would pass the
syndrome test of step 1 silently): it is left out as an erasure and counts among the ``a``
(``gradcode.codes.liars.nonfinite``); more than ``a`` of them are refused at once.

More than ``a`` liars in general position (e.g. independent noise) leave no set of ``e <= a``
that explains the syndromes:
``NotDecodableError`` (``needed=None``). What it cannot detect (the minimum distance ``2a +
s + 1``, a bound of every code, not of this decoder): ``a + 1`` or more colluding liars that
move the responders' word to within ``a`` of another codeword (another gradient's) are
indistinguishable from ``a`` liars on that codeword; the decoder returns that gradient and
names up to ``a`` responders, honest ones among them. The MPI runtime's emulation, which knows
who lies, catches it when an honest worker is named (``gradcode.train.faults.caught``).

Numerically the trigonometric basis at equispaced points is orthogonal, so the fits are well
conditioned while few points are missing; measured below 1e-12 on every pattern of the
``parameter_grid`` (``n <= 12``).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator, Mapping
from typing import ClassVar

import numpy as np

from gradcode.codes.base import DecodeResult, MessageKey, NotDecodableError, check_int, require
from gradcode.codes.capabilities import Capabilities
from gradcode.codes.combine import linear_combination, message_vectors
from gradcode.codes.completion import CompletionRule, order_statistic
from gradcode.codes.liars import EveryLiarPatterns, beyond_a_nonfinite, nonfinite
from gradcode.codes.linear import LinearCode


def trig_basis(angles: np.ndarray, degree: int) -> np.ndarray:
    """``[1, cos t, sin t, ..., cos(degree t), sin(degree t)]`` at ``angles``:
    ``(len(angles), 2 degree + 1)``."""
    columns = [np.ones_like(angles)]
    for t in range(1, degree + 1):
        columns += [np.cos(t * angles), np.sin(t * angles)]
    return np.stack(columns, axis=1)


def _orthonormal_complement(basis: np.ndarray) -> np.ndarray:
    """Orthonormal columns spanning the complement of ``basis``'s column space."""
    q, _ = np.linalg.qr(basis, mode="complete")
    return q[:, basis.shape[1] :]


class DracoCyclic(EveryLiarPatterns, LinearCode):
    """DRACO's cyclic code in real arithmetic (see the module docstring).

    Parameters: ``n`` workers (``k = n``), ``a`` adversaries, ``s`` stragglers; needs
    ``r = 2a + s + 1 <= n`` and ``n - r`` even.
    """

    name = "draco-cyclic"
    capabilities: ClassVar[Capabilities] = Capabilities(corrects_adversaries=True)
    #: measured on the parameter grid up to n = 12 only (module docstring)
    numerically_sound_up_to: ClassVar[int | None] = 12
    #: relative size below which a syndrome or a residual counts as round-off
    detection_tol: ClassVar[float] = 1e-10

    def __init__(self, n: int, a: int = 1, s: int = 0) -> None:
        self.n = check_int("n", self.name, n, minimum=1)
        self.a = check_int("a", self.name, a)
        self.s = check_int("s", self.name, s)
        self.r = 2 * self.a + self.s + 1
        require(
            self.r <= self.n,
            f"{self.name} needs 2a + s + 1 <= n (got n={self.n}, a={self.a}, s={self.s})",
        )
        require(
            (self.n - self.r) % 2 == 0,
            f"{self.name} needs n - (2a + s + 1) even, for real messages: the 2a + s vanishing "
            f"frequencies centred on n / 2 (got n={self.n}, a={self.a}, s={self.s})",
        )
        self.k, self.m = self.n, 1
        self.degree = (self.n - self.r) // 2  # h: codewords are trig polynomials of degree h
        self._angles = 2.0 * np.pi * np.arange(self.n) / self.n
        self._basis = trig_basis(self._angles, self.degree)  # (n, 2h + 1)
        holders = [(-j) % self.n for j in range(self.r)]  # partition 0's: workers 0, n-1, ...
        outside = [w for w in range(self.n) if w not in set(holders)]
        if outside:
            # the trig polynomial vanishing at every non-holder: a 1-dim null space
            coefficients = np.linalg.svd(self._basis[outside])[2][-1]
        else:
            coefficients = np.eye(self._basis.shape[1])[0]
        column = self._basis @ coefficients
        column[outside] = 0.0  # exact zeros where the polynomial vanishes
        column /= column.sum()  # the sum of all n messages is then the gradient
        encoding = np.stack([np.roll(column, j) for j in range(self.n)], axis=1)
        self._threshold = self.n - self.s
        self._init_linear(encoding[:, :, None])

    @classmethod
    def parameter_grid(cls, max_n: int) -> Iterator[dict[str, int]]:
        """Every ``(n, a, s)`` with ``a <= 2``, ``s <= 2``, ``2a + s + 1 <= n`` and ``n - (2a
        + s + 1)`` even; above ``n = 9`` only ``a + s <= 2`` (the liar placements multiply)."""
        for n in range(1, max_n + 1):
            for a in range(3):
                for s in range(3):
                    r = 2 * a + s + 1
                    if r <= n and (n - r) % 2 == 0 and (n <= 9 or a + s <= 2):
                        yield {"n": n, "a": a, "s": s}

    def params(self) -> dict[str, int]:
        return {"n": self.n, "a": self.a, "s": self.s}

    def partitions(self, worker: int) -> tuple[int, ...]:
        return tuple((worker + j) % self.n for j in range(self.r))

    # -- decodability -----------------------------------------------------------------------
    def min_responders(self) -> int:
        return self._threshold

    def completion_times(self, arrivals: np.ndarray) -> np.ndarray:
        """Any ``n - s`` workers: that order statistic of the arrivals."""
        return order_statistic(self._arrivals(arrivals), self._threshold)

    def completion_rule(self) -> CompletionRule:
        return CompletionRule.any_of(self.all_message_keys(), self._threshold)

    def _known(self, keys: Iterable[MessageKey]) -> tuple[int, ...]:
        found = set()
        for key in keys:
            if not isinstance(key, int | np.integer) or not 0 <= key < self.n:
                raise ValueError(f"{self.name}: unknown message key {key!r}")
            found.add(int(key))
        return tuple(sorted(found))

    def is_decodable(self, keys: Iterable[MessageKey]) -> bool:
        """At least ``n - s`` distinct workers."""
        return len(self._known(keys)) >= self._threshold

    # -- decoding ---------------------------------------------------------------------------
    def _solve(self, keys: tuple[MessageKey, ...]) -> tuple[tuple[MessageKey, ...], np.ndarray]:
        """``n`` times the constant term of the least-squares trig fit through ``keys``."""
        rows = list(self._known(keys))
        if len(rows) < 2 * self.degree + 1:
            raise self._too_few(rows)
        constant = np.linalg.pinv(self._basis[rows])[0]  # (|keys|,)
        return tuple(rows), self.n * constant[None, :]

    def _too_few(self, keys: Iterable[int]) -> NotDecodableError:
        got = set(keys)
        return NotDecodableError(
            f"{self.name} needs n - s = {self._threshold} responders (got {len(got)})",
            needed=self._threshold - len(got),
            candidates=[w for w in range(self.n) if w not in got],
        )

    def decode_result(self, messages: Mapping[MessageKey, np.ndarray], length: int) -> DecodeResult:
        """The gradient ``(length,)``; ``adversaries``: the responders found lying."""
        keys = self._known(messages)
        if len(keys) < self._threshold:
            raise self._too_few(keys)
        broken = nonfinite({key: messages[key] for key in keys})
        if len(broken) > self.a:
            raise beyond_a_nonfinite(self.name, self.a, broken)
        # a non-finite message is a located liar: an erasure that spends one of the a errors
        # (n - s - e responders still exceed 2h + 1 + 2 (a - e))
        keys = tuple(key for key in keys if key not in broken)
        width = self.message_length(length)
        vectors = message_vectors(self.name, messages, keys, width)
        located = self._locate(keys, vectors, self.a - len(broken)) if self.a else ()
        liars = tuple(sorted((*broken, *located)))
        clean = tuple(key for key in keys if key not in set(liars))
        used, coefficients, condition = self._coefficients(clean)
        index = {key: row for row, key in enumerate(keys)}
        out = linear_combination(
            np.empty(width), coefficients[0], [vectors[index[key]] for key in used]
        )
        return DecodeResult(out[:length], used, condition, adversaries=liars)

    def _locate(
        self, keys: tuple[int, ...], vectors: list[np.ndarray], errors: int
    ) -> tuple[int, ...]:
        """Steps 1-3 of the module docstring: the (at most ``errors``) liars among ``keys``
        (``()``: none), all finite."""
        basis = self._basis[list(keys)]
        checks = _orthonormal_complement(basis).T  # (M - 2h - 1, M)
        stacked = np.stack(vectors)  # (M, width)
        syndromes = checks @ stacked
        total = float(np.linalg.norm(stacked))
        size = float(np.linalg.norm(syndromes))
        # finite but huge messages can overflow the norms: an infinite size is corruption
        if math.isfinite(size) and size <= self.detection_tol * max(total, 1e-300):
            return ()
        projected = stacked @ syndromes.T  # (M, M - 2h - 1)
        rows = range(len(keys))
        for count in range(1, errors + 1):
            best, best_residual = None, math.inf
            for liars in itertools.combinations(rows, count):
                keep = [row for row in rows if row not in set(liars)]
                word = projected[keep]
                residual = np.linalg.norm(_orthonormal_complement(basis[keep]).T @ word)
                relative = float(residual) / max(float(np.linalg.norm(word)), 1e-300)
                if relative < best_residual:
                    best, best_residual = liars, relative
            if best is not None and best_residual <= self.detection_tol:
                return tuple(keys[row] for row in best)
        raise NotDecodableError(
            f"{self.name}: more than a = {self.a} of the {len(keys) + self.a - errors} "
            "responses are corrupted (detected, not correctable)",
            needed=None,
        )

    def _condition(self, used: tuple) -> float:
        return float(np.linalg.cond(self._basis[list(used)]))
