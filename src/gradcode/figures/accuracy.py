"""Test-accuracy-versus-time curves of classification runs, and the speed-ups between them.

Paper 001's Fig. 13 compares schemes by the time each needs to reach a test accuracy. A run's
curve is its test accuracy and test loss at every logged iteration against the measured
training clock and against the clock its timing model gives for the delays it injected
(``gradcode.figures.convergence.model_clock``). The speed-up of a subject over a baseline is
measured at a TARGET of the pair, on one of two metrics (``by``):

- ``accuracy``: the lower of the two runs' final test accuracies;
- ``test_loss``: the higher of the two runs' final test losses.

Both runs reach the target by their end, so the ratio is always defined, and it is the best
value for which that is guaranteed (Figs. 8-12's rule, ``curve_speedups``, on the test error
``1 - accuracy`` or on the test loss). For runs that share their iterates (the exact codes,
in float64) it is the ratio of their times to the same iterate; for SGD it also counts SGD's
own steps. The test loss is the metric to use when the accuracy stays near chance (a few
dozen full-batch steps of a CNN): the accuracy then jumps between a few values and its first
passage measures noise, while the loss falls from the first iteration.

Both clocks start after the first iteration: a JAX network compiles its gradient on every rank
during it (15-28 s for paper 001's CNN at N = 20 on 2 cores, against a second or two for a
later iteration), a cost of the library, not of the scheme, which the paper's simulation does
not have.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from gradcode.figures.compare import Comparison
from gradcode.figures.convergence import ErrorCurve, curve_speedups, model_clock
from gradcode.figures.runs import Run
from gradcode.runfile.config import RunConfig

#: what a speed-up can be measured on: its words in a row, and how the target is chosen
METRICS = {
    "accuracy": ("test accuracy", "the lower final test accuracy"),
    "test_loss": ("test loss", "the higher final test loss"),
}


@dataclass(frozen=True, eq=False)
class AccuracyCurve:
    """One run's test accuracy and loss; ``curve.errors`` is the falling form of ``by``
    (``1 - accuracy`` or the test loss), on which speed-ups are measured."""

    curve: ErrorCurve
    accuracy: np.ndarray
    losses: np.ndarray
    by: str


def first_iteration_time(run: Run) -> float:
    """The measured time of ``run``'s first iteration (the first record of its log)."""
    with (run.path.parent / "log.jsonl").open() as log:
        first = json.loads(log.readline())
    if first.get("iteration") != 0:
        raise ValueError(f"run {run.summary['name']}: its log does not start at iteration 0")
    return float(first["iteration_time"])


def accuracy_curve(run: Run, config: RunConfig, label: str, by: str = "accuracy") -> AccuracyCurve:
    """``run``'s test accuracy and loss at its logged iterations after the first, on both
    clocks started after the first iteration (``config``: the run's configuration, whose delays
    the model clock replays); its speed-ups are measured on ``by`` (a key of ``METRICS``)."""
    if by not in METRICS:
        raise ValueError(f"speed-ups are measured on one of {sorted(METRICS)} (got {by!r})")
    points = [row for row in run.defined("accuracy") if row["iteration"] > 0]
    if not points:
        raise ValueError(f"run {run.summary['name']}: no test accuracy logged after iteration 0")
    model = model_clock(config, [0, *(row["iteration"] for row in points)])
    accuracy = np.array([row["accuracy"] for row in points])
    losses = np.array([row["test_loss"] for row in points])
    curve = ErrorCurve(
        run.short_name,
        label,
        None,
        run.summary,
        np.array([row["time"] for row in points]) - first_iteration_time(run),
        model[1:] - model[0],
        1.0 - accuracy if by == "accuracy" else losses,
    )
    return AccuracyCurve(curve, accuracy, losses, by)


def accuracy_speedups(
    curves: Sequence[AccuracyCurve], baselines: Sequence[str], subject: str = "CR"
) -> dict[str, dict[str, float]]:
    """Per baseline: ``target`` (of the curves' ``by``: the pair's lower final test accuracy or
    higher final test loss) and ``subject``'s speed-up to reach it on the ``measured`` and the
    ``model`` clock."""
    found = curve_speedups([c.curve for c in curves], baselines, subject)
    if curves[0].by == "test_loss":
        return found
    return {label: {**value, "target": 1.0 - value["target"]} for label, value in found.items()}


def speedup_rows(
    paper: str,
    item: str,
    paper_speedups: Mapping[str, float],
    results: Mapping[str, Mapping[str, float]],
    note: str,
    *,
    by: str = "accuracy",
    subject: str = "CR",
) -> list[Comparison]:
    """Comparison rows (kind ``emulated cluster``): per baseline of ``paper_speedups``,
    ``subject``'s measured speed-up to its target on ``by`` (as ``accuracy_speedups`` found
    it) beside the paper's factor; ``note`` (the setting) ends every row's note."""
    what, rule = METRICS[by]
    rows = []
    for label, factor in paper_speedups.items():
        value = results[label]
        rows.append(
            Comparison(
                paper,
                item,
                f"{subject} speedup over {label} to the target {what}",
                factor,
                value["measured"],
                "emulated cluster",
                f"target {what} {value['target']:.4g} ({rule} of {label} and {subject}); the "
                f"paper's timing model on the same injected delays gives {value['model']:.2f}x; "
                f"{note}",
            )
        )
    return rows
