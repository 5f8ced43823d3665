"""Speed-ups: ratios of times, times to reach a target, and a panel setting a paper's speed-up
factors beside the reproduced ones (log scale)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import NullFormatter, ScalarFormatter


def ratios(
    by: Mapping[str, Mapping[str, float]],
    baselines: Sequence[str],
    subject: str = "CR",
    column: str = "mean_time",
) -> list[float]:
    """Per baseline (in order), its ``column`` over ``subject``'s: above 1 ``subject`` is
    faster. ``by`` maps a label to its table row."""
    own = by[subject][column]
    return [by[label][column] / own for label in baselines]


def time_ratios(
    times: Mapping[str, float | None], baselines: Sequence[str], subject: str = "CR"
) -> dict[str, float | None]:
    """Per baseline, its time over ``subject``'s; None where either never got there."""
    own = times[subject]
    return {
        label: None if times[label] is None or own is None else times[label] / own
        for label in baselines
    }


def describe(ratios: Mapping[str, float | None], subject: str = "CR") -> str:
    """``UMW/CR 2.50x, GC/CR never, ...``"""
    return ", ".join(
        f"{label}/{subject} {'never' if value is None else f'{value:.2f}x'}"
        for label, value in ratios.items()
    )


def first_time_reaching(
    times: Sequence[float], values: Sequence[float], target: float
) -> float | None:
    """The first time at which ``values`` is at least ``target`` (a metric that rises: AUC,
    accuracy); None if it never is."""
    return next((t for t, value in zip(times, values, strict=True) if value >= target), None)


def first_time_below(
    times: Sequence[float], values: Sequence[float], target: float, slack: float = 1e-9
) -> float:
    """The first time at which ``values`` is at most ``target`` up to a relative ``slack`` (an
    error that falls); IndexError if it never is."""
    reached = np.flatnonzero(np.asarray(values) <= target * (1 + slack))
    return float(np.asarray(times)[reached[0]])


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
