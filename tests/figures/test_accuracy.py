"""Test-accuracy curves and CR's speed-ups to a target accuracy (Fig. 13 as MPI runs): the
rule on curves of known times, then on the notebook fixture's five real MPI runs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gradcode.figures.accuracy import (
    AccuracyCurve,
    accuracy_curve,
    accuracy_speedups,
    speedup_rows,
)
from gradcode.figures.convergence import ErrorCurve
from gradcode.figures.runs import read_run
from gradcode.runfile.experiment import load_experiment

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "notebooks" / "fixtures" / "results" / "train" / "coded-reduce-fig13"
EXPERIMENT = ROOT / "tests" / "notebooks" / "experiments" / "coded-reduce-fig13.yaml"
PAPER = {"UMW": 6.6, "GC": 4.8, "RAR": 1.8, "SGD": 4.0}


def _curve(label: str, times: list[float], accuracy: list[float], slower: float = 2.0):
    times_, accuracy_ = np.array(times), np.array(accuracy)
    curve = ErrorCurve(label, label, None, {}, times_, slower * times_, 1 - accuracy_)
    return AccuracyCurve(curve, accuracy_, np.zeros(len(times)), "accuracy")


def test_on_the_test_loss_the_target_is_the_higher_final_loss():
    def lossy(label, times, losses):
        times_ = np.array(times)
        curve = ErrorCurve(label, label, None, {}, times_, times_, np.array(losses))
        return AccuracyCurve(curve, np.zeros(len(times)), np.array(losses), "test_loss")

    curves = [lossy("CR", [1, 2, 3], [2.3, 2.2, 2.1]), lossy("GC", [4, 8, 12], [2.3, 2.25, 2.2])]
    found = accuracy_speedups(curves, ["GC"])["GC"]
    # GC ends at 2.2, which CR reaches at 2 s and GC at 12 s
    assert found["target"] == pytest.approx(2.2) and found["measured"] == pytest.approx(6.0)


def test_the_target_is_the_lower_final_accuracy_and_the_ratio_its_first_times():
    curves = [
        _curve("CR", [1, 2, 3, 4], [0.1, 0.2, 0.3, 0.25]),
        # reaches 0.3 at 6 s; ends higher than CR: the target is CR's final 0.25, hit at 6 s
        _curve("UMW", [2, 4, 6, 8], [0.1, 0.2, 0.3, 0.35], slower=3.0),
        # ends lower (0.2): the target is its own final accuracy, first reached at 10 s
        _curve("SGD", [5, 10, 15], [0.1, 0.2, 0.2]),
    ]
    found = accuracy_speedups(curves, ["UMW", "SGD"])
    assert found["UMW"]["target"] == pytest.approx(0.25)
    # CR first reaches 0.25 at 3 s (0.3): UMW's 6 s / 3 s; model clocks 18 s / 6 s
    assert found["UMW"]["measured"] == pytest.approx(2.0)
    assert found["UMW"]["model"] == pytest.approx(3.0)
    assert found["SGD"]["target"] == pytest.approx(0.2)
    assert found["SGD"]["measured"] == pytest.approx(10 / 2)


def test_rows_set_each_baselines_speedup_beside_the_papers():
    values = {
        label: {"target": 0.3, "measured": 1.5 + i, "model": 2.0} for i, label in enumerate(PAPER)
    }
    rows = speedup_rows("001 (CodedReduce)", "Fig. 13", PAPER, values, "N = 20")
    assert [(row.paper_value, row.reproduced) for row in rows] == [
        (6.6, 1.5),
        (4.8, 2.5),
        (1.8, 3.5),
        (4.0, 4.5),
    ]
    assert {row.kind for row in rows} == {"emulated cluster"}
    assert rows[0].quantity == "CR speedup over UMW to the target test accuracy"
    assert rows[0].note.startswith("target test accuracy 0.3 (the lower final test accuracy")
    assert rows[0].note.endswith("N = 20")
    by_loss = speedup_rows("001 (CodedReduce)", "Fig. 13", PAPER, values, "", by="test_loss")
    assert by_loss[0].quantity == "CR speedup over UMW to the target test loss"


def test_on_the_fixture_runs_the_exact_codes_share_their_accuracy():
    spec = load_experiment(EXPERIMENT)
    curves = {}
    for label in ("UMW", "GC", "RAR", "SGD", "CR"):
        run = read_run(FIXTURES / label / "summary.json")
        curves[label] = accuracy_curve(run, spec.config(label), label, by="test_loss")
    cr = curves["CR"]
    # iterations 1 and 2: the first (the gradient compiling) starts the clocks
    assert len(cr.accuracy) == 2 and np.all(np.diff(cr.curve.times) > 0)
    assert cr.curve.times[0] > 0 and cr.curve.model_times[0] > 0
    assert np.all(np.diff(cr.curve.model_times) > 0) and np.all(cr.losses > 0)
    for label in ("UMW", "GC", "RAR"):  # the same iterates (float64): the same test results
        np.testing.assert_array_equal(curves[label].accuracy, cr.accuracy)
        np.testing.assert_allclose(curves[label].losses, cr.losses, rtol=1e-12)
    found = accuracy_speedups(list(curves.values()), ["UMW", "GC", "RAR", "SGD"])
    for label, value in found.items():
        final = max(curves[label].losses[-1], cr.losses[-1])
        assert value["target"] == pytest.approx(final) and value["measured"] > 0, label
    rows = speedup_rows("001 (CodedReduce)", "Fig. 13", PAPER, found, "fixture", by="test_loss")
    assert [row.quantity.split()[3] for row in rows] == list(PAPER)
