"""Deterministic figure output: fixed style, no timestamps or software stamps in the PNG."""

from __future__ import annotations

from pathlib import Path

import matplotlib.pyplot as plt

STAND_IN_NOTE = "STAND-IN DATA (not the paper's data set)"


def setup() -> None:
    plt.rcParams.update(
        {
            "figure.dpi": 100,
            "savefig.dpi": 120,
            "font.size": 10,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "svg.hashsalt": "gradcode",
        }
    )


def save(figure: plt.Figure, path: str | Path) -> None:
    """Save as PNG with no metadata that changes between runs."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, metadata={"Software": None}, bbox_inches="tight")
