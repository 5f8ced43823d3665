"""Paper 004, Sec. III-C/III-D: exact recovery with adversaries on an arbitrary placement.

The scheme tolerates ``s`` stragglers and ``a`` adversaries when every partition is held by
``r >= s + 2a + 1`` workers: from any ``n - s`` responses of which at most ``a`` are arbitrary,
Reed-Solomon style decoding of the universal polynomial returns the exact gradient. The
converse (Sec. III-D) says no decoder can do better: with ``a + 1`` liars two gradients can
produce the same responses.

For three placements (cyclic ``n = 15``, ``r = 7``; random ``n = 20``, ``k = 30``, ``r = 6``;
speed-weighted ``n = 24``, ``k = 24``, ``r = 8``, six workers four times as likely to hold a
partition) plus the paper's Fig. 2 placement, and every design ``(s, a)`` with ``s <= 2``,
``a <= 3`` the replication allows (and ``a = 0``, ``s = 1`` as a control), each row is one
attack on ``patterns`` random instances (Gaussian partial gradients, ``s`` random stragglers):

- ``random``, ``liars`` = 0 .. a + 2: the liars replace their message by Gaussian noise 1e3
  times the largest honest entry (arbitrary, large);
- ``converse``, ``liars = a + 1``: Theorem 1's converse construction. On the least replicated
  partition ``j`` (``r`` holders) the ``s`` stragglers, the ``a + 1`` liars, ``m - 1``
  "zero" holders and ``a`` "framed" honest holders are all holders of ``j``; the liars answer
  as if ``g_j`` were ``g_j + delta`` with ``delta``'s chunks along the null vector of the zero
  holders' coefficients. The responses are then the codeword of the other gradient with only
  ``a`` errors (at the framed holders), so any decoder built for ``a`` adversaries must return
  ``g + delta``;
- every attack of ``gradcode.attacks`` (``noise``, ``reversed``, ``constant``, ``alie``,
  ``ipm`` and installed plug-ins, at their default parameters; the row's ``attack`` is its
  name), ``liars = a``: the liars send what the attack forges, the omniscient ones from the
  honest messages of the other responders.

Outcomes per row: fraction decoded exactly (relative error <= 1e-8 against an independent
compensated sum of the partials), fraction where exactly the liars were named
(``decode_result(...).adversaries``), fraction detected (``NotDecodableError``), fraction
silently wrong, the largest relative error returned, and for ``converse`` the fraction where
the returned gradient is the impostor ``g + delta`` and the framed honest workers were named.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from gradcode.analysis.base import Analysis, Progress
from gradcode.analysis.heterogeneous_comm_cost import (
    EXACT_TOL,
    FIG2,
    LIE_SCALE,
    all_messages,
    fsum_columns,
    lie,
    relative_error,
    replication,
)
from gradcode.attacks import available as available_attacks
from gradcode.attacks import build as build_attack
from gradcode.codes import NotDecodableError
from gradcode.codes.heterogeneous import HeterogeneousCode
from gradcode.codes.placements import cyclic_placement, random_placement

#: chunk width of the test gradients (length m * WIDTH: no padding, so delta is a gradient)
WIDTH = 8


def placements() -> Iterator[tuple[str, list[list[int]]]]:
    yield "paper Fig. 2", FIG2
    yield "cyclic n=15 r=7", cyclic_placement(15, 7)
    yield "random n=20 k=30 r=6", random_placement(20, 30, 6, seed=2021)
    weights = [4.0] * 6 + [1.0] * 18
    yield "speed-weighted n=24 r=8", random_placement(24, 24, 8, seed=2022, weights=weights)


def designs(r: int) -> list[tuple[int, int]]:
    """``(s, a)`` pairs the replication ``r`` allows: ``s <= 2``, ``a <= 3``, plus ``(1, 0)``."""
    pairs = [(s, a) for a in (1, 2, 3) for s in (0, 1, 2) if s + 2 * a + 1 <= r]
    if r >= 2:
        pairs.insert(0, (1, 0))
    return pairs


def converse_attack(
    code: HeterogeneousCode, partials: np.ndarray, rng: np.random.Generator
) -> tuple[list[int], dict[int, np.ndarray], list[int], np.ndarray]:
    """Sec. III-D's construction with ``a + 1`` liars.

    Returns ``(stragglers, received messages, framed honest workers, impostor partials)``.
    """
    holders = code.assignment_matrix()
    part = int(np.argmin(holders.sum(axis=0)))
    owners = rng.permutation(np.flatnonzero(holders[:, part])).tolist()
    s, a, m = code.s, code.a, code.m
    stragglers = owners[:s]
    liars = owners[s : s + a + 1]
    zeros = owners[s + a + 1 : s + a + m]
    framed = owners[s + a + m :]
    assert len(framed) == a, (len(owners), s, a, m)
    # delta's chunks are multiples of c, with c in the null space of the zero holders' rows
    # of coefficients on partition j: their messages cannot tell g_j from g_j + delta
    rows = code.encoding_matrix()[zeros, part, :].reshape(len(zeros), m)
    c = np.linalg.svd(rows)[2][-1] if zeros else np.ones(1)
    direction = rng.standard_normal(partials.shape[1] // m)
    impostor = partials.copy()
    impostor[part] += np.outer(c, direction).reshape(-1)
    honest = all_messages(code, partials)
    other = all_messages(code, impostor)
    received = {w: honest[w] for w in range(code.n) if w not in set(stragglers)}
    for worker in liars:
        received[worker] = other[worker]
    return stragglers, received, sorted(framed), impostor


def run_cell(
    code: HeterogeneousCode, attack: str, liars: int, patterns: int, rng: np.random.Generator
) -> dict[str, Any]:
    n, s, m = code.n, code.s, code.m
    length = m * WIDTH
    # a registered attack's name: its forgery; else this module's own "random" and "converse"
    forger = build_attack(attack) if attack in available_attacks() else None
    exact = named = detected = wrong = impostor_hits = 0
    worst: float | None = None
    for _ in range(patterns):
        partials = rng.standard_normal((code.k, length))
        reference = fsum_columns(partials)
        if attack == "converse":
            _, received, expected_names, impostor = converse_attack(code, partials, rng)
        else:
            stragglers = set(rng.choice(n, s, replace=False).tolist())
            alive = [w for w in range(n) if w not in stragglers]
            honest = all_messages(code, partials)
            bad = sorted(rng.choice(alive, liars, replace=False).tolist())
            if forger is None:
                received = lie({w: honest[w] for w in alive}, bad, rng)
            else:
                received = forger.apply({w: honest[w] for w in alive}, bad, rng)
            expected_names = bad
        try:
            result = code.decode_result(received, length)
            decoded, reported = result.gradient, result.adversaries
        except NotDecodableError:
            detected += 1
            continue
        error = relative_error(decoded, reference)
        worst = error if worst is None else max(worst, error)
        if error <= EXACT_TOL:
            exact += 1
        else:
            wrong += 1
        named += sorted(int(w) for w in reported) == expected_names
        if attack == "converse":
            impostor_hits += relative_error(decoded, fsum_columns(impostor)) <= EXACT_TOL
    row: dict[str, Any] = {
        "attack": attack,
        "liars": liars,
        "excess": liars - code.a,
        "patterns": patterns,
        "exact_fraction": exact / patterns,
        "named_fraction": named / patterns,
        "detected_fraction": detected / patterns,
        "undetected_wrong_fraction": wrong / patterns,
        "max_rel_error": worst,
    }
    if attack == "converse":
        row["impostor_fraction"] = impostor_hits / patterns
    return row


def compute(trials: int, seed: int, progress: Progress) -> Analysis:
    rng = np.random.default_rng(seed)
    # ~170 attack cells: trials / 16 instances each keeps trials = 1000 to ~15 s
    patterns = max(8, trials // 16)
    rows = []
    for name, placement in placements():
        r = int(replication(placement).min())
        progress(f"{name}: {len(designs(r))} designs, {patterns} instances per attack")
        for s, a in designs(r):
            code = HeterogeneousCode(placement=placement, s=s, a=a)
            base = {
                "placement": name,
                "n": code.n,
                "k": code.k,
                "r": code.r,
                "s": s,
                "a": a,
                "m": code.m,
                "responders": code.n - s,
            }
            cells = [("random", liars) for liars in range(0, min(a + 2, code.n - s) + 1)]
            cells.append(("converse", a + 1))
            if a:
                cells += [(name, a) for name in available_attacks()]
            for attack, liars in cells:
                rows.append(base | run_cell(code, attack, liars, patterns, rng))
    meta = {
        "what": (
            "exact recovery, liar identification and detection by the heterogeneous code's "
            "Reed-Solomon style decoder with 0 .. a + 2 random liars and Theorem 1's "
            "converse attack with a + 1 colluding liars, and a liars running each attack of "
            "gradcode.attacks"
        ),
        "paper": "004 (Jahani-Nezhad & Maddah-Ali), Sec. III-C (decoding), III-D (converse)",
        "placements": {name: placement for name, placement in placements()},
        "designs": "s <= 2, a <= 3 with r >= s + 2a + 1, plus the a = 0, s = 1 control",
        "patterns_per_attack": patterns,
        "gradient_model": f"i.i.d. standard normal partial gradients of length m * {WIDTH}",
        "lie_scale": LIE_SCALE,
        "exact_tolerance": EXACT_TOL,
    }
    return Analysis(rows, meta)
