"""Decoding of the binary gradient code: its cost beside Tandon et al.'s, and its exactness.

Paper 003 (Charalambides, Mahdavifar, Hero), Section IV, claims two things this analysis
measures, in two kinds of rows (column ``part``):

``part = "cost"``: deterministic operation counts, for ``4 <= n <= 60``, ``k = n`` and the
straggler rules ``s = 1``, ``3``, ``n // 4``, ``n // 2`` (column ``s_rule``: ``s=1``, ``s=3``,
``s=n/4``, ``s=n/2``). The cost model (also in the sidecar):

- binary (Algorithm 3): one counter increment per received worker (``n - s``) and one zero
  test per congruence class (``s + 1``): ``binary_search_ops = n + 1`` integer operations,
  no table, no real arithmetic; then ``binary_additions`` = (size of the largest class) - 1
  vector additions per gradient coordinate and no multiplication.
- Tandon et al. (their Algorithm 1, which paper 003 compares against): a table ``A`` with one
  row per straggler set, ``tandon_table_rows = C(n, s)`` rows of ``n`` entries
  (``tandon_table_entries``), each row the solution of ``a^T B_F = 1^T`` for the ``f = n - s``
  responders ``F``. One solve is counted as Householder least squares of the ``k x f`` system
  ``B_F^T a = 1``: ``2 k f^2 - (2/3) f^3`` (QR) ``+ 4 k f - 2 f^2`` (applying ``Q^T``)
  ``+ f^2`` (back substitution) flops (``tandon_solve_flops``, the standard Householder
  counts), and building the table takes ``C(n, s)`` of them (``tandon_table_flops``).
  Combining the messages costs ``f`` multiplications and ``f - 1`` additions per coordinate
  (``tandon_combine_flops``). Finding the row of a straggler set by the linear search the
  paper refers to ("stored and searched through") examines up to ``C(n, s)`` rows; an index
  by the combinatorial number system would find it in ``O(n s)``, but the table still has to
  be built and stored.
- ``binary_responders_worst = n - s`` responses suffice in the worst case (pigeonhole);
  ``binary_responders_mean`` is the mean number of responses after which some class is
  complete when workers answer in a uniformly random order (``trials`` orders per row, Monte
  Carlo), i.e. how much earlier than ``n - s`` the online decoder can stop.

``part = "error"``: decoding error as ``n`` grows, for even ``n`` from 6 to 50 with
``s = max(1, n // 4)`` stragglers, random straggler patterns. ``max_relative_error`` and
``worst_condition_number`` are ``gradcode.codes.stability.stability_rows`` (the verification
harness: standard normal partials, reference ``partials.sum``). Because that reference is
itself rounded, the ``integer_*`` columns repeat the measurement with integer-valued partials
in ``[-2^20, 2^20]``: every partial sum is then an exact float, the reference (an integer sum)
is exact, and ``integer_exact_fraction`` is the fraction of patterns decoded with no error at
all. Families: binary, Tandon's cyclic repetition (crc) and fractional repetition (frc; it
needs ``(s + 1) | n``, so ``s + 1`` is the largest divisor of ``n`` not above
``n // 4 + 1``), Ye & Abbe with the paper's evaluation points and ``m = 1``, ``2``, ``n // 4``
(``d = s + m``). ``patterns`` straggler patterns per (family, n): ``max(1, trials // 20)``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from gradcode.analysis.base import Analysis, Progress
from gradcode.codes.binary import BinaryCode
from gradcode.codes.registry import build
from gradcode.codes.stability import FAMILIES, Family, stability_rows

COST_N = range(4, 61)
#: straggler rules of the cost rows: label -> s as a function of n
S_RULES: dict[str, Any] = {
    "s=1": lambda n: 1,
    "s=3": lambda n: 3,
    "s=n/4": lambda n: n // 4,
    "s=n/2": lambda n: n // 2,
}
ERROR_N = range(6, 51, 2)
#: gradient length of the exactness measurements (as in the stability study)
LENGTH = 64
#: integer partials are drawn from [-BOUND, BOUND]: sums of 60 of them stay exact floats
BOUND = 2**20
PATTERN_DIVISOR = 20


def _stragglers(n: int) -> int:
    return max(1, n // 4)


def frc_stragglers(n: int) -> int | None:
    """``s`` for the frc family: ``s + 1`` the largest divisor of ``n`` in ``[2, n // 4 + 1]``."""
    divisors = [d for d in range(2, n // 4 + 2) if n % d == 0]
    return divisors[-1] - 1 if divisors else None


def _family(label: str) -> Family:
    return next(family for family in FAMILIES if family.label == label)


def error_families() -> tuple[Family, ...]:
    """The families of the error rows (stability study's where it has them)."""
    ye_abbe_m1 = Family(
        "ye-abbe (paper, m=1)",
        "ye-abbe",
        lambda n: {"n": n, "d": _stragglers(n) + 1, "s": _stragglers(n), "m": 1, "points": "paper"},
    )
    frc = Family("frc", "frc", lambda n: {"n": n, "s": frc_stragglers(n)})
    return (
        _family("binary"),
        frc,
        _family("crc"),
        ye_abbe_m1,
        _family("ye-abbe (paper, m=2)"),
        _family("ye-abbe (paper, m=n/4)"),
    )


# -- cost -------------------------------------------------------------------------------------
def tandon_solve_flops(n: int, s: int, k: int | None = None) -> float:
    """Flops of one Householder least-squares solve of ``B_F^T a = 1`` (``k x (n - s)``)."""
    k = n if k is None else k
    f = n - s
    return 2 * k * f**2 - 2 * f**3 / 3 + 4 * k * f - 2 * f**2 + f**2


def responders_until_decodable(code: BinaryCode, orders: np.ndarray) -> np.ndarray:
    """Responses after which some class is complete, per arrival order (row of ``orders``).

    ``orders[t]`` is a permutation of the workers; the class of worker ``i`` is complete once
    its last member has arrived, i.e. at the largest position of its members.
    """
    position = np.argsort(orders, axis=1)  # position[t, i]: when worker i arrives
    complete = np.stack(
        [position[:, list(members)].max(axis=1) for members in code.classes], axis=1
    )
    return complete.min(axis=1) + 1


def cost_row(rule: str, n: int, s: int, orders: np.ndarray) -> dict[str, Any]:
    code = BinaryCode(n, s)
    f = n - s
    needed = responders_until_decodable(code, orders)
    rows = math.comb(n, s)
    solve = tandon_solve_flops(n, s)
    return {
        "part": "cost",
        "s_rule": rule,
        "n": n,
        "s": s,
        "k": code.k,
        "binary_search_ops": (n - s) + (s + 1),
        "binary_additions": max(len(members) for members in code.classes) - 1,
        "binary_multiplications": 0,
        "binary_responders_worst": f,
        "binary_responders_mean": float(needed.mean()),
        "binary_responders_max_seen": int(needed.max()),
        "tandon_table_rows": rows,
        "tandon_table_entries": rows * code.k,
        "tandon_solve_flops": solve,
        "tandon_table_flops": rows * solve,
        "tandon_combine_flops": 2 * f - 1,
        "table_rows_per_binary_op": rows / (n + 1),
    }


def cost_rows(trials: int, rng: np.random.Generator) -> Iterable[dict[str, Any]]:
    for rule, s_of in S_RULES.items():
        for n in COST_N:
            s = s_of(n)
            if not 1 <= s < n:
                continue
            orders = rng.permuted(np.tile(np.arange(n), (trials, 1)), axis=1)
            yield cost_row(rule, n, s, orders)


# -- exactness --------------------------------------------------------------------------------
def integer_exactness(
    scheme: str, params: dict[str, Any], patterns: int, rng: np.random.Generator
) -> dict[str, Any]:
    """Decode ``patterns`` random straggler patterns of integer-valued partials.

    Returns the fraction decoded exactly and the largest relative error against the exact
    (integer) sum.
    """
    code = build(scheme, **params)
    integers = rng.integers(-BOUND, BOUND, size=(code.k, LENGTH), endpoint=True)
    # exact in int64, and every partial sum of at most 60 terms is an exact float64
    reference = integers.sum(axis=0)
    partials = integers.astype(np.float64)
    scale = float(np.linalg.norm(reference.astype(np.float64))) or 1.0
    hits, worst, checked = 0, 0.0, 0
    for pattern in code.patterns(exhaustive=False, rng=rng, limit=patterns):
        decoded = code.run_pattern(partials, pattern, rng).gradient
        difference = decoded - reference
        hits += bool(np.all(difference == 0))
        worst = max(worst, float(np.linalg.norm(difference)) / scale)
        checked += 1
    return {
        "integer_patterns": checked,
        "integer_exact_fraction": hits / checked,
        "integer_max_relative_error": worst,
    }


def error_rows(
    patterns: int, seed: int, rng: np.random.Generator, progress: Progress
) -> Iterable[dict[str, Any]]:
    for family in error_families():
        # a family whose parameters do not exist at n (frc: no divisor) has no row there
        ns = [n for n in ERROR_N if None not in family.params(n).values()]
        for row in stability_rows(ns, (family,), patterns=patterns, seed=seed):
            params = family.params(row["n"])
            yield {
                "part": "error",
                **row,
                **integer_exactness(family.scheme, params, patterns, rng),
            }
        progress(f"{family.label}: n = {ns[0]}..{ns[-1]}, {patterns} patterns each")


def compute(trials: int, seed: int, progress: Progress) -> Analysis:
    """Cost rows (exact counts plus the Monte Carlo mean of responders) and error rows."""
    rng = np.random.default_rng(seed)
    rows = list(cost_rows(trials, rng))
    progress(f"cost: {len(rows)} (s rule, n) rows, {trials} arrival orders each")
    patterns = max(1, trials // PATTERN_DIVISOR)
    rows += error_rows(patterns, seed, rng, progress)
    meta = {
        "what": (
            "decoding cost of the binary gradient code (O(n) search for a complete congruence "
            "class) beside Tandon et al.'s decoding table, and decoding error versus n of "
            "binary, frc, crc and Ye-Abbe codes"
        ),
        "source": "paper 003 (Charalambides, Mahdavifar, Hero), Section IV (Algorithm 3)",
        "cost_model": {
            "binary_search_ops": "(n - s) counter increments + (s + 1) class tests = n + 1",
            "binary_additions": "vector additions per coordinate: largest class size - 1",
            "tandon_table_rows": "C(n, s): one decoding vector per straggler set",
            "tandon_table_entries": "C(n, s) * k floats stored",
            "tandon_solve_flops": (
                "Householder least squares of B_F^T a = 1, k x f, f = n - s: "
                "2 k f^2 - 2 f^3 / 3 + 4 k f - 2 f^2 + f^2"
            ),
            "tandon_table_flops": "C(n, s) * tandon_solve_flops",
            "tandon_combine_flops": "f multiplications + (f - 1) additions per coordinate",
            "binary_responders_mean": (
                "Monte Carlo: responses until some class is complete, uniformly random "
                "arrival order, trials orders per row"
            ),
        },
        "cost_n": [COST_N.start, COST_N.stop - 1],
        "s_rules": list(S_RULES),
        "error_n": list(ERROR_N),
        "error_s": "max(1, n // 4); frc: largest divisor of n in [2, n // 4 + 1], minus 1",
        "error_families": [family.label for family in error_families()],
        "patterns_per_point": patterns,
        "patterns_rule": f"max(1, trials // {PATTERN_DIVISOR})",
        "length": LENGTH,
        "integer_partials": f"uniform integers in [-{BOUND}, {BOUND}]",
        "float_partials": "standard normal (gradcode.codes.verify), reference partials.sum",
    }
    return Analysis(rows, meta)
