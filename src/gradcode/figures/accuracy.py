"""Test-accuracy-versus-time curves of classification runs, and the speed-ups between them.

Paper 001's Fig. 13 compares schemes by the time each needs to reach a test accuracy. A run's
curve is its test accuracy (and test loss) at every logged iteration against the measured
training clock and against the clock its timing model gives for the delays it injected
(``gradcode.figures.convergence.model_clock``). The speed-up of a subject over a baseline is
measured at the TARGET accuracy of the pair: the lower of the two runs' final accuracies, which
both runs reach by the end (so the ratio is always defined), and the highest accuracy for which
that is guaranteed. For runs that share their iterates (the exact codes, in float64) it is the
ratio of their times to the same iteration; for SGD it also counts SGD's noisier steps. The
curves are ``ErrorCurve``s of the test error ``1 - accuracy`` so that Figs. 8-12's rule applies
unchanged.

Both clocks start after the first iteration: a JAX network compiles its gradient on every rank
during it (15-28 s for paper 001's CNN at N = 20 on 2 cores, against well under a second for
a later iteration), a cost of the library, not of the scheme, which the paper's simulation does
not have.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
import json
from dataclasses import dataclass

import numpy as np

from gradcode.figures.compare import Comparison
from gradcode.figures.convergence import ErrorCurve, curve_speedups, model_clock
from gradcode.figures.runs import Run
from gradcode.runfile.config import RunConfig


@dataclass(frozen=True, eq=False)
class AccuracyCurve:
    """One run's test error curve (``curve.errors = 1 - accuracy``) and its test loss."""

    curve: ErrorCurve
    losses: np.ndarray

    @property
    def accuracy(self) -> np.ndarray:
        return 1.0 - self.curve.errors


def first_iteration_time(run: Run) -> float:
    """The measured time of ``run``'s first iteration (the first record of its log)."""
    with (run.path.parent / "log.jsonl").open() as log:
        first = json.loads(log.readline())
    if first.get("iteration") != 0:
        raise ValueError(f"run {run.summary['name']}: its log does not start at iteration 0")
    return float(first["iteration_time"])


def accuracy_curve(run: Run, config: RunConfig, label: str) -> AccuracyCurve:
    """``run``'s test accuracy and loss at its logged iterations after the first, on both
    clocks started after the first iteration (``config``: the run's configuration, whose delays
    the model clock replays)."""
    points = [row for row in run.defined("accuracy") if row["iteration"] > 0]
    if not points:
        raise ValueError(f"run {run.summary['name']}: no test accuracy logged after iteration 0")
    model = model_clock(config, [0, *(row["iteration"] for row in points)])
    curve = ErrorCurve(
        run.short_name,
        label,
        None,
        run.summary,
        np.array([row["time"] for row in points]) - first_iteration_time(run),
        model[1:] - model[0],
        1.0 - np.array([row["accuracy"] for row in points]),
    )
    return AccuracyCurve(curve, np.array([row["test_loss"] for row in points]))


def accuracy_speedups(
    curves: Sequence[AccuracyCurve], baselines: Sequence[str], subject: str = "CR"
) -> dict[str, dict[str, float]]:
    """Per baseline: ``target`` (test accuracy, the lower final one of the pair) and
    ``subject``'s speed-up to reach it on the ``measured`` and the ``model`` clock."""
    found = curve_speedups([c.curve for c in curves], baselines, subject)
    return {label: {**value, "target": 1.0 - value["target"]} for label, value in found.items()}


def speedup_rows(
    paper: str,
    item: str,
    paper_speedups: Mapping[str, float],
    results: Mapping[str, Mapping[str, float]],
    note: str,
    subject: str = "CR",
) -> list[Comparison]:
    """Comparison rows (kind ``emulated cluster``): per baseline of ``paper_speedups``,
    ``subject``'s measured speed-up at its target accuracy beside the paper's factor;
    ``note`` (the setting) ends every row's note."""
    rows = []
    for label, factor in paper_speedups.items():
        value = results[label]
        rows.append(
            Comparison(
                paper,
                item,
                f"{subject} speedup over {label} to the target test accuracy",
                factor,
                value["measured"],
                "emulated cluster",
                f"target {value['target']:.3f} test accuracy (the lower final accuracy of "
                f"{label} and {subject}); the paper's timing model on the same injected delays "
                f"gives {value['model']:.2f}x; {note}",
            )
        )
    return rows
