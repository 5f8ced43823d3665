"""Panel helpers shared by the figure notebooks: means with their confidence intervals."""

from __future__ import annotations

from collections.abc import Sequence

import matplotlib.pyplot as plt
from matplotlib.container import BarContainer, ErrorbarContainer

from gradcode.figures.tables import ci_errors


def ci_bars(
    axis: plt.Axes, x: Sequence, rows: Sequence[dict], column: str = "mean_time", **kwargs
) -> BarContainer:
    """One bar per row at ``x``: ``row[column]`` with its confidence interval as error bar
    (``ci_low``, ``ci_high``). Further keywords go to ``axis.bar``."""
    return axis.bar(x, [row[column] for row in rows], yerr=ci_errors(rows, column), **kwargs)


def ci_errorbar(
    axis: plt.Axes, x: Sequence, rows: Sequence[dict], column: str = "mean_time", **kwargs
) -> ErrorbarContainer:
    """``row[column]`` against ``x`` with its confidence interval as error bars. Further
    keywords go to ``axis.errorbar``."""
    return axis.errorbar(x, [row[column] for row in rows], yerr=ci_errors(rows, column), **kwargs)
