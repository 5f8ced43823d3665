"""Paper 004, Sec. IV (Theorem 2): replication needed for ``h(G_1 + ... + G_K)``, and the error.

Theorem 2: with ``N`` workers, ``s`` stragglers, ``a`` adversaries and a polynomial ``h`` of
degree ``q``, the scheme of eq. 19-22 computes ``h(sum_k G_k)`` (``d x d`` matrices, one ``d x
d`` message per worker) when ``min_k |A_k| >= N - floor((N - 2a - s - 1) / q)`` (eq. 23-24: the
``N - s`` responses must carry ``(N - r) q + 2a + 1`` evaluations of ``h(f(x))``). The paper
has no numerical section for it. Rows, by ``part``:

- ``theorem``: the least ``r`` computed from the formula for ``N`` in ``THEOREM_N``, ``q = 1 ..
  6`` and a few ``(s, a)``, with the degree ``(N - r) q`` of ``h(f(x))`` and the responders the
  decoder needs at that ``r``;
- ``placements``: on the placements of the Sec. III figure (``heterogeneous-comm-cost``: ``N =
  12``, cyclic ``k = 12``, random ``k = 18``, speed-weighted ``k = 18``, for every ``r = 1 ..
  12``; and the paper's Fig. 2 placement, ``N = 5``), for ``q = 1 .. 4``, ``s <= 3``, ``a <= 2``:
  the least ``r`` among them at which the library's ``heterogeneous-poly`` code is built
  (``achieved_r``; ``matches``: it is the least ``r`` the family offers at or above Theorem 2's,
  which for the ``N = 12`` families, holding every ``r``, is Theorem 2's own), whether every
  placement below Theorem 2's ``r`` was refused (and every one above accepted), the message
  size (``message_numbers``: ``d^2``, the theorem's cost), and at the
  achieved ``r`` the maximum relative error over random patterns of ``s`` stragglers and ``a``
  liars (Gaussian noise 1e3 times the largest honest entry), against ``h(sum G_k)`` computed
  here by numpy matrix powers, and whether exactly the liars were named;
- ``error``: the decode error against ``N`` (``6 .. 50``) on the cyclic placement at Theorem
  2's least ``r`` with ``s = max(1, N // 4)``: ``q = 2`` and ``q = 3`` with ``a = 0``, and ``q =
  2`` with ``a = 1`` (one liar per pattern), Gaussian ``4 x 4`` partials, with the largest
  Lebesgue constant (``condition``) met.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from gradcode.analysis.base import Analysis, Progress
from gradcode.analysis.heterogeneous_comm_cost import FIG2, K_RANDOM, N, placements, replication
from gradcode.codes import NotDecodableError
from gradcode.codes.heterogeneous_poly import HeterogeneousPolyCode, theorem2_replication
from gradcode.codes.placements import cyclic_placement

#: ``N`` of the computed rows
THEOREM_N = (12, 24, 48)
#: ``(s, a)`` of the computed rows
THEOREM_SA = ((0, 0), (1, 0), (3, 0), (1, 1), (2, 2))
#: degrees of ``h`` of the placement rows
DEGREES = (1, 2, 3, 4)
STRAGGLERS = (0, 1, 2, 3)
ADVERSARIES = (0, 1, 2)
#: side ``d`` of the partial gradient matrices
SIDE = 4
#: relative error below which a decode counts as exact
EXACT_TOL = 1e-8
#: liars send Gaussian noise this many times the largest honest message entry
LIE_SCALE = 1e3
#: ``N`` of the error rows
ERROR_N = tuple(range(6, 51, 2))
#: ``(label, h, a)`` of the error rows
ERROR_FAMILIES = (
    ("deg h = 2", (1.0, 1.0, 0.5), 0),
    ("deg h = 3", (1.0, 1.0, 0.5, 1.0 / 6.0), 0),
    ("deg h = 2, one liar", (1.0, 1.0, 0.5), 1),
)


def polynomial(degree: int) -> tuple[float, ...]:
    """The placement rows' ``h`` of degree ``degree``: the Taylor polynomial of ``exp``."""
    coefficients = [1.0]
    for power in range(1, degree + 1):
        coefficients.append(coefficients[-1] / power)
    return tuple(coefficients)


def direct(h: Sequence[float], partials: np.ndarray) -> np.ndarray:
    """``h(sum_k G_k)`` flattened: a plain sum, then numpy matrix powers."""
    side = math.isqrt(partials.shape[1])
    total = partials.sum(axis=0).reshape(side, side)
    out = np.zeros((side, side))
    for power, coefficient in enumerate(h):
        out += coefficient * np.linalg.matrix_power(total, power)
    return out.reshape(-1)


def check_patterns(
    code: HeterogeneousPolyCode, patterns: int, rng: np.random.Generator
) -> dict[str, Any]:
    """Decode ``patterns`` random straggler-and-liar patterns; summary columns."""
    n, s, a = code.n, code.s, code.a
    exact = named = failed = 0
    worst = condition = 0.0
    for _ in range(patterns):
        partials = rng.standard_normal((code.k, SIDE * SIDE))
        reference = direct(code.h, partials)
        honest = {w: code.encode(w, partials[list(code.partitions(w))]) for w in range(n)}
        alive = sorted(rng.choice(n, n - s, replace=False).tolist())
        liars = sorted(rng.choice(alive, a, replace=False).tolist()) if a else []
        received = {w: honest[w] for w in alive}
        scale = LIE_SCALE * max(float(np.abs(v).max()) for v in honest.values())
        for worker in liars:
            received[worker] = rng.standard_normal(SIDE * SIDE) * scale
        try:
            result = code.decode_result(received, SIDE * SIDE)
        except NotDecodableError:
            failed += 1
            continue
        error = float(np.linalg.norm(result.gradient - reference) / np.linalg.norm(reference))
        worst = max(worst, error)
        condition = max(condition, result.condition)
        exact += error <= EXACT_TOL
        named += sorted(int(w) for w in result.adversaries) == liars
    return {
        "patterns": patterns,
        "exact_fraction": exact / patterns,
        "failed": failed,
        "max_rel_error": worst,
        "condition": condition,
        "liars_named_fraction": named / patterns if a else None,
    }


def theorem_rows() -> list[dict[str, Any]]:
    rows = []
    for n in THEOREM_N:
        for s, a in THEOREM_SA:
            for q in range(1, 7):
                r = theorem2_replication(n, s, a, q)
                feasible = r <= n
                rows.append(
                    {
                        "part": "theorem",
                        "n": n,
                        "s": s,
                        "a": a,
                        "deg_h": q,
                        "r_needed": r,
                        "feasible": feasible,
                        "degree": (n - r) * q if feasible else None,
                        "responders_needed": (n - r) * q + 2 * a + 1 if feasible else None,
                    }
                )
    return rows


def placement_row(
    family: str,
    ladder: Sequence[tuple[int, list[list[int]]]],
    q: int,
    s: int,
    a: int,
    patterns: int,
    rng: np.random.Generator,
) -> dict[str, Any]:
    """One ``(family, q, s, a)``: the least ``r`` of ``ladder`` the code accepts, and decoding.

    ``ladder`` lists ``(r, placement)`` by increasing ``r`` (``r`` counted from the placement).
    """
    n = len(ladder[0][1])
    needed = theorem2_replication(n, s, a, q)
    row: dict[str, Any] = {
        "part": "placements",
        "placement": family,
        "n": n,
        "s": s,
        "a": a,
        "deg_h": q,
        "r_needed": needed,
        "feasible": needed <= n,
    }
    refused_below = accepted_above = True
    code = None
    for r, placement in ladder:
        try:
            candidate = HeterogeneousPolyCode(placement=placement, h=polynomial(q), s=s, a=a)
        except ValueError:
            accepted_above &= r < needed
            continue
        refused_below &= r >= needed
        if code is None:
            code = candidate
    row |= {"refused_below_r_needed": refused_below, "accepted_from_r_needed": accepted_above}
    if code is None:
        return row | {"achieved_r": None}
    # the least r the ladder offers at or above Theorem 2's (the theorem's r for a full ladder)
    offered = min((r for r, _ in ladder if r >= needed), default=None)
    row |= {
        "achieved_r": code.r,
        "least_r_offered": offered,
        "matches": code.r == offered,
        "message_numbers": code.message_length(SIDE * SIDE),
        "k": code.k,
        "degree": code.degree,
        "responders_needed": code.min_responders(),
    }
    return row | check_patterns(code, patterns, rng)


def error_rows(patterns: int, rng: np.random.Generator, progress: Progress) -> list[dict]:
    rows = []
    for label, h, a in ERROR_FAMILIES:
        progress(f"decode error versus N, {label}, {patterns} patterns per N")
        q = len(h) - 1
        for n in ERROR_N:
            s = max(1, n // 4)
            r = theorem2_replication(n, s, a, q)
            if r > n:
                continue
            code = HeterogeneousPolyCode(placement=cyclic_placement(n, r), h=h, s=s, a=a)
            rows.append(
                {
                    "part": "error",
                    "family": label,
                    "n": n,
                    "s": s,
                    "a": a,
                    "deg_h": q,
                    "r_needed": r,
                    "degree": code.degree,
                    "responders_needed": code.min_responders(),
                }
                | check_patterns(code, patterns, rng)
            )
    return rows


def compute(trials: int, seed: int, progress: Progress) -> Analysis:
    rng = np.random.default_rng(seed)
    # ~150 codes with trials / 100 patterns each and ~70 error points with trials / 25: about
    # 10 s at trials = 1000
    patterns = max(5, trials // 100)
    error_patterns = max(5, trials // 25)
    rows = theorem_rows()
    ladders: dict[str, list[tuple[int, list[list[int]]]]] = {}
    for family, _, placement in placements(rng):
        ladders.setdefault(family, []).append((int(replication(placement).min()), placement))
    ladders = {
        family: sorted(ladder, key=lambda item: item[0]) for family, ladder in ladders.items()
    }
    ladders["paper Fig. 2"] = [(int(replication(FIG2).min()), FIG2)]
    progress(f"Theorem 2 on the Sec. III placements (N = {N}), {patterns} patterns per code")
    for family, ladder in ladders.items():
        for q in DEGREES:
            for a in ADVERSARIES:
                for s in STRAGGLERS:
                    rows.append(placement_row(family, ladder, q, s, a, patterns, rng))
    rows += error_rows(error_patterns, rng, progress)
    meta = {
        "what": (
            "Theorem 2's least replication for h(G_1 + ... + G_K) beside the least r at which "
            "the heterogeneous-poly code is built on the Sec. III placements, its decoding "
            "with stragglers and liars, and its decode error versus N"
        ),
        "paper": "004 (Jahani-Nezhad & Maddah-Ali), Sec. IV, Theorem 2, eq. 19-24",
        "theorem_n": list(THEOREM_N),
        "theorem_s_a": [list(pair) for pair in THEOREM_SA],
        "degrees": list(DEGREES),
        "polynomials": "placement rows: h(X) = sum_{j <= deg h} X^j / j! (Taylor of exp)",
        "placements": {
            "cyclic": f"N = {N}, k = {N}, worker w holds w .. w + r - 1",
            "random": f"N = {N}, k = {K_RANDOM}, every partition on r uniformly drawn workers",
            "speed-weighted": (
                f"N = {N}, k = {K_RANDOM}, workers 0-3 three times as likely to hold a partition"
            ),
            "paper Fig. 2": FIG2,
        },
        "stragglers": list(STRAGGLERS),
        "adversaries": list(ADVERSARIES),
        "error_n": list(ERROR_N),
        "error_families": {label: list(h) for label, h, _ in ERROR_FAMILIES},
        "patterns_per_code": patterns,
        "patterns_per_error_point": error_patterns,
        "matrix_side": SIDE,
        "exact_tolerance": EXACT_TOL,
        "lie_scale": LIE_SCALE,
        "gradient_model": "i.i.d. standard normal partial gradient matrices",
    }
    return Analysis(rows, meta)
