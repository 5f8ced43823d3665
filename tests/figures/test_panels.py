"""Means drawn with their confidence intervals."""

import numpy as np

from gradcode.figures.panels import ci_bars, ci_errorbar

ROWS = [
    {"label": "GC", "mean_time": 2.0, "ci_low": 1.5, "ci_high": 2.75, "median": 1.75},
    {"label": "CR", "mean_time": 0.5, "ci_low": 0.25, "ci_high": 1.0, "median": 0.5},
]


def error_extents(errorbar):
    """(bottom, top) of each vertical error bar of an ``ErrorbarContainer``."""
    (segments,) = errorbar.lines[2]
    return [(float(s[0][1]), float(s[1][1])) for s in segments.get_segments()]


def test_ci_bars(axis):
    bars = ci_bars(axis, ["GC", "CR"], ROWS, color=["C0", "0.7"])
    assert [bar.get_height() for bar in bars] == [2.0, 0.5]
    assert error_extents(bars.errorbar) == [(1.5, 2.75), (0.25, 1.0)]
    assert np.allclose(bars[1].get_facecolor()[:3], (0.7, 0.7, 0.7))


def test_ci_bars_of_another_column(axis):
    bars = ci_bars(axis, [0, 1], ROWS, "median", width=0.5)
    assert [bar.get_height() for bar in bars] == [1.75, 0.5]
    assert [bar.get_width() for bar in bars] == [0.5, 0.5]
    assert error_extents(bars.errorbar) == [(1.5, 2.75), (0.25, 1.0)]  # the interval is the table's


def test_ci_errorbar(axis):
    drawn = ci_errorbar(axis, [4, 8], ROWS, fmt="o-", label="simulated")
    line = drawn.lines[0]
    assert list(line.get_xdata()) == [4, 8] and list(line.get_ydata()) == [2.0, 0.5]
    assert error_extents(drawn) == [(1.5, 2.75), (0.25, 1.0)]
    assert drawn.get_label() == "simulated"
