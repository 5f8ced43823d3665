"""Predicted beside measured: a fitted spec's iteration time for runs' codes, and the runs'.

``predict_runs(spec, directories)`` simulates every run's code under the fitted model (the
spec's model and parameters, ``overhead`` included; common random numbers) and sets the
prediction beside the run's measured mean iteration time, each with its interval. This closes
the loop of ``gradcode timing fit`` and ``gradcode codes recommend``: runs not used for the fit
(other codes, other seeds) test the prediction. A spec fitted despite a misfit
(``gradcode.sim.spec.misfit_warning``) is predicted from all the same, with one warning line
on stderr.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gradcode.runlogs.log import SUMMARY_FILE, read_log
from gradcode.sim.montecarlo import simulate
from gradcode.sim.spec import SpecError, load_spec, misfit_warning
from gradcode.sim.stats import Moments
from gradcode.yamlfile import read_yaml


@dataclass(frozen=True)
class Prediction:
    """One run: its code, measured mean iteration time and the model's, seconds."""

    run: str
    scheme: str
    params: dict[str, Any]
    iterations: int
    measured: float
    measured_low: float
    measured_high: float
    predicted: float
    predicted_low: float
    predicted_high: float

    @property
    def ratio(self) -> float:
        """measured / predicted."""
        return self.measured / self.predicted

    def record(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "scheme": self.scheme,
            "params": self.params,
            "iterations": self.iterations,
            "measured": self.measured,
            "measured_low": self.measured_low,
            "measured_high": self.measured_high,
            "predicted": self.predicted,
            "predicted_low": self.predicted_low,
            "predicted_high": self.predicted_high,
            "ratio": self.ratio,
        }


def measured_times(directory: str | Path, *, skip: int = 1) -> np.ndarray:
    """The run's iteration times after its first ``skip``, seconds, ``(iterations,)``."""
    records = [r for r in read_log(directory) if r.get("iteration", 0) >= skip]
    return np.array([r["iteration_time"] for r in records], dtype=np.float64)


def predict_runs(
    spec: Mapping[str, Any] | str | Path,
    directories: Sequence[str | Path],
    *,
    skip: int = 1,
    trials: int = 20_000,
    seed: int = 0,
    confidence: float = 0.95,
) -> list[Prediction]:
    """Measured and predicted mean iteration time of every run in ``directories``."""
    data = read_yaml(spec, SpecError) if isinstance(spec, str | Path) else dict(spec)
    summaries = [json.loads((Path(d) / SUMMARY_FILE).read_text()) for d in directories]
    schemes = [
        {"scheme": s["scheme"], "params": s["scheme_params"], "label": str(d)}
        for s, d in zip(summaries, directories, strict=True)
    ]
    origin = str(spec) if isinstance(spec, str | Path) else "fitted spec"
    fitted = load_spec({**data, "schemes": schemes}, origin=origin)
    warning = misfit_warning(data, origin)
    if warning:
        print(warning, file=sys.stderr)
    rows = simulate(fitted, trials=trials, seed=seed, confidence=confidence)
    predictions = []
    for directory, summary, row in zip(directories, summaries, rows, strict=True):
        times = Moments()
        times.add(measured_times(directory, skip=skip))
        low, high = times.interval(confidence)
        predictions.append(
            Prediction(
                run=str(directory),
                scheme=summary["scheme"],
                params=dict(summary["scheme_params"]),
                iterations=times.count,
                measured=times.mean,
                measured_low=low,
                measured_high=high,
                predicted=row.mean_time,
                predicted_low=row.ci_low,
                predicted_high=row.ci_high,
            )
        )
    return predictions
