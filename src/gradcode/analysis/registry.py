"""Name -> module of every analysis (imported lazily: some need scikit-learn)."""

from __future__ import annotations

import importlib
from typing import Any

from gradcode.analysis.base import Analysis, Progress
from gradcode.errors import UnknownNameError

#: analysis name -> (module under gradcode.analysis, one-line description)
ANALYSES: dict[str, tuple[str, str]] = {
    "binary-loads": ("binary_loads", "paper 003 Sec. V: load distribution of the binary code"),
    "binary-decoding": (
        "binary_decoding",
        "paper 003: decoding cost versus Tandon's table search, exactness as n grows",
    ),
    "coded-reduce-loads": ("coded_reduce_loads", "paper 001 Theorem 1: optimal load r_CR"),
    "coded-reduce-scaling": (
        "scaling",
        "paper 001's schemes at N = 84, 1,000, 10,000 on shared links, 0-50 ms latency",
    ),
    "coded-reduce-digits": (
        "coded_reduce_digits",
        "paper 001 Fig. 13 method (simulated cluster) on scikit-learn's digits",
    ),
    "heterogeneous-comm-cost": (
        "heterogeneous_comm_cost",
        "paper 004 Theorem 1: communication cost versus minimum replication r",
    ),
    "heterogeneous-adversaries": (
        "heterogeneous_adversaries",
        "paper 004: exact recovery with adversaries on an arbitrary placement",
    ),
    "heterogeneous-poly": (
        "heterogeneous_poly",
        "paper 004 Sec. IV Theorem 2: replication for h(sum of gradient matrices), decode error",
    ),
    "berrut-error": (
        "berrut_error",
        "paper 004 Sec. V: Berrut decoding error versus stragglers beyond s (Remark 15)",
    ),
    "byzshield-distortion": (
        "byzshield_distortion",
        "ByzShield Tables 3-6: exact worst-case distortion, MOLS and Ramanujan, beside the paper",
    ),
    "byzantine-aggregation": (
        "byzantine_aggregation",
        "issue 41: one step under every attack, codes, votes, robust aggregators, no defence",
    ),
}


def available_analyses() -> list[str]:
    return sorted(ANALYSES)


def _quiet(_: str) -> None:
    pass


def run_analysis(name: str, *, trials: int, seed: int, progress: Progress = _quiet) -> Analysis:
    """Compute analysis ``name``; ``trials`` bounds its Monte Carlo work (if it has any)."""
    if name not in ANALYSES:
        raise UnknownNameError("analysis", name, ANALYSES)
    module = importlib.import_module(f"gradcode.analysis.{ANALYSES[name][0]}")
    result: Analysis = module.compute(trials=trials, seed=seed, progress=progress)
    meta: dict[str, Any] = {"name": name, "description": ANALYSES[name][1], **result.meta}
    meta |= {"trials": trials, "seed": seed}
    from gradcode import __version__

    meta["gradcode"] = __version__
    return Analysis(result.rows, meta)
