"""Speed-ups: ratios of mean times, times to reach a target, and the paper-versus-ours panel."""

import math

import numpy as np
import pytest

from gradcode.figures.speedups import (
    describe,
    first_time_below,
    first_time_reaching,
    ratios,
    speedup_panel,
    time_ratios,
)
from gradcode.figures.tables import index_by

TIMES = index_by(
    [
        {"label": "UMW", "mean_time": 3.0, "median": 9.0},
        {"label": "GC", "mean_time": 1.5, "median": 1.0},
        {"label": "CR", "mean_time": 0.5, "median": 2.0},
    ],
    "label",
)


def test_ratios_are_baseline_over_subject():
    assert ratios(TIMES, ["UMW", "GC"]) == [6.0, 3.0]
    assert ratios(TIMES, ["GC", "UMW"], "CR") == [3.0, 6.0]  # in the order asked
    assert ratios(TIMES, ["CR"], "GC", "median") == [2.0]
    assert ratios(TIMES, []) == []


def test_time_ratios_say_never():
    times = {"UMW": 6.0, "GC": None, "CR": 2.0}
    assert time_ratios(times, ["UMW", "GC"]) == {"UMW": 3.0, "GC": None}
    assert time_ratios(times | {"CR": None}, ["UMW"]) == {"UMW": None}
    assert describe(time_ratios(times, ["UMW", "GC"])) == "UMW/CR 3.00x, GC/CR never"
    assert describe({"RAR": 0.456}, subject="GC") == "RAR/GC 0.46x"
    assert describe({}) == ""


def test_first_time_reaching_a_rising_metric():
    times, auc = [1.0, 2.0, 3.0, 4.0], [0.5, 0.7, 0.69, 0.8]
    assert first_time_reaching(times, auc, 0.7) == 2.0  # at least the target
    assert first_time_reaching(times, auc, 0.75) == 4.0
    assert first_time_reaching(times, auc, 0.1) == 1.0
    assert first_time_reaching(times, auc, 0.9) is None
    with pytest.raises(ValueError):
        first_time_reaching(times, auc[:-1], 0.9)


def test_first_time_below_a_falling_error():
    times = np.array([0.1, 0.2, 0.4, 0.8])
    errors = np.array([1.0, 0.1, 0.01, 0.001])
    assert first_time_below(times, errors, 0.1) == 0.2
    assert first_time_below(times, errors, 0.05) == 0.4
    assert first_time_below(list(times), list(errors), 0.01) == 0.4
    # within the relative slack counts as reached (round-off in a shared final error)
    assert first_time_below(times, errors, 0.01 * (1 - 1e-12)) == 0.4
    assert first_time_below(times, errors, 0.01 * (1 - 1e-6)) == 0.8
    assert first_time_below(times, errors, 0.01 * (1 - 1e-6), slack=1e-5) == 0.4
    assert isinstance(first_time_below(times, errors, 1.0), float)
    with pytest.raises(IndexError):
        first_time_below(times, errors, 1e-4)


def test_speedup_panel(axis):
    paper = {"UMW": 6.6, "GC": 4.8, "RAR": 1.8}
    ours = [5.0, 2.5, 0.8]
    speedup_panel(
        axis, paper, ours, paper_label="paper", ours_label="ours", yticks=[0.5, 1, 2, 5, 10]
    )
    assert axis.get_yscale() == "log"
    assert [t.get_text() for t in axis.get_xticklabels()] == ["UMW / CR", "GC / CR", "RAR / CR"]
    squares, dots, line = axis.get_lines()
    np.testing.assert_allclose(squares.get_xdata(), [-0.12, 0.88, 1.88])
    assert list(squares.get_ydata()) == [6.6, 4.8, 1.8] and squares.get_label() == "paper"
    np.testing.assert_allclose(dots.get_xdata(), [0.12, 1.12, 2.12])
    assert list(dots.get_ydata()) == ours and dots.get_label() == "ours"
    assert list(line.get_ydata()) == [1, 1]  # the line at 1: faster above, slower below
    texts = [t.get_text() for t in axis.texts]
    assert ["5.00x", "6.6x", "2.50x", "4.8x", "0.80x", "1.8x"] == texts[:6]
    assert texts[6] == "CR faster above this line"
    assert list(axis.get_yticks()) == [0.5, 1, 2, 5, 10]
    assert axis.get_xlim() == pytest.approx((-0.7, 2.6))


def test_speedup_panel_other_subject(axis):
    speedup_panel(
        axis, {"UMW": 2.0}, [1.0], paper_label="p", ours_label="o", yticks=[1, 2], subject="GC"
    )
    assert [t.get_text() for t in axis.get_xticklabels()] == ["UMW / GC"]
    assert axis.texts[-1].get_text() == "GC faster above this line"
    assert math.isclose(axis.get_xlim()[1], 0.6)
