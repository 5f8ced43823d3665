"""A panel setting a paper's speed-up factors beside the reproduced ones (log scale)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import NullFormatter, ScalarFormatter


def speedup_panel(
    axis: plt.Axes,
    paper: Mapping[str, float],
    ours: Sequence[float],
    *,
    paper_label: str,
    ours_label: str,
    yticks: Sequence[float],
    subject: str = "CR",
) -> None:
    """Paper's factors (squares) and ours (dots) per baseline of ``paper``, in that order.

    ``ours[i]`` is baseline i's time over ``subject``'s; above the line at 1 ``subject`` is
    faster. Each marker carries its value.
    """
    baselines = list(paper)
    x = np.arange(len(baselines))
    axis.plot(
        x - 0.12,
        [paper[label] for label in baselines],
        "s",
        color="C1",
        markersize=9,
        label=paper_label,
    )
    axis.plot(x + 0.12, ours, "o", color="C0", markersize=9, label=ours_label)
    for position, label, value in zip(x, baselines, ours, strict=True):
        axis.annotate(
            f"{value:.2f}x",
            (position + 0.12, value),
            xytext=(8, -3),
            textcoords="offset points",
            fontsize=8,
            color="C0",
        )
        axis.annotate(
            f"{paper[label]}x",
            (position - 0.12, paper[label]),
            xytext=(-8, -3),
            textcoords="offset points",
            ha="right",
            fontsize=8,
            color="C1",
        )
    axis.axhline(1, color="k", linewidth=0.8)
    axis.text(
        len(baselines) - 0.45, 1.05, f"{subject} faster above this line", ha="right", fontsize=8
    )
    axis.set_xticks(x, [f"{label} / {subject}" for label in baselines])
    axis.set_xlim(-0.7, len(baselines) - 0.4)
    axis.set_yscale("log")
    axis.set_yticks(list(yticks))
    axis.yaxis.set_major_formatter(ScalarFormatter())
    axis.yaxis.set_minor_formatter(NullFormatter())
