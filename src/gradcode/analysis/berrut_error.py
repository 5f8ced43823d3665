"""Paper 004, Sec. V: error of Berrut decoding versus stragglers, beside Remark 15's bound.

Section V's approximate scheme encodes as Section III (eq. 13, ``a = 0``) and decodes from any
responders ``F`` with Berrut's rational interpolant (eq. 34) of the universal polynomial ``f``
at the ``beta`` (eq. 35). Remark 15 bounds the error over ``[-1, 1]`` by
``2 (1 + nu) sin((s1 + 1) pi / 2N) ||f''||`` when ``N - s1`` is odd and by the same factor times
``||f''|| + ||f'||`` when it is even, ``nu = (s1 + 1)(s1 + 3) pi^2 / 4``, ``s1`` the actual
stragglers, ``N + 1 = n`` nodes ``cos(k pi / N)``, valid for ``s1 < N - 2``.

Gradient model: logistic regression on synthetic data (seeded): ``p = 20`` Gaussian features,
``40`` samples per partition, labels drawn from the logistic model of a random ``w*``; the
partial gradient of partition ``i`` at parameter ``w`` is ``X_i^T (sigmoid(X_i w) - y_i) /
M`` (``M`` samples in all), so the partials sum to the full gradient. A pool of ``16``
parameters ``w`` (between ``0`` and ``w*`` plus noise, as along a training run) gives 16
gradient instances per ``n``; trial ``t`` uses instance ``t mod 16`` and a fresh uniformly
random set of ``s1`` stragglers.

Grid: ``n`` in ``{10, 20, 30}``, cyclic placements (``k = n``), design ``s = n // 10``, and
three regimes: ``r = s + 1, m = 1`` (exactly enough replication for ``s`` stragglers: Sec. V's
second case beyond ``s``), ``r = s + 1, m = 2`` (Sec. V's first case, ``r < s + m``: a message
budget the replication cannot support exactly) and ``r = n / 2, m = 1`` (generous
replication). ``s1`` runs from ``0`` (everyone answers) to ``s + 8`` (capped at ``n - 4``,
Remark 15's domain).

Per point: mean, median and max relative error ``||g~ - g|| / ||g||`` of ``BerrutCode.decode``
against an independent compensated sum; Remark 15's bound computed here from ``f`` rebuilt
independently (products of ``(x - alpha_j) / (beta_u - alpha_j)`` and the Lagrange factors in
numpy's Chebyshev basis from the code's points) with ``||f'||, ||f''||`` per gradient
coordinate on 4001 Chebyshev-spaced points of ``[-1, 1]`` (a sampled sup can only
under-estimate, so the check is not made easier), stated relative to ``||g||`` (the per-
coordinate bounds' 2-norm over coordinates and chunks bounds the error's 2-norm); the fraction
of trials where every coordinate's error is within its bound; the code's own error estimate
(``decode_result(...).error_estimate``): how often it is at least the error, and its median
ratio; and for comparison the error of exact decoding (``heterogeneous`` code, same placement
and ``m``) where it applies (``s1 <= r - m``), empty where it cannot decode.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.polynomial import chebyshev as cheb

from gradcode.analysis.base import Analysis, Progress
from gradcode.codes.berrut import BerrutCode
from gradcode.codes.heterogeneous import HeterogeneousCode
from gradcode.codes.universal_polynomial import UniversalPolynomialCode

SIZES = (10, 20, 30)
FEATURES = 20
SAMPLES_PER_PARTITION = 40
POOL = 16
#: stragglers beyond the design s
BEYOND = 8
#: points of [-1, 1] where sup |f'|, sup |f''| are taken
GRID = 4001
#: round-off slack of the bound check, relative to the gradient's largest entry
SLACK = 1e-9
#: trials interpolated at once (memory of the batched gathers)
BLOCK = 2000
#: trials per point whose batch result is compared with BerrutCode.decode_result
LIBRARY_CHECKS = 4
#: trials per point decoded exactly (Sec. III) where the exact scheme applies
EXACT_TRIALS = 20


def regimes(n: int) -> list[tuple[str, int, int]]:
    """``(label, r, m)`` for the design ``s = n // 10``."""
    s = n // 10
    return [
        ("r = s + 1, m = 1", s + 1, 1),
        ("r = s + 1, m = 2", s + 1, 2),
        ("r = n / 2, m = 1", n // 2, 1),
    ]


def logistic_partials(k: int, rng: np.random.Generator) -> list[np.ndarray]:
    """``POOL`` gradient instances ``(k, FEATURES)`` of a synthetic logistic regression."""
    samples = k * SAMPLES_PER_PARTITION
    x = rng.standard_normal((samples, FEATURES))
    target = 3.0 * rng.standard_normal(FEATURES) / math.sqrt(FEATURES)
    y = (rng.random(samples) < 1.0 / (1.0 + np.exp(-x @ target))).astype(np.float64)
    pool = []
    for _ in range(POOL):
        w = rng.random() * target + rng.standard_normal(FEATURES) / math.sqrt(FEATURES)
        residual = 1.0 / (1.0 + np.exp(-x @ w)) - y
        per_sample = x * residual[:, None] / samples
        pool.append(per_sample.reshape(k, SAMPLES_PER_PARTITION, FEATURES).sum(axis=1))
    return pool


def fsum_columns(partials: np.ndarray) -> np.ndarray:
    return np.array([math.fsum(column) for column in partials.T])


def universal_chebyshev(holders: np.ndarray, alpha: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """Chebyshev coefficients of eq. 14's basis: ``B[u, i]`` multiplies chunk ``u`` of ``g_i``.

    ``B[u, i](x) = prod_{j not in A_i} (x - alpha_j) / (beta_u - alpha_j) * prod_{v != u} (x -
    beta_v) / (beta_u - beta_v)``: one product with all those roots, normalised to 1 at
    ``beta_u``. Shape ``(m, k, D + 1)``, ``D = n - r + m - 1`` (shorter products padded).
    """
    m, k = beta.size, holders.shape[1]
    degree = int((holders == 0).sum(axis=0).max()) + m - 1
    out = np.zeros((m, k, degree + 1))
    for u in range(m):
        for i in range(k):
            roots = np.concatenate([alpha[holders[:, i] == 0], np.delete(beta, u)])
            poly = cheb.chebfromroots(roots) if roots.size else np.ones(1)
            out[u, i, : poly.size] = poly / cheb.chebval(beta[u], poly)
    return out


def remark15_factor(n: int, stragglers: int) -> tuple[float, bool]:
    """``(2 (1 + nu) sin((s1 + 1) pi / 2N), whether ||f'|| enters)`` with ``N = n - 1``."""
    big_n = n - 1
    if not 0 <= stragglers < big_n - 2:
        raise ValueError(f"Remark 15 needs 0 <= s1 < N - 2 (s1={stragglers}, N={big_n})")
    nu = (stragglers + 1) * (stragglers + 3) * math.pi**2 / 4
    factor = 2 * (1 + nu) * math.sin((stragglers + 1) * math.pi / (2 * big_n))
    return factor, (big_n - stragglers) % 2 == 0


class Pool:
    """The gradient instances of one code: messages, references and f's derivative norms."""

    def __init__(self, code: UniversalPolynomialCode, partials: list[np.ndarray]) -> None:
        self.length = partials[0].shape[1]
        self.width = code.message_length(self.length)
        self.messages = np.array(
            [[code.encode(w, g[list(code.partitions(w))]) for w in range(code.n)] for g in partials]
        )  # (POOL, n, width)
        self.reference = np.array([fsum_columns(g) for g in partials])  # (POOL, length)
        self.norm = np.linalg.norm(self.reference, axis=1)
        alpha, beta = code.evaluation_points()
        basis = universal_chebyshev(code.assignment_matrix(), alpha, beta)
        m = code.m
        grid = np.cos(np.linspace(0.0, math.pi, GRID))
        first, second = [], []
        for g in partials:
            chunks = np.zeros((code.k, m * self.width))
            chunks[:, : self.length] = g
            # f's Chebyshev coefficients, one polynomial per message coordinate: (width, D + 1)
            coefficients = np.einsum("uid,iuw->wd", basis, chunks.reshape(code.k, m, self.width))
            first.append(np.abs(cheb.chebval(grid, cheb.chebder(coefficients, 1, axis=1).T)))
            second.append(np.abs(cheb.chebval(grid, cheb.chebder(coefficients, 2, axis=1).T)))
        self.first = np.array([f.max(axis=1) for f in first])  # (POOL, width)
        self.second = np.array([f.max(axis=1) for f in second])

    def received(self, instance: int, responders: list[int]) -> dict[int, np.ndarray]:
        return {w: self.messages[instance, w] for w in responders}


def berrut_weights(nodes: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """Eq. 34's basis at ``targets`` for rows of ascending ``nodes`` ``(T, R)``: ``(T, m, R)``."""
    signs = (-1.0) ** np.arange(nodes.shape[1])
    terms = signs[None, None, :] / (targets[None, :, None] - nodes[:, None, :])
    return terms / terms.sum(axis=2, keepdims=True)


def interpolate(
    pool: Pool, instances: np.ndarray, responders: np.ndarray, alpha: np.ndarray, beta: np.ndarray
) -> np.ndarray:
    """Berrut's approximation of every trial's gradient, ``(T, m * width)``."""
    weights = berrut_weights(alpha[responders], beta)
    messages = pool.messages[instances[:, None], responders]  # (T, R, width)
    return np.einsum("tmr,trw->tmw", weights, messages).reshape(len(instances), -1)


def compute(trials: int, seed: int, progress: Progress) -> Analysis:
    rng = np.random.default_rng(seed)
    rows: list[dict[str, Any]] = []
    for n in SIZES:
        s = n // 10
        partials = logistic_partials(n, rng)
        for label, r, m in regimes(n):
            code = BerrutCode(n=n, r=r, s=s, m=m)
            exact = HeterogeneousCode(placement=code.placement(), s=r - m, m=m)
            pools = (Pool(code, partials), Pool(exact, partials))
            progress(f"n = {n}, {label}: {trials} trials per straggler count")
            for stragglers in range(0, min(s + BEYOND, n - 4) + 1):
                rows.append(point(code, exact, pools, label, stragglers, trials, rng))
    meta = {
        "what": (
            "relative error of Berrut decoding (Sec. V) versus the number of stragglers, "
            "Remark 15's bound computed independently, the code's error estimate, and exact "
            "decoding (Sec. III) on the same placement where it applies"
        ),
        "paper": "004 (Jahani-Nezhad & Maddah-Ali), Sec. V-B, Remarks 12, 14, 15",
        "sizes": list(SIZES),
        "design_stragglers": "s = n // 10",
        "regimes": {str(n): [list(x) for x in regimes(n)] for n in SIZES},
        "placement": "cyclic, k = n, worker w holds w .. w + r - 1",
        "gradient_model": (
            f"logistic regression, {FEATURES} Gaussian features, {SAMPLES_PER_PARTITION} "
            f"samples per partition, labels from a random w*; {POOL} parameter vectors "
            "w = U(0,1) w* + N(0, I / p) per n; trial t uses instance t mod pool"
        ),
        "stragglers": f"0 .. s + {BEYOND} (at most n - 4), uniformly random sets",
        "sup_norm_grid": f"{GRID} points cos(linspace(0, pi))",
        "bound_relative": "2-norm over coordinates and chunks of the per-coordinate bound / ||g||",
        "decoding": (
            "Berrut's interpolant evaluated here in batch (eq. 34), checked against "
            f"BerrutCode.decode_result on the first {LIBRARY_CHECKS} trials of every point "
            "(library_deviation)"
        ),
        "exact_baseline": (
            f"heterogeneous code, same placement and m, s = r - m, on the first "
            f"{EXACT_TRIALS} trials' responders where s1 <= r - m"
        ),
    }
    return Analysis(rows, meta)


def point(
    code: BerrutCode,
    exact: HeterogeneousCode,
    pools: tuple[Pool, Pool],
    label: str,
    stragglers: int,
    trials: int,
    rng: np.random.Generator,
) -> dict[str, Any]:
    n, m = code.n, code.m
    pool, exact_pool = pools
    alpha, beta = code.evaluation_points()
    count = n - stragglers
    instances = np.arange(trials) % POOL
    chosen = np.argsort(rng.random((trials, n)), axis=1)[:, :count]
    responders = np.take_along_axis(chosen, np.argsort(alpha[chosen], axis=1), axis=1)
    factor, with_first = remark15_factor(n, stragglers)
    per_coordinate = factor * (pool.second + (pool.first if with_first else 0.0))
    batch = interpolated_errors(pool, instances, responders, (alpha, beta), m, per_coordinate)
    errors = batch.error_norm / pool.norm[instances]
    relative_bound = math.sqrt(m) * np.linalg.norm(per_coordinate, axis=1) / pool.norm
    deviation = library_deviation(code, pool, instances, responders, batch)
    exact_errors = exact_decoding_errors(exact, exact_pool, instances, responders, stragglers)
    positive = batch.error_norm > 0
    return {
        "n": n,
        "regime": label,
        "r": code.r,
        "m": m,
        "s": code.s,
        "stragglers": stragglers,
        "beyond_s": stragglers - code.s,
        "responders": count,
        "trials": trials,
        "mean_rel_error": float(errors.mean()),
        "median_rel_error": float(np.median(errors)),
        "max_rel_error": float(errors.max()),
        "bound_factor": factor,
        "bound_uses_first_derivative": with_first,
        "mean_rel_bound": float(relative_bound[instances].mean()),
        "min_rel_bound": float(relative_bound.min()),
        "bound_holds_fraction": float(batch.holds.mean()),
        "max_error_over_bound": batch.worst_ratio,
        "estimate_covers_fraction": float(np.mean(batch.estimate >= batch.error_norm)),
        "median_estimate_ratio": (
            float(np.median(batch.estimate[positive] / batch.error_norm[positive]))
            if positive.any()
            else None
        ),
        "library_checks": min(LIBRARY_CHECKS, trials),
        "library_deviation": deviation,
        "exact_trials": len(exact_errors),
        "exact_max_rel_error": max(exact_errors) if exact_errors else None,
    }


@dataclass(frozen=True)
class BatchErrors:
    """Per trial of one point: the error's 2-norm, the code's error estimate, whether every
    coordinate is within Remark 15's bound; the largest error over bound, and the first
    ``LIBRARY_CHECKS`` trials' approximations (for ``library_deviation``)."""

    estimate: np.ndarray
    error_norm: np.ndarray
    holds: np.ndarray
    worst_ratio: float
    first_approx: np.ndarray


def interpolated_errors(
    pool: Pool,
    instances: np.ndarray,
    responders: np.ndarray,
    points: tuple[np.ndarray, np.ndarray],
    m: int,
    per_coordinate: np.ndarray,
) -> BatchErrors:
    """Every trial's Berrut approximation (eq. 34, evaluated here in batch) against the
    reference and the bound ``per_coordinate`` (``points``: the code's ``alpha, beta``)."""
    alpha, beta = points
    trials = len(instances)
    reference = np.zeros((POOL, m * pool.width))
    reference[:, : pool.length] = pool.reference
    estimate = np.empty(trials)
    error_norm = np.empty(trials)
    holds = np.empty(trials, dtype=bool)
    worst_ratio = 0.0
    first_approx = np.empty((0, m * pool.width))
    # blocks bound the memory of the (trials, responders, width) gathers at large trials
    for low in range(0, trials, BLOCK):
        block = slice(low, min(low + BLOCK, trials))
        picked, these = responders[block], instances[block]
        approx = interpolate(pool, these, picked, alpha, beta)
        halves = [interpolate(pool, these, picked[:, i::2], alpha, beta) for i in (0, 1)]
        estimate[block] = np.max([np.linalg.norm(h - approx, axis=1) for h in halves], axis=0)
        difference = np.abs(approx - reference[these]).reshape(len(these), m, pool.width)
        error_norm[block] = np.linalg.norm(difference.reshape(len(these), -1), axis=1)
        bound = per_coordinate[these][:, None, :]  # chunk u's coordinate c shares bound c
        slack = (SLACK * np.abs(pool.reference).max(axis=1)[these])[:, None, None]
        holds[block] = np.all(difference <= bound + slack, axis=(1, 2))
        # a constant f (D = 0) has a zero bound: its round-off counts as within it
        ratio = np.divide(
            difference,
            np.broadcast_to(bound, difference.shape),
            out=np.where(difference <= slack, 0.0, np.inf),
            where=bound > 0,
        )
        worst_ratio = max(worst_ratio, float(ratio.max()))
        if low == 0:
            first_approx = approx[:LIBRARY_CHECKS]
    return BatchErrors(estimate, error_norm, holds, worst_ratio, first_approx)


def library_deviation(
    code: BerrutCode,
    pool: Pool,
    instances: np.ndarray,
    responders: np.ndarray,
    batch: BatchErrors,
) -> float:
    """The largest difference, relative to ``||g||``, between ``BerrutCode.decode_result`` and
    the batch evaluation (gradient and error estimate) on the first ``LIBRARY_CHECKS``
    trials."""
    deviation = 0.0
    for trial in range(min(LIBRARY_CHECKS, len(instances))):
        received = pool.received(int(instances[trial]), responders[trial].tolist())
        result = code.decode_result(received, pool.length)
        library, library_estimate = result.gradient, result.error_estimate
        scale = pool.norm[instances[trial]]
        deviation = max(
            deviation,
            float(np.abs(library - batch.first_approx[trial, : pool.length]).max()) / scale,
            abs(library_estimate - float(batch.estimate[trial])) / scale,
        )
    return deviation


def exact_decoding_errors(
    exact: HeterogeneousCode,
    exact_pool: Pool,
    instances: np.ndarray,
    responders: np.ndarray,
    stragglers: int,
) -> list[float]:
    """Relative errors of exact decoding (Sec. III) on the first ``EXACT_TRIALS`` trials'
    responders; none where it cannot decode (more than ``exact.s`` stragglers)."""
    exact_errors = []
    if stragglers <= exact.s:
        for trial in range(min(EXACT_TRIALS, len(instances))):
            instance = int(instances[trial])
            received = exact_pool.received(instance, responders[trial].tolist())
            decoded = exact.decode(received, exact_pool.length)
            exact_errors.append(
                float(np.linalg.norm(decoded - exact_pool.reference[instance]))
                / exact_pool.norm[instance]
            )
    return exact_errors
