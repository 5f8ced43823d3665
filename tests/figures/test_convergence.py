"""Error curves on the measured and the model clock, panels by alpha, and the speed-ups between
curves (CodedReduce Figs. 8-12)."""

import json
from fractions import Fraction

import numpy as np
import pytest

from gradcode.figures.convergence import (
    ErrorCurve,
    alpha_panels,
    curve_speedups,
    error_curve,
    model_clock,
    pair_alphas,
)
from gradcode.figures.runs import read_run
from gradcode.runfile.config import parse_config


def config(time_unit=1.0, seed=0, scheme=None):
    return parse_config(
        {
            "iterations": 6,
            "seed": seed,
            "data": {"prepared": "unused"},
            "model": {"kind": "logistic"},
            "optimizer": {"kind": "gd", "step": 1.0},
            "scheme": scheme or {"name": "frc", "params": {"n": 4, "s": 1}},
            "stragglers": {
                "model": "master-worker",
                "params": {"lambda1": 0.8, "t1": 1.6, "lambda2": 0.1, "t2": 6},
                "time_unit": time_unit,
            },
        }
    )


def test_model_clock_is_the_cumulative_model_time_of_the_injected_delays():
    clock = model_clock(config(), list(range(6)))
    assert clock.shape == (6,)
    assert np.all(np.diff(clock) > 0) and clock[0] > 0
    # a subset of the iterations reads the same clock; the draws depend on the iteration only
    np.testing.assert_array_equal(model_clock(config(), [1, 4]), clock[[1, 4]])
    np.testing.assert_array_equal(model_clock(config(), [5]), clock[[5]])
    # seconds per model unit scale it, and the run's seed chooses the draws
    np.testing.assert_array_equal(model_clock(config(time_unit=0.01), range(6)), clock * 0.01)
    assert not np.array_equal(model_clock(config(seed=1), range(6)), clock)


def test_model_clock_follows_the_scheme():
    uncoded = config(scheme={"name": "uncoded", "params": {"n": 4}})
    frc, plain = model_clock(config(), range(40)), model_clock(uncoded, range(40))
    assert not np.array_equal(frc, plain)


def curve(label, alpha, times, errors, model_times=None):
    times = np.array(times, dtype=float)
    model = times * 2 if model_times is None else np.array(model_times, dtype=float)
    return ErrorCurve(label, label, alpha, {}, times, model, np.array(errors, dtype=float))


def test_error_curve_keeps_the_points_where_the_metric_is_defined(tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    summary = {"name": "coded-reduce-fig8/GC", "scheme_params": {"n": 4, "s": 1}}
    (folder / "summary.json").write_text(json.dumps(summary))
    records = [
        {"iteration": 0, "time": 0.5, "loss": 0.7, "relative_error": None},
        {"iteration": 1, "time": 1.0, "loss": 0.6, "relative_error": 0.3},
        {"iteration": 2, "time": 1.5},
        {"iteration": 3, "time": 2.5, "loss": 0.5, "relative_error": 0.1},
    ]
    (folder / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    run = read_run(folder / "summary.json")
    got = error_curve(run, config(), "relative_error", "GC", Fraction(1, 4))
    assert (got.name, got.label, got.alpha, got.summary) == ("GC", "GC", Fraction(1, 4), summary)
    np.testing.assert_array_equal(got.times, [1.0, 2.5])
    np.testing.assert_array_equal(got.errors, [0.3, 0.1])
    np.testing.assert_array_equal(got.model_times, model_clock(config(), [1, 3]))


def test_alpha_panels_put_the_straggler_free_schemes_in_every_panel():
    umw = curve("UMW", None, [1], [1])
    gc_half = curve("GC", Fraction(1, 2), [1], [1])
    gc_quarter = curve("GC", Fraction(1, 4), [1], [1])
    rar = curve("RAR", None, [1], [1])
    cr_quarter = curve("CR", Fraction(1, 4), [1], [1])
    panels = alpha_panels([umw, gc_half, gc_quarter, rar, cr_quarter])
    assert list(panels) == [Fraction(1, 4), Fraction(1, 2)]
    assert panels[Fraction(1, 4)] == [umw, gc_quarter, rar, cr_quarter]
    assert panels[Fraction(1, 2)] == [umw, gc_half, rar]
    assert alpha_panels([umw, rar]) == {}


def test_pair_alphas():
    quarter, half, third = Fraction(1, 4), Fraction(1, 2), Fraction(1, 3)
    assert pair_alphas([quarter, half], [quarter, half]) == {quarter: quarter, half: half}
    # the reduced runs have other alphas: paired in increasing order, extra paper panels unpaired
    assert pair_alphas([quarter, half], [third]) == {quarter: third}
    assert pair_alphas([quarter], [third, half]) == {quarter: third}
    assert pair_alphas([quarter], []) == {}


def test_curve_speedups():
    cr = curve("CR", Fraction(1, 4), [1, 2, 3], [0.5, 0.1, 0.01], model_times=[1, 2, 4])
    umw = curve("UMW", None, [4, 8, 12, 16], [0.5, 0.2, 0.1, 0.05], model_times=[1, 2, 3, 5])
    gc = curve("GC", Fraction(1, 4), [2, 4], [0.4, 0.005], model_times=[3, 6])
    speedups = curve_speedups([umw, gc, cr], ["UMW", "GC"])
    assert list(speedups) == ["UMW", "GC"]
    # UMW ends at 0.05, worse than CR's 0.01: both to 0.05; UMW at 16 (model 5), CR at 3 (4)
    assert speedups["UMW"] == {"target": 0.05, "measured": 16 / 3, "model": 5 / 4}
    # GC ends better than CR: the target is CR's final 0.01; GC at 4 (model 6), CR at 3 (4)
    assert speedups["GC"] == {"target": 0.01, "measured": 4 / 3, "model": 6 / 4}
    with pytest.raises(KeyError):
        curve_speedups([umw, gc], ["UMW"])  # no subject
    other = curve_speedups([umw, gc], ["UMW"], subject="GC")
    assert other["UMW"]["target"] == 0.05 and other["UMW"]["measured"] == 16 / 4
