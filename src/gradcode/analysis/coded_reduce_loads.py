"""Theorem 1 of paper 001 (CodedReduce): the optimal computation load, beside our allocation.

For an ``(n, L)``-regular tree in which every parent tolerates ``s`` straggling children,
Theorem 1 (eq. 5) says every scheme needs load
``r >= r_CR = 1 / (q + q^2 + ... + q^L)``, ``q = n / (s + 1)``, and CR.Allocate (Appendix B)
attains it. This analysis puts, for every grid point and every layer of the tree:

- ``r_cr``: eq. (5) in exact rational arithmetic, computed here from the formula (not by
  ``gradcode.codes.coded_reduce_theory.r_cr``, so the two are checked against each other);
- ``load_min``/``load_max``: the fraction of the data set our ``coded-reduce`` code really
  gives the layer's nodes (``len(partitions(node)) / k`` over every node of the layer);
- ``subtree_paper``: the size of a layer-``l`` subtree's data, Appendix C eq. (12)-(13),
  ``|D^T(1,i)| = (s + 1) / n`` and ``|D^T(l,i)| = (s + 1) / n * (|D^T(l-1,i)| - r_CR)``,
  beside ``subtree_min``/``subtree_max``, the support of the message each node sends up
  (``subtree_coefficients``);
- ``replication_min``/``replication_max``: in how many sibling subtrees each data point of a
  parent's remaining data lies. The converse (eq. 14-15) needs at least ``s + 1``; equality
  everywhere is what makes the load optimal;
- the baselines on the same ``N = n + ... + n^L`` workers with the same straggler fraction:
  GC tolerating ``S = N s / n`` stragglers has load ``(S + 1) / N`` (Section II-C, Remark 2),
  the uncoded master-worker scheme ``1 / N``; ``alpha_L`` is Remark 2's approximation
  ``alpha^L`` (``alpha = s / n``), and ``reduction_vs_L1`` is ``r_CR(n, 1, s) / r_CR(n, L, s)``.

Grid (``section = "grid"``): every ``(n, L, s)`` with ``2 <= n <= 12``, ``1 <= L <= 4``,
``0 <= s < n`` and ``N <= 160``. That holds the paper's trees: ``(3, 2, 1)`` of Example 2
(``r_CR = 4/15``), ``(4, 3, 1)`` (``N = 84``) and ``(12, 2, s)`` for ``s = 1..5``
(``N = 156``). The per-parent code is Tandon et al.'s cyclic code (``inner="crc"``, their
Algorithm 2, as the paper's CompAlloc); the loads do not depend on it.

Remark 2 (``section = "remark2"``, formula only, no tree is built): "for alpha = 0.5, CR
reduces the computation load 7x by rearranging the nodes from 1 layer to 3 layers". The
reduction is ``1 + q + q^2``, which is 7 exactly when ``q = n / (s + 1) = 2`` (e.g. the
``N = 84`` tree ``(4, 3, 1)``) and tends to 7 for ``s = n / 2`` as ``n`` grows; the rows give
``s = n / 2`` for ``n = 4 .. 1024`` and ``L = 1, 2, 3``.

Everything is exact; ``trials`` and ``seed`` are accepted and unused.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from gradcode.analysis.base import Analysis, Progress
from gradcode.codes import build
from gradcode.codes.coded_reduce import CodedReduce
from gradcode.codes.coded_reduce_theory import tree_size

N_MAX_WORKERS = 160
BRANCHING = range(2, 13)
DEPTHS = range(1, 5)
REMARK2_BRANCHING = (4, 8, 16, 32, 64, 128, 256, 512, 1024)
#: the paper's own configurations, which the grid must contain
PAPER_TREES = ((3, 2, 1), (4, 3, 1), *((12, 2, s) for s in range(1, 6)))


def optimal_load(n: int, L: int, s: int) -> Fraction:
    """Eq. (5): ``1 / sum_{l=1..L} (n / (s + 1))^l``, exactly."""
    q = Fraction(n, s + 1)
    return 1 / sum(q**layer for layer in range(1, L + 1))


def subtree_sizes(n: int, L: int, s: int) -> list[Fraction]:
    """Appendix C, eq. (12)-(13): the data of a subtree rooted in layer ``1 .. L``.

    The last entry equals ``r_CR`` exactly (a leaf keeps its whole subtree's data); that
    identity is how the paper derives eq. (5).
    """
    r, share = optimal_load(n, L, s), Fraction(s + 1, n)
    sizes = [share]
    for _layer in range(2, L + 1):
        sizes.append(share * (sizes[-1] - r))
    return sizes


def grid() -> list[tuple[int, int, int]]:
    """Every ``(n, L, s)`` of the grid, in order (see the module docstring)."""
    return [
        (n, L, s)
        for L in DEPTHS
        for n in BRANCHING
        if tree_size(n, L) <= N_MAX_WORKERS
        for s in range(n)
    ]


def _fraction_range(values: list[Fraction]) -> tuple[Fraction, Fraction]:
    return min(values), max(values)


def _layer_rows(code: CodedReduce, n: int, L: int, s: int) -> list[dict[str, Any]]:
    k = code.k
    r = optimal_load(n, L, s)
    N = tree_size(n, L)
    S = N * s // n
    r_gc, r_umw = Fraction(S + 1, N), Fraction(1, N)
    alpha = Fraction(s, n)
    supports = {
        node: frozenset(np.flatnonzero(code.subtree_coefficients(node)).tolist())
        for node in range(N)
    }
    support_master = frozenset(range(k))
    paper = subtree_sizes(n, L, s)
    rows = []
    for layer in range(1, L + 1):
        nodes = code.nodes_at_depth(layer)
        loads = [Fraction(len(code.partitions(node)), k) for node in nodes]
        subtrees = [Fraction(len(supports[node]), k) for node in nodes]
        replication = []
        for parent in code.nodes_at_depth(layer - 1):
            own = frozenset() if layer == 1 else frozenset(code.partitions(parent))
            above = support_master if layer == 1 else supports[parent]
            kids = [supports[child] for child in code.children(parent)]
            replication += [sum(p in kid for kid in kids) for p in above - own]
        load_min, load_max = _fraction_range(loads)
        sub_min, sub_max = _fraction_range(subtrees)
        rows.append(
            {
                "section": "grid",
                "n": n,
                "L": L,
                "s": s,
                "N": N,
                "alpha": float(alpha),
                "inner": code.inner,
                "k": k,
                "layer": layer,
                "nodes": len(nodes),
                "r_cr": str(r),
                "r_cr_float": float(r),
                "alpha_L": float(alpha**L),
                "load_min": str(load_min),
                "load_max": str(load_max),
                "load_float": float(load_max),
                "load_is_r_cr": load_min == load_max == r,
                "subtree_paper": str(paper[layer - 1]),
                "subtree_min": str(sub_min),
                "subtree_max": str(sub_max),
                "subtree_is_paper": sub_min == sub_max == paper[layer - 1],
                "replication_min": min(replication),
                "replication_max": max(replication),
                "S": S,
                "r_gc": str(r_gc),
                "r_gc_float": float(r_gc),
                "r_umw": str(r_umw),
                "r_umw_float": float(r_umw),
                "gc_over_cr": float(r_gc / r),
                "reduction_vs_L1": float(optimal_load(n, 1, s) / r),
            }
        )
    return rows


def _remark2_rows() -> list[dict[str, Any]]:
    rows = []
    for n in REMARK2_BRANCHING:
        s = n // 2
        for L in (1, 2, 3):
            r = optimal_load(n, L, s)
            rows.append(
                {
                    "section": "remark2",
                    "n": n,
                    "L": L,
                    "s": s,
                    "N": tree_size(n, L),
                    "alpha": s / n,
                    "r_cr": str(r),
                    "r_cr_float": float(r),
                    "alpha_L": (s / n) ** L,
                    "reduction_vs_L1": float(optimal_load(n, 1, s) / r),
                }
            )
    return rows


def compute(trials: int, seed: int, progress: Progress) -> Analysis:
    points = grid()
    missing = [tree for tree in PAPER_TREES if tree not in points]
    if missing:
        raise AssertionError(f"the grid lost the paper's trees {missing}")
    rows: list[dict[str, Any]] = []
    for index, (n, L, s) in enumerate(points, start=1):
        code = build("coded-reduce", n=n, L=L, s=s, inner="crc", seed=0)
        rows += _layer_rows(code, n, L, s)
        if index % 40 == 0 or index == len(points):
            progress(f"{index}/{len(points)} trees (last n={n}, L={L}, s={s}, k={code.k})")
    rows += _remark2_rows()
    meta = {
        "what": "Theorem 1 (eq. 5) optimal load r_CR, exact, beside the load our coded-reduce "
        "code allocates to every layer, the subtree data sizes of Appendix C (eq. 12-13), the "
        "replication of each data point over sibling subtrees (eq. 14-15), and the loads of "
        "GC ((S + 1) / N, S = N s / n) and the uncoded master-worker scheme (1 / N); plus "
        "Remark 2's load reduction from 1 to L layers at alpha = 1/2",
        "source": "paper 001 (Reisizadeh et al., IEEE/ACM ToN 2021), Section III-C Theorem 1, "
        "Remark 2, Example 2, Appendices A-C",
        "grid": {
            "n": [BRANCHING.start, BRANCHING.stop - 1],
            "L": [DEPTHS.start, DEPTHS.stop - 1],
            "s": "0 .. n - 1",
            "max_workers": N_MAX_WORKERS,
            "inner": "crc",
            "crc_seed": 0,
            "trees": len(points),
        },
        "remark2": {"n": list(REMARK2_BRANCHING), "s": "n / 2", "L": [1, 2, 3]},
        "paper_trees": [list(tree) for tree in PAPER_TREES],
        "exact": True,
        "trials_used": False,
    }
    return Analysis(rows, meta)
