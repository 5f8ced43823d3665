"""Load distribution of the binary gradient code (paper 003, Sections III and V).

For every ``(n, s)`` with ``2 <= n <= 60`` and ``1 <= s <= n - 1`` (``k = n`` partitions, the
paper's choice) the loads of ``BinaryCode(n, s)`` are read off the code itself and set beside
what the paper says about them, with ``n = l (s + 1) + r``, ``0 <= r < s + 1``:

- the ideal (MDS, balanced) load ``(s + 1) k / n`` of Sec. II-B; the mean load equals it
  because every class covers the data once (total ``k (s + 1)``, Sec. IV);
- Sec. III: inside the ``r`` classes of ``l + 1`` workers, and inside the others, loads differ
  by at most one (``spread_large_classes``, ``spread_small_classes``);
- Sec. V, Proposition 3 (our reading; its statement was lost in the extraction): no assignment
  in which every class partitions the data has a smaller spread than
  ``ceil(k / l) - floor(k / c)``, ``c`` the largest class size; ``spread_lower_bound`` computes
  that bound from the class sizes alone, independently of the code;
- Lemma 4: with ``r > 0`` the spread is 2, except 3 exactly for ``l = s - 1, r = s`` and for
  ``l = s - 2, r in {1, s - 1, s}`` (``lemma4_spread``: empty for ``l < s - 2`` unless
  ``(s + 1) | n``, where it is 0), so "loads at most 3 apart" for ``l >= s - 2``. It fails
  once: ``n = 7, s = 3`` (``l = 1 = s - 2``, ``r = 3``) has loads 3, 4 and 7, spread 4;
- our extension (module docstring of ``gradcode.codes.binary``): the spread is at most 3 for
  every remainder ``r`` exactly when ``2 l >= s``. ``worst_spread_over_r`` is the largest spread
  over ``r = 1 .. s`` for the row's ``(l, s)``, built from codes up to ``n = (l + 1)(s + 1) - 1``
  (beyond 60 where needed), so the "exactly when" is checked on complete ``(l, s)`` groups.

Definition 2's distance from the uniform allocation also lost its formula; ``distance_l1`` and
``distance_l2`` are the l1 and l2 distances of the load vector from the all-ideal one (a
balanced split inside each class minimises both among class-partitioning assignments).
Everything here is exact (integer loads of deterministic codes); ``trials`` and ``seed`` are
accepted and unused.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from gradcode.analysis.base import Analysis, Progress
from gradcode.codes.binary import BinaryCode, congruence_classes

N_MIN = 2
N_MAX = 60


@functools.cache
def _loads(n: int, s: int) -> tuple[int, ...]:
    return tuple(int(w) for w in BinaryCode(n, s).loads())


def _spread(n: int, s: int) -> int:
    loads = _loads(n, s)
    return max(loads) - min(loads)


def spread_lower_bound(n: int, s: int, k: int | None = None) -> int:
    """Least spread of any assignment in which each class mod ``s + 1`` partitions ``k``.

    A class of ``c`` workers splitting ``k`` partitions has a member with at least
    ``ceil(k / c)`` and one with at most ``floor(k / c)``; the smallest class forces the
    largest maximum and the largest class the smallest minimum.
    """
    k = n if k is None else k
    sizes = [len(members) for members in congruence_classes(n, s)]
    return -(-k // min(sizes)) - k // max(sizes)


def lemma4_spread(n: int, s: int) -> int | None:
    """The spread Lemma 4 predicts for ``l >= s - 2`` (0 when ``(s + 1) | n``; ``None`` for
    ``l < s - 2`` otherwise, outside the lemma)."""
    ell, r = divmod(n, s + 1)
    if r == 0:
        return 0
    if ell < s - 2:
        return None
    if (ell == s - 1 and r == s) or (ell == s - 2 and r in {1, s - 1, s}):
        return 3
    return 2


def regime(ell: int, s: int, r: int) -> str:
    """Which of Section V's cases ``(l, s)`` falls in."""
    if r == 0:
        return "(s+1) | n"
    if ell >= s:
        return "l >= s"
    if ell == s - 1:
        return "l = s - 1"
    if ell == s - 2:
        return "l = s - 2"
    return "2l >= s" if 2 * ell >= s else "2l < s"


def worst_spread_over_r(ell: int, s: int) -> int:
    """Largest spread over every remainder ``r = 1 .. s`` at the given ``(l, s)``."""
    return max(_spread(ell * (s + 1) + r, s) for r in range(1, s + 1))


def load_row(n: int, s: int) -> dict[str, Any]:
    """Every column of one ``(n, s)`` (``k = n``)."""
    k = n
    loads = np.array(_loads(n, s))
    ell, r = divmod(n, s + 1)
    ideal = (s + 1) * k / n
    classes = congruence_classes(n, s)
    large = [w for members in classes[:r] for w in members]
    small = [w for members in classes[r:] for w in members]
    spread = int(loads.max() - loads.min())
    predicted = lemma4_spread(n, s)
    return {
        "n": n,
        "s": s,
        "k": k,
        "l": ell,
        "r": r,
        "divisible": r == 0,
        "regime": regime(ell, s, r),
        "min_load": int(loads.min()),
        "max_load": int(loads.max()),
        "mean_load": float(loads.mean()),
        "ideal_load": ideal,
        "min_fraction": loads.min() / k,
        "max_fraction": loads.max() / k,
        "ideal_fraction": (s + 1) / n,
        "total_load": int(loads.sum()),
        "spread": spread,
        "spread_closed_form": (
            0 if r == 0 else math.ceil(r / ell) + math.ceil((s + 1 - r) / (ell + 1))
        ),
        "spread_lower_bound": spread_lower_bound(n, s),
        "spread_large_classes": int(np.ptp(loads[large])) if large else "",
        "spread_small_classes": int(np.ptp(loads[small])),
        "lemma4_spread": "" if predicted is None else predicted,
        "lemma4_holds": "" if predicted is None else spread == predicted,
        "at_most_3_apart": spread <= 3,
        "two_l_ge_s": 2 * ell >= s,
        "worst_spread_over_r": worst_spread_over_r(ell, s),
        "distance_l1": float(np.abs(loads - ideal).sum()),
        "distance_l2": float(np.sqrt(((loads - ideal) ** 2).sum())),
    }


def compute(trials: int, seed: int, progress: Progress) -> Analysis:
    """One row per ``(n, s)``, ``N_MIN <= n <= N_MAX``, ``1 <= s < n`` (exact; no randomness)."""
    rows = []
    for n in range(N_MIN, N_MAX + 1):
        rows += [load_row(n, s) for s in range(1, n)]
        if n % 10 == 0:
            progress(f"n = {n}: {len(rows)} (n, s) pairs")
    # the claims as checked over the whole grid, for the sidecar
    remainders = [row for row in rows if not row["divisible"]]
    in_lemma = [row for row in remainders if row["lemma4_holds"] != ""]
    groups = {(row["l"], row["s"]): row["worst_spread_over_r"] for row in rows}
    meta = {
        "what": (
            "loads of the binary gradient code (partitions per worker) for every (n, s) with "
            f"{N_MIN} <= n <= {N_MAX}, 1 <= s <= n - 1, k = n, beside the ideal load "
            "(s + 1) k / n, Proposition 3's least spread and Lemma 4's prediction"
        ),
        "source": "paper 003 (Charalambides, Mahdavifar, Hero), Sections III and V",
        "n_range": [N_MIN, N_MAX],
        "s_range": "1 .. n - 1",
        "k": "n",
        "exact": True,
        "trials_used": False,
        "summary": {
            "pairs": len(rows),
            "divisible_pairs": len(rows) - len(remainders),
            "spread_equals_lower_bound": all(
                row["spread"] == row["spread_lower_bound"] for row in rows
            ),
            "spread_equals_closed_form": all(
                row["spread"] == row["spread_closed_form"] for row in rows
            ),
            "uniform_iff_divisible": all((row["spread"] == 0) == row["divisible"] for row in rows),
            "max_spread_within_class_sets": max(
                max(row["spread_small_classes"], row["spread_large_classes"] or 0) for row in rows
            ),
            "lemma4_pairs": len(in_lemma),
            "lemma4_exceptions": [
                [row["n"], row["s"]] for row in in_lemma if not row["lemma4_holds"]
            ],
            "l_ge_s_minus_2_over_3_apart": [
                [row["n"], row["s"]] for row in in_lemma if not row["at_most_3_apart"]
            ],
            "ls_groups": len(groups),
            "at_most_3_for_every_r_iff_2l_ge_s": all(
                (worst <= 3) == (2 * ell >= s) for (ell, s), worst in groups.items()
            ),
        },
    }
    return Analysis(rows, meta)
