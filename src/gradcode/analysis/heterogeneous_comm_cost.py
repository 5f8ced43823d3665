"""Paper 004, Theorem 1: communication cost versus minimum replication ``r``.

Theorem 1 (eq. 9): with ``s`` stragglers, ``a`` adversaries and any placement whose least
replicated partition is held by ``r = min_k |A_k|`` workers, the optimal message length of a
linear gradient code is ``d / (r - s - 2a)``; no code exists when ``r <= s + 2a`` (Sec. III-D).
Sec. III-C attains it with ``m = r - s - 2a`` chunks (Remark 8).

For ``n = 12`` workers, every ``r = 1 .. 12`` and ``s in 0..3``, ``a in 0..2``, on three
placements with that minimum replication (``cyclic``: ``k = 12``, equal loads; ``random``:
``k = 18``, holders drawn uniformly; ``speed-weighted``: ``k = 18``, four "fast" workers three
times as likely to hold a partition, so loads differ by about 3x), plus the paper's Fig. 2
example (``n = 5``, ``r = 3``, ``s = 1``), each row records:

- the Theorem 1 optimum ``1 / (r - s - 2a)``, with ``r`` counted from the placement here, and
  the cost the library's code achieves (``message_length(L) / L`` for ``L = 720720``, divisible
  by every ``m <= 16``), and whether they agree exactly;
- that the library refuses the infeasible ``r <= s + 2a`` and any ``m`` above the optimum
  (consistency with the theorem, not a proof of its converse);
- the converse's counting, made concrete: in the worst case only ``r - s - 2a = m`` honest,
  non-straggling workers hold the least replicated partition ``j``, and they must carry its
  ``d`` symbols with ``m`` messages of ``d / m``; we check that every sampled set of ``m`` of
  ``j``'s holders has a full-rank ``m x m`` block of coefficients on ``g_j``'s chunks;
- decodability: ``patterns`` random patterns of ``s`` stragglers and ``a`` liars (replacing
  their message by Gaussian noise 1e3 times the largest honest entry), decoded from the
  remaining ``n - s`` workers; the relative error against an independent compensated sum of
  the partial gradients (Gaussian, seeded), and whether exactly the liars were named;
- baselines: ``m = 1`` codes (Tandon et al.'s fractional/cyclic repetition, Reed-Solomon
  gradient coding, Wang et al.'s heterogeneity-aware code [25], all cited by the paper) send
  a full gradient (cost 1) per worker; for cyclic placements with ``a = 0`` the homogeneous
  Ye & Abbe code (Remark 7) is built with ``d = r`` and its ``m`` recorded.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from gradcode.analysis.base import Analysis, Progress
from gradcode.codes import NotDecodableError, build
from gradcode.codes.heterogeneous import HeterogeneousCode
from gradcode.codes.placements import cyclic_placement, random_placement

#: workers of the grid
N = 12
#: partitions of the random placements
K_RANDOM = 18
STRAGGLERS = (0, 1, 2, 3)
ADVERSARIES = (0, 1, 2)
#: gradient length for the cost: divisible by every m <= 16, so the cost is exactly 1 / m
COST_LENGTH = 720720
#: gradient length of the decoding checks (not a multiple of most m: padding is exercised)
DECODE_LENGTH = 30
#: relative error below which a decode counts as exact
EXACT_TOL = 1e-8
#: liars send Gaussian noise this many times the largest honest message entry
LIE_SCALE = 1e3
#: sets of m holders checked for the rank of their coefficients (all of them when fewer)
RANK_SUBSETS = 60
#: the placement of the paper's Fig. 2 (W1 holds everything, W3 only D1, ...), 0-based
FIG2 = [[0, 1, 2, 3, 4], [0, 1, 2], [0], [1, 2, 3, 4], [0, 3, 4]]


def replication(placement: Sequence[Sequence[int]]) -> np.ndarray:
    """Holders per partition, counted from the placement itself."""
    counts: dict[int, int] = {}
    for parts in placement:
        for part in parts:
            counts[part] = counts.get(part, 0) + 1
    return np.array([counts[part] for part in range(len(counts))])


def optimum_cost(r: int, s: int, a: int) -> float | None:
    """Theorem 1's normalized optimum ``1 / (r - s - 2a)``; ``None`` when no code exists."""
    return 1.0 / (r - s - 2 * a) if r > s + 2 * a else None


def fsum_columns(partials: np.ndarray) -> np.ndarray:
    """The reference gradient: compensated sum of the partials, column by column."""
    return np.array([math.fsum(column) for column in partials.T])


def all_messages(code: HeterogeneousCode, partials: np.ndarray) -> dict[int, np.ndarray]:
    """Every worker's message, each computed from its own partitions only."""
    return {w: code.encode(w, partials[list(code.partitions(w))]) for w in range(code.n)}


def lie(messages: dict[int, np.ndarray], liars: Sequence[int], rng: np.random.Generator) -> dict:
    """``messages`` with the liars' replaced by large Gaussian noise."""
    scale = LIE_SCALE * max(float(np.abs(v).max()) for v in messages.values())
    out = dict(messages)
    for worker in liars:
        out[worker] = rng.standard_normal(messages[worker].shape) * scale
    return out


def relative_error(decoded: np.ndarray, reference: np.ndarray) -> float:
    return float(np.linalg.norm(decoded - reference) / np.linalg.norm(reference))


def placements(rng: np.random.Generator) -> Iterator[tuple[str, int, list[list[int]]]]:
    """``(name, target r, placement)`` for every placement family and ``r = 1 .. N``."""
    weights = [3.0] * 4 + [1.0] * (N - 4)
    for r in range(1, N + 1):
        yield "cyclic", r, cyclic_placement(N, r)
    for r in range(1, N + 1):
        yield "random", r, random_placement(N, K_RANDOM, r, seed=int(rng.integers(2**31)))
    for r in range(1, N + 1):
        seed = int(rng.integers(2**31))
        yield "speed-weighted", r, random_placement(N, K_RANDOM, r, seed=seed, weights=weights)


def holder_rank(code: HeterogeneousCode, rng: np.random.Generator) -> tuple[bool, int]:
    """Whether every sampled ``m``-set of the least replicated partition's holders has a
    full-rank block of coefficients on that partition's ``m`` chunks; ``(ok, sets checked)``."""
    encoding = code.encoding_matrix()  # (n, k, m)
    holders = code.assignment_matrix()
    counts = holders.sum(axis=0)
    part = int(np.argmin(counts))
    owners = np.flatnonzero(holders[:, part])
    total = math.comb(owners.size, code.m)
    if total <= RANK_SUBSETS:
        subsets: list[Sequence[int]] = list(itertools.combinations(owners.tolist(), code.m))
    else:
        subsets = [sorted(rng.choice(owners, code.m, replace=False)) for _ in range(RANK_SUBSETS)]
    ok = True
    for subset in subsets:
        block = encoding[list(subset), part, :]  # (m, m)
        singular = np.linalg.svd(block, compute_uv=False)
        ok &= bool(singular[-1] > 1e-10 * singular[0])
    return ok, len(subsets)


def check_patterns(
    code: HeterogeneousCode, patterns: int, rng: np.random.Generator
) -> dict[str, Any]:
    """Decode ``patterns`` random straggler-and-liar patterns; summary columns."""
    n, s, a = code.n, code.s, code.a
    exhaustive = a == 0 and math.comb(n, s) <= patterns
    if exhaustive:
        straggler_sets = [list(c) for c in itertools.combinations(range(n), s)]
    else:
        straggler_sets = [rng.choice(n, s, replace=False).tolist() for _ in range(patterns)]
    exact = named = failed = 0
    worst = 0.0
    for stragglers in straggler_sets:
        partials = rng.standard_normal((code.k, DECODE_LENGTH))
        reference = fsum_columns(partials)
        honest = all_messages(code, partials)
        alive = [w for w in range(n) if w not in set(stragglers)]
        liars = sorted(rng.choice(alive, a, replace=False).tolist()) if a else []
        received = lie({w: honest[w] for w in alive}, liars, rng)
        try:
            result = code.decode_result(received, DECODE_LENGTH)
            decoded, reported = result.gradient, result.adversaries
        except NotDecodableError:
            failed += 1
            continue
        error = relative_error(decoded, reference)
        worst = max(worst, error)
        exact += error <= EXACT_TOL
        named += sorted(int(w) for w in reported) == liars
    count = len(straggler_sets)
    return {
        "patterns": count,
        "exhaustive": exhaustive,
        "exact_fraction": exact / count,
        "failed": failed,
        "max_rel_error": worst,
        "liars_named_fraction": named / count if a else None,
    }


def ye_abbe_m(r: int, s: int) -> int | None:
    """``m`` of the homogeneous Ye & Abbe code on the cyclic placement (``d = r``, k = n)."""
    if r <= s:
        return None
    return int(build("ye-abbe", n=N, d=r, s=s, m=r - s).m)


def row_for(
    family: str,
    placement: list[list[int]],
    s: int,
    a: int,
    patterns: int,
    rng: np.random.Generator,
) -> dict[str, Any]:
    counts = replication(placement)
    r = int(counts.min())
    loads = np.array([len(parts) for parts in placement])
    n = len(placement)
    optimum = optimum_cost(r, s, a)
    row: dict[str, Any] = {
        "placement": family,
        "n": n,
        "k": int(counts.size),
        "r": r,
        "s": s,
        "a": a,
        "load_min": int(loads.min()),
        "load_max": int(loads.max()),
        "feasible": optimum is not None,
        "optimum_cost": optimum,
    }
    try:
        code = HeterogeneousCode(placement=placement, s=s, a=a)
    except ValueError:
        return row | {"code_refuses": True}
    achieved = code.message_length(COST_LENGTH) / COST_LENGTH
    try:
        build("heterogeneous", placement=placement, s=s, a=a, m=code.m + 1)
        refuses_more = False
    except ValueError:
        refuses_more = True
    rank_ok, rank_sets = holder_rank(code, rng)
    row |= {
        "code_refuses": False,
        "m": code.m,
        "achieved_cost": achieved,
        "matches": optimum is not None and achieved == optimum,
        "responders_needed": code.min_responders(),
        "refuses_m_above_optimum": refuses_more,
        "holder_sets_checked": rank_sets,
        "holders_full_rank": rank_ok,
        "baseline_m1_cost": 1.0,
        "load_per_iteration": (n - s) * achieved,
        "baseline_m1_load_per_iteration": float(n - s),
        "ye_abbe_m": ye_abbe_m(r, s) if family == "cyclic" and a == 0 else None,
    }
    row |= check_patterns(code, patterns, rng)
    return row


def compute(trials: int, seed: int, progress: Progress) -> Analysis:
    rng = np.random.default_rng(seed)
    # the grid has ~300 codes: trials / 40 patterns each keeps trials = 1000 to ~10 s
    patterns = max(5, trials // 40)
    rows = [row_for("paper Fig. 2", FIG2, 1, 0, patterns, rng)]
    family_seen = ""
    for family, _, placement in placements(rng):
        if family != family_seen:
            progress(f"{family} placements (n = {N}), {patterns} patterns per code")
            family_seen = family
        for a in ADVERSARIES:
            for s in STRAGGLERS:
                rows.append(row_for(family, placement, s, a, patterns, rng))
    meta = {
        "what": (
            "Theorem 1 optimum 1 / (r - s - 2a) beside the achieved message length of the "
            "heterogeneous code, its decodability on random straggler and liar patterns, and "
            "the m = 1 baselines"
        ),
        "paper": "004 (Jahani-Nezhad & Maddah-Ali), Theorem 1, Sec. III-B to III-D, Remark 7-8",
        "n": N,
        "k_random": K_RANDOM,
        "stragglers": list(STRAGGLERS),
        "adversaries": list(ADVERSARIES),
        "placements": {
            "cyclic": "k = n, worker w holds w .. w + r - 1",
            "random": f"k = {K_RANDOM}, every partition on r uniformly drawn workers",
            "speed-weighted": (
                f"k = {K_RANDOM}, workers 0-3 three times as likely to hold a partition"
            ),
            "paper Fig. 2": FIG2,
        },
        "patterns_per_code": patterns,
        "decode_length": DECODE_LENGTH,
        "cost_length": COST_LENGTH,
        "exact_tolerance": EXACT_TOL,
        "lie_scale": LIE_SCALE,
        "gradient_model": "i.i.d. standard normal partial gradients (exactness check)",
    }
    return Analysis(rows, meta)
