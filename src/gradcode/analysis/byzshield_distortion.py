"""ByzShield (Konstantinidis & Ramamoorthy, MLSys 2021, Sec. 5): the distortion fraction under
an omniscient attacker, ByzShield's MOLS placement beside DETOX and the baseline.

For ``K = r l`` workers and ``q = 0 .. q_max`` liars placed where they corrupt the most values
the aggregator takes (``gradcode.codes.distortion.worst_distortion``, every ``C(K, q)``
placement tried), one row per ``(K, q)``:

- ``byzshield_distorted``: ``c_max^(q)``, the most files of ``f = l^2`` whose majority, ``(r +
  1) / 2`` of their ``r`` copies, the liars hold (code ``byzshield``, ``l``, ``r``), and
  ``byzshield_fraction = c_max^(q) / f``; ``byzshield_worst``: one placement attaining it;
- ``byzshield_bound``: the paper's upper bound on ``c_max^(q)``
  (``ByzShield.distortion_bound``: ``(2 q^2 / r) / (1 + (r - 1) q / (r l))``);
- ``detox_fraction``: DETOX with the same ``K`` and ``r`` (``K / r`` groups of ``r``
  replicas; a group's vote is the liars' once ``(r + 1) / 2`` of it lie), the most such
  groups over ``K / r``;
- ``baseline_fraction``: no redundancy (``uncoded``, an aggregator over the ``K`` workers'
  own gradients): ``q / K``.

Cases: ``(l, r) = (5, 3)`` (``K = 15``, ``f = 25``, the paper's small MOLS case), ``(7, 3)``
(``K = 21``, ``f = 49``) and ``(7, 5)`` (``K = 35``, ``f = 49``), ``q`` up to ``Q_MAX``.
Everything is exact; ``trials`` and ``seed`` are accepted and unused.
"""

from __future__ import annotations

from typing import Any

from gradcode.analysis.base import Analysis, Progress
from gradcode.codes import build
from gradcode.codes.distortion import worst_distortion

#: (l, r) -> the most liars tried (C(35, 5) = 324,632 placements is the largest)
Q_MAX = {(5, 3): 7, (7, 3): 9, (7, 5): 5}


def case_rows(l: int, r: int, q_max: int) -> list[dict[str, Any]]:
    """One row per ``q = 0 .. q_max`` for the MOLS placement of order ``l`` with ``r`` copies."""
    byzshield = build("byzshield", l=l, r=r)
    detox, baseline = build("detox", n=r * l, r=r), build("uncoded", n=r * l)
    rows = []
    for q in range(q_max + 1):
        ours = worst_distortion(byzshield, q)
        rows.append(
            {
                "K": r * l,
                "l": l,
                "r": r,
                "f": byzshield.k,
                "q": q,
                "byzshield_distorted": ours.distorted,
                "byzshield_fraction": ours.fraction,
                "byzshield_bound": byzshield.distortion_bound(q),
                "detox_fraction": worst_distortion(detox, q).fraction,
                "baseline_fraction": worst_distortion(baseline, q).fraction,
                "byzshield_worst": list(ours.worst),
                "placements": ours.placements,
            }
        )
    return rows


def compute(*, trials: int, seed: int, progress: Progress) -> Analysis:
    rows = []
    for (l, r), q_max in Q_MAX.items():
        progress(f"l={l}, r={r}, q <= {q_max}")
        rows += case_rows(l, r, q_max)
    meta = {
        "paper": "Konstantinidis & Ramamoorthy, ByzShield, MLSys 2021, Sec. 5",
        "method": "exhaustive search over every placement of q liars "
        "(gradcode.codes.distortion.worst_distortion)",
        "cases": [{"l": l, "r": r, "q_max": q_max} for (l, r), q_max in Q_MAX.items()],
    }
    return Analysis(rows, meta)
