"""Error-versus-time curves of training runs, and the speed-ups between them.

A run's curve is its error metric at every logged iteration against two clocks: the measured
training clock (the sum of measured iteration times, metric evaluation excluded) and the clock
the run's timing model gives for the very delays the run injected (same iterations, model times
instead of measured ones). CodedReduce's Figs. 8-12 compare schemes by the time each needs to
reach an error.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from gradcode.figures.runs import Run
from gradcode.figures.speedups import first_time_below
from gradcode.runfile.config import RunConfig
from gradcode.runfile.plan import build_plan
from gradcode.timing import model_from_spec


@dataclass(frozen=True, eq=False)
class ErrorCurve:
    """One run's error at its logged iterations, against the measured and the model clock."""

    name: str
    label: str
    alpha: Fraction | None  # None: the scheme tolerates no stragglers
    summary: dict[str, Any]
    times: np.ndarray  # training clock after each logged iteration (s)
    model_times: np.ndarray  # the same from the timing model on the injected delays (s)
    errors: np.ndarray


def model_clock(config: RunConfig, iterations: Sequence[int]) -> np.ndarray:
    """Cumulative model time (s) after each iteration in ``iterations``, for the delays the
    run injected: the simulator's rule on the draws of ``gradcode.runfile.stragglers``."""
    plan = build_plan(config)
    source = plan.delay_source()
    stragglers = config.stragglers
    model = model_from_spec(stragglers.model, stragglers.params)
    scheme = plan.code
    prepared = model.prepare(scheme)
    last = max(iterations)
    per_iteration = np.array(
        [
            prepared.run(model.sample(source.rng(t), 1, plan.workers)).times[0]
            for t in range(last + 1)
        ]
    )
    clock = np.cumsum(per_iteration) * stragglers.time_unit
    return clock[iterations]


def error_curve(
    run: Run, config: RunConfig, metric: str, label: str, alpha: Fraction | None
) -> ErrorCurve:
    """``run``'s ``metric`` wherever it is defined, with both clocks (``config``: the run's
    configuration, whose delays the model clock replays)."""
    points = run.defined(metric)
    return ErrorCurve(
        run.short_name,
        label,
        alpha,
        run.summary,
        np.array([row["time"] for row in points]),
        model_clock(config, [row["iteration"] for row in points]),
        np.array([row[metric] for row in points]),
    )


def alpha_panels(curves: Sequence[ErrorCurve]) -> dict[Fraction, list[ErrorCurve]]:
    """One panel per straggler fraction alpha (increasing): the curves of that alpha and the
    curves of the schemes that tolerate no stragglers (alpha None), in the given order."""
    alphas = sorted({curve.alpha for curve in curves if curve.alpha is not None})
    return {alpha: [curve for curve in curves if curve.alpha in (None, alpha)] for alpha in alphas}


def pair_alphas(paper: Sequence[Fraction], ours: Sequence[Fraction]) -> dict[Fraction, Fraction]:
    """The paper's panel alphas paired with ours (both increasing): by value when they are the
    same, else in order; a paper alpha beyond ours stays unpaired."""
    if list(ours) == list(paper):
        return {alpha: alpha for alpha in ours}
    return dict(zip(paper, ours, strict=False))


def curve_speedups(
    members: Sequence[ErrorCurve], baselines: Sequence[str], subject: str = "CR"
) -> dict[str, dict[str, float]]:
    """Per baseline B: the target error (the worse of B's and ``subject``'s final errors) and
    ``subject``'s speed-up, B's time over ``subject``'s to first reach it, on the measured
    (``measured``) and on the model clock (``model``)."""
    by: Mapping[str, ErrorCurve] = {curve.label: curve for curve in members}
    own = by[subject]
    out = {}
    for label in baselines:
        base = by[label]
        target = max(base.errors[-1], own.errors[-1])
        out[label] = {
            "target": target,
            "measured": first_time_below(base.times, base.errors, target)
            / first_time_below(own.times, own.errors, target),
            "model": first_time_below(base.model_times, base.errors, target)
            / first_time_below(own.model_times, own.errors, target),
        }
    return out
