"""Error correction for a real-number Reed-Solomon word: values of a polynomial of known degree
at distinct nodes, up to ``a`` of them corrupted. Syndromes, their projection and
Berlekamp-Welch in the Chebyshev basis (steps 1-3 of ``gradcode.codes.heterogeneous``'s
decoder, described and bounded in its docstring); ``heterogeneous`` and ``heterogeneous-poly``
decode with it.
"""

from __future__ import annotations

import math

import numpy as np

from gradcode.codes.base import MessageKey, NotDecodableError
from gradcode.codes.combine import combine_chunks

_EPS = float(np.finfo(np.float64).eps)
_TINY = float(np.finfo(np.float64).tiny)
#: a set-aside responder is reported corrupted when its misfit exceeds this many noise levels
_NOISE_SIGMAS = 30.0


def _complement(basis: np.ndarray) -> np.ndarray:
    """Orthonormal basis ``(rows, rows - cols)`` of the complement of ``basis``'s columns."""
    q, _ = np.linalg.qr(basis, mode="complete")
    return q[:, basis.shape[1] :]


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
    """``(clean keys, corrupted keys)``: steps 1-3 of ``gradcode.codes.heterogeneous``'s decoder.

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
