"""Fit paper 000's model to runs and write it as a simulation spec.

``fit_runs(directories)`` reads the runs' observations (``gradcode.fit.observations``), fits
the compute time ``T1`` per data subset and the communication time ``T2`` per full-length
vector by maximum likelihood with their censoring (``gradcode.fit.shifted_exponential``), once
for all workers pooled and, when the workers differ (a likelihood-ratio test at ``level``, or
``per_worker="yes"``), once per worker, and measures the runtime's own cost per iteration
(``overhead``: the mean of measured minus model time, with a t interval).

``FittedModel.spec()`` is a simulation spec (``gradcode.sim.spec``) of model
``master-worker`` in seconds: ``gradcode simulate`` predicts the fitted runs' own codes from it
(its ``schemes``), ``gradcode codes recommend --spec`` ranks every code, and its parameters
(without ``overhead``, which is not a delay) go into a run file's ``stragglers.params`` with
``time_unit: 1``. Its ``fit`` section keeps the intervals, goodness of fit and the runs'
injected models (in their own units) for comparison.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from gradcode.errors import UserError
from gradcode.fit.observations import RunObservations, pooled, read_runs
from gradcode.fit.shifted_exponential import (
    ComponentFit,
    FitError,
    Sample,
    TimesFit,
    compare_groups,
    fit_times,
)

PER_WORKER_CHOICES = ("auto", "yes", "no")
#: default significance level of the KS and homogeneity tests
DEFAULT_LEVEL = 0.01


class MisfitError(UserError):
    """The model does not fit the runs (a KS test rejects it); one line naming what."""


@dataclass(frozen=True)
class FittedModel:
    """Paper 000's model fitted to ``runs`` (see the module docstring)."""

    runs: tuple[RunObservations, ...]
    pooled: TimesFit
    per_worker: tuple[TimesFit, ...] | None
    homogeneity: dict[str, Any]
    overhead: float
    overhead_interval: tuple[float, float]
    confidence: float
    level: float
    skip: int

    @property
    def workers(self) -> int:
        return self.runs[0].workers

    @property
    def has_comm(self) -> bool:
        return self.pooled.comm is not None

    def parameters(self) -> dict[str, Any]:
        """The ``master-worker`` parameters, seconds (per-worker lists when fitted per
        worker)."""
        if self.per_worker is None:
            fits = [self.pooled]
        else:
            fits = list(self.per_worker)

        def values(component: str, field: str) -> Any:
            numbers = [float(getattr(getattr(fit, component), field)) for fit in fits]
            return numbers[0] if len(numbers) == 1 else numbers

        params: dict[str, Any] = {
            "lambda1": values("compute", "rate"),
            "t1": values("compute", "shift"),
        }
        if self.has_comm:
            params |= {"lambda2": values("comm", "rate"), "t2": values("comm", "shift")}
        params["overhead"] = max(self.overhead, 0.0)
        return params

    def rejected(self) -> list[str]:
        """Components whose KS test rejects the model at ``level`` (pooled fit and, per
        worker, ``worker i: component``)."""
        found = list(self.pooled.rejected(self.level))
        for worker, fit in enumerate(self.per_worker or ()):
            found += [f"worker {worker}: {name}" for name in fit.rejected(self.level)]
        return found

    def spec(self, *, name: str = "fitted") -> dict[str, Any]:
        """The simulation spec (see the module docstring)."""
        schemes, seen = [], set()
        for run in self.runs:
            key = (run.scheme, tuple(sorted(run.params.items(), key=lambda item: item[0])))
            if repr(key) in seen:
                continue
            seen.add(repr(key))
            schemes.append(
                {
                    "scheme": run.scheme,
                    "params": dict(run.params),
                    "label": Path(run.directory).name,
                }
            )
        return {
            "name": name,
            "description": (
                f"paper 000's master-worker model fitted by gradcode timing fit to {len(self.runs)}"
                f" run(s) of {self.workers} workers; seconds"
            ),
            "source": ", ".join(run.directory for run in self.runs),
            "model": "master-worker",
            "parameters": self.parameters(),
            "confidence": self.confidence,
            "fit": self.report(),
            "schemes": schemes,
        }

    def report(self) -> dict[str, Any]:
        """Everything measured, JSON-able (the spec's ``fit`` section)."""
        return {
            "workers": self.workers,
            "skip": self.skip,
            "level": self.level,
            "per_worker": self.per_worker is not None,
            "homogeneity": self.homogeneity,
            "pooled": self.pooled.as_dict(),
            "by_worker": [fit.as_dict() for fit in self.per_worker or ()],
            "overhead": {
                "mean": self.overhead,
                "interval": list(self.overhead_interval),
                "by_run": {run.directory: float(np.mean(run.overhead)) for run in self.runs},
            },
            "links": {
                run.directory: {
                    "upload_bytes_per_second": list(run.upload_rate),
                    "model_received_after": list(run.model_received),
                }
                for run in self.runs
                if run.one_clock
            },
            "runs": [
                {
                    "directory": run.directory,
                    "scheme": run.scheme,
                    "params": run.params,
                    "iterations": run.iterations,
                    "one_clock": run.one_clock,
                    "measured_mean": float(np.mean(run.measured)),
                    "injected": run.injected,
                }
                for run in self.runs
            ],
        }


def fit_runs(
    directories: Sequence[str | Path],
    *,
    skip: int = 1,
    confidence: float = 0.95,
    level: float = DEFAULT_LEVEL,
    per_worker: str = "auto",
    bootstrap: int = 200,
    seed: int = 0,
) -> FittedModel:
    """Fit paper 000's model to the runs in ``directories`` (see the module docstring)."""
    if per_worker not in PER_WORKER_CHOICES:
        raise UserError(f"per_worker: must be one of {', '.join(PER_WORKER_CHOICES)}")
    if not 0 < confidence < 1:
        raise UserError(f"confidence: must be in (0, 1) (got {confidence})")
    if not 0 < level < 1:
        raise UserError(f"level: must be in (0, 1) (got {level})")
    runs = read_runs(directories, skip=skip)
    with_comm = [run.comm_observed for run in runs]
    if any(with_comm) and not all(with_comm):
        quiet = runs[with_comm.index(False)]
        raise UserError(
            f"{quiet.directory}: its communication is not observed (no shared clock, nothing "
            "injected) but other runs' is; fit them separately"
        )
    comm = all(with_comm)
    rng = np.random.default_rng(seed)
    pooled_fit = fit_times(
        _sample(pooled(runs), comm), confidence=confidence, bootstrap=bootstrap, rng=rng
    )
    workers = runs[0].workers
    samples = [_sample(pooled(runs, [worker]), comm) for worker in range(workers)]
    homogeneity: dict[str, Any]
    try:
        test = compare_groups(samples)
        homogeneity = _as_dict(test)
        differ = test.pvalue < level
    except FitError as error:
        if per_worker == "yes":
            raise
        homogeneity = {"tested": False, "reason": str(error)}
        differ = False
    by_worker = None
    if per_worker == "yes" or (per_worker == "auto" and differ):
        by_worker = tuple(
            fit_times(sample, confidence=confidence, bootstrap=bootstrap, rng=rng)
            for sample in samples
        )
    overheads = np.concatenate([np.asarray(run.overhead) for run in runs])
    mean = float(overheads.mean())
    if overheads.size > 1:
        half = float(
            stats.t.ppf(0.5 + confidence / 2, overheads.size - 1)
            * overheads.std(ddof=1)
            / math.sqrt(overheads.size)
        )
    else:
        half = math.inf
    return FittedModel(
        runs=tuple(runs),
        pooled=pooled_fit,
        per_worker=by_worker,
        homogeneity=homogeneity,
        overhead=mean,
        overhead_interval=(mean - half, mean + half),
        confidence=confidence,
        level=level,
        skip=skip,
    )


def _sample(arrays: dict[str, np.ndarray], comm: bool) -> Sample:
    return Sample(
        subsets=arrays["subsets"],
        fraction=arrays["fraction"] if comm else np.zeros_like(arrays["fraction"]),
        threshold=arrays["threshold"],
        observed=arrays["observed"],
        compute=arrays["compute"],
        comm=arrays["comm"] if comm else None,
        iteration=arrays["iteration"],
    )


def _as_dict(test: Any) -> dict[str, Any]:
    return {"tested": True, **{k: v for k, v in vars(test).items() if not k.startswith("_")}}


def describe(component: ComponentFit, unit: str = "s") -> str:
    """``shift [low, high] + Exp(rate [low, high])`` for printing."""
    s_low, s_high = component.shift_interval
    r_low, r_high = component.rate_interval
    return (
        f"{component.shift:.4g} [{s_low:.4g}, {s_high:.4g}] {unit} + Exp(rate "
        f"{component.rate:.4g} [{r_low:.4g}, {r_high:.4g}] /{unit}), KS {component.ks:.3f} "
        f"(p = {component.ks_pvalue:.3f}, {component.complete} complete)"
    )
