"""Fit paper 000's model to runs and write it as a simulation spec.

``fit_runs(directories)`` reads the runs' observations (``gradcode.fit.observations``), fits
the compute time ``T1`` per data subset and the communication time ``T2`` per full-length
vector by maximum likelihood with their censoring (``gradcode.fit.shifted_exponential``), once
for all workers pooled and, when the workers differ (a likelihood-ratio test at ``level``, or
``per_worker="yes"``), once per worker, and measures the runtime's own cost per iteration
(``overhead``: the mean of measured minus model time, with a t interval: the model's download,
polling, decoding, the update).

``FittedModel.spec()`` is a simulation spec (``gradcode.sim.spec``) in seconds of one of two
timing models:

- ``master-worker`` (paper 000's: every worker its own link; ``T2`` fitted): runs whose
  communication was emulated, or measured without real links;
- ``shared-links`` (runs over real links, ``network`` in their run files, with one clock): the
  same fitted ``T1`` (``a = t1``, ``mu = lambda1``, ``data = n``: a data point per subset), and
  the links fitted instead of ``T2``: the links' ``latency`` and every worker's rate from the
  lower envelope of its results' transfer times, ``latency + bytes / rate``
  (``gradcode.fit.latency``; or with the latency the user gave, every rate its fastest
  transfer's once that latency is off), the master's at
  the rate the model copies left it once the latency is taken off (both rates written spelt,
  ``gradcode.rate``'s canonical ``...bit``, which reads back to the fitted bytes per second
  exactly), all results sharing the master's port as real links do;
  the model's way to the workers as measured (``starts``: when the ``j``-th worker had it,
  dealt to the workers in a random order every trial, as TCP serves the copies; a perfectly
  fair download would start them all together, and their results would collide), ``overhead``
  what follows the decodable set (decoding, the update). ``T2`` is still fitted and reported,
  but does not enter (on shared links it is no independent per-worker time: its KS test rejects
  it).

A latency that is not identifiable (one message size) or has no interval (the envelope is not
one latency plus bytes over a rate per worker; too few transfers) is no measurement:
``spec()`` then raises ``LatencyMisfitError`` naming it, unless the user accepts the misfit
(``accept_misfit``: the point estimate is written and ``fit.latency_misfit`` says why, which
``simulate``, ``predict`` and ``recommend`` repeat as a warning) or gives the latency
(``fit_runs(latency=...)``, marked ``given`` in ``fit.link_rates.latency``). A latency of 0
that nothing measured would rank rings first: they pay ``2 (N - 1)`` latencies a flat code
does not.

``overhead`` is what the spec's model adds to every iteration, so it differs by model: in
``master-worker``, the measured iteration time minus the code's rule on the workers' times
counted from their receipt of the model (the download, polling, decoding, the update); in
``shared-links``, whose times run from the iteration's start (the download is ``starts``),
what followed the decodable set (decoding, the update). Both are reported (``fit.overhead``:
``mean`` and ``after_decodable``; ``written``, the spec's).

``gradcode simulate`` predicts the fitted runs' own codes from the spec (its ``schemes``),
``gradcode codes recommend --spec`` ranks every code, and a run file injects it with
``stragglers: {spec: fitted.yaml}`` (``overhead``, which is not a delay, left out). Its
``fit`` section keeps the intervals, goodness of fit, the link rates and the runs' injected
models (in their own units) for comparison.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from gradcode.codes import build
from gradcode.errors import UserError
from gradcode.fit.fitted import ComponentFit, TimesFit
from gradcode.fit.latency import LinksFit, fit_links, fit_links_at
from gradcode.fit.links import LinkRate, master_link
from gradcode.fit.observations import pooled, read_runs
from gradcode.fit.replay import TreeIterations, tree_ks
from gradcode.fit.run_observations import RunObservations
from gradcode.fit.sample import FitError, Sample
from gradcode.fit.shifted_exponential import COMPONENTS, compare_groups, fit_times
from gradcode.message_header import H
from gradcode.rate import Rate
from gradcode.sim.stats import Moments
from gradcode.timing import TimingModel, model_from_spec

PER_WORKER_CHOICES = ("auto", "yes", "no")
MODEL_CHOICES = ("auto", "master-worker", "shared-links")
#: bytes the runtime adds to every result message (its header of ``H`` float64s)
RESULT_HEADER_BYTES = 8 * H
#: default significance level of the KS and homogeneity tests
DEFAULT_LEVEL = 0.01


class MisfitError(UserError):
    """The model does not fit the runs (a KS test rejects it); one line naming what."""


class LatencyMisfitError(MisfitError):
    """The links' latency is no measurement (not identifiable, or no interval) and the user
    neither accepted that nor gave one; one line naming the problem and both ways out."""


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
    model: str = "master-worker"
    #: mean measured time after the decodable set arrived (the shared-links model's overhead:
    #: its times run from the iteration's start, the model's way to the workers included)
    finish: float = 0.0
    finish_interval: tuple[float, float] = (0.0, 0.0)
    #: the links' one-way latency the user gave, seconds (``None``: fitted)
    latency: float | None = None

    @property
    def workers(self) -> int:
        return self.runs[0].workers

    @property
    def has_comm(self) -> bool:
        return self.pooled.comm is not None

    @property
    def written_overhead(self) -> float:
        """The spec's ``overhead``: what its model adds to every iteration (module docstring),
        at least 0 (a negative mean is the measurement's noise, not a saving)."""
        return max(self.finish if self.model == "shared-links" else self.overhead, 0.0)

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

        if self.model == "shared-links":
            links = self.links()
            rate = links["rate"]
            return {
                # spelt with their unit (exactly: Rate's text reads back to the same float)
                "rate": [str(Rate(r)) for r in rate] if isinstance(rate, list) else str(Rate(rate)),
                "master_rate": str(Rate(links["master_rate"])),
                "latency": links["latency"],
                "features": self.runs[0].features,
                "header_bytes": float(RESULT_HEADER_BYTES),
                "download": False,
                "starts": links["starts"],
                "a": values("compute", "shift"),
                "mu": values("compute", "rate"),
                "data": self.workers,
                "overhead": self.written_overhead,
            }
        params: dict[str, Any] = {
            "lambda1": values("compute", "rate"),
            "t1": values("compute", "shift"),
        }
        if self.has_comm:
            params |= {"lambda2": values("comm", "rate"), "t2": values("comm", "shift")}
        params["overhead"] = self.written_overhead
        return params

    def link_rates(self) -> tuple[LinksFit, LinkRate]:
        """The latency and every worker's link (``gradcode.fit.latency``), and the master's
        port (``gradcode.fit.links``), with intervals."""
        transfers = []
        for worker in range(self.workers):
            seen = [pair for run in self.runs for pair in run.upload_transfers[worker]]
            if not seen:
                raise UserError(
                    f"worker {worker}: no measured transfer in any run; the links cannot be fitted"
                )
            transfers.append(seen)
        try:
            if self.latency is None:
                links = fit_links(transfers, self.confidence)
            else:
                links = fit_links_at(transfers, self.latency, self.confidence)
        except FitError as error:
            raise UserError(f"the links cannot be fitted: {error}") from None
        downloads = [pair for run in self.runs for pair in run.downloads]
        if not downloads:
            raise UserError("no model download measured in any run; the links cannot be fitted")
        latency = links.latency.seconds
        late = [seconds for _, seconds in downloads if seconds <= latency]
        if late:
            raise UserError(
                f"a model copy arrived {late[0]:.4g} s after the iteration began, within the "
                f"fitted latency of {latency:.4g} s; the links cannot be fitted"
            )
        # the model's copies reach the last worker at latency + their bytes / master_rate
        rates = [nbytes / (seconds - latency) for nbytes, seconds in downloads]
        return links, master_link(rates, self.confidence)

    @property
    def head_start(self) -> float:
        """The largest token-bucket head start added to the runs' transfers (seconds; 0 off
        the emulated cluster; ``gradcode.fit.observations.head_starts``)."""
        return max((start for run in self.runs for start in run.head_starts), default=0.0)

    def links(self) -> dict[str, Any]:
        """The fitted links: ``rate`` (bytes per second, per worker when the workers were
        fitted one by one, else their median), ``master_rate`` and ``latency`` (seconds)."""
        fitted, master = self.link_rates()
        per_worker = [link.rate for link in fitted.workers]
        orders = [run.start_order for run in self.runs if run.start_order is not None]
        if not orders:
            raise UserError(
                "no iteration in which every worker answered: when the workers had the model "
                "is not measured; calibrate on a run that waits for all (uncoded)"
            )
        rate: Any = per_worker if self.per_worker is not None else float(np.median(per_worker))
        return {
            "rate": rate,
            "master_rate": master.rate,
            "latency": fitted.latency.seconds,
            "starts": np.median(orders, axis=0).tolist(),
        }

    def _link_report(self) -> dict[str, Any] | None:
        """The links with intervals, where the runs measured them (one clock, flat)."""
        if not all(run.upload_transfers and run.downloads for run in self.runs):
            return None
        try:
            fitted, master = self.link_rates()
        except UserError:
            return None
        return {
            "confidence": self.confidence,
            "head_start": self.head_start,
            "latency": fitted.latency.as_dict(),
            "workers": [link.as_dict() for link in fitted.workers],
            "master": master.as_dict(),
        }

    def latency_problem(self) -> str | None:
        """Why the shared-links spec's latency is no measurement (``Latency.problem``), or
        ``None`` (a fitted latency with its interval, a given one, another model)."""
        if self.model != "shared-links":
            return None
        return self.link_rates()[0].latency.problem

    def rejected(self) -> list[str]:
        """Components the spec's model uses whose KS test rejects them at ``level`` (pooled
        fit and, per worker, ``worker i: component``)."""
        used = {"compute"} if self.model == "shared-links" else {"compute", "communication"}
        found = [name for name in self.pooled.rejected(self.level) if name in used]
        for worker, fit in enumerate(self.per_worker or ()):
            found += [
                f"worker {worker}: {name}" for name in fit.rejected(self.level) if name in used
            ]
        return found

    def spec(self, *, name: str = "fitted", accept_misfit: bool = False) -> dict[str, Any]:
        """The simulation spec (see the module docstring); ``LatencyMisfitError`` when the
        links' latency is no measurement, unless ``accept_misfit`` (then the spec says so in
        ``fit.latency_misfit``)."""
        problem = self.latency_problem()
        if problem is not None and not accept_misfit:
            latency = self.link_rates()[0].latency
            shown = "0" if latency.seconds == 0 else f"{latency.seconds * 1e3:.4g} ms"
            # one size: a second size is the way to a measured latency, not a way out here
            hint = "" if latency.identifiable else "; fitting runs of two message sizes finds it"
            raise LatencyMisfitError(
                f"{problem}; no spec written: give the links' one-way latency (--latency "
                f"DURATION, e.g. 2.5ms) or write {shown} anyway (--accept-misfit){hint}"
            )
        schemes, seen = [], set()
        model = model_from_spec(self.model, self.parameters())
        for run in self.runs:
            key = (run.scheme, tuple(sorted(run.params.items(), key=lambda item: item[0])))
            if repr(key) in seen or not _simulated(model, run):
                continue
            seen.add(repr(key))
            schemes.append(
                {
                    "scheme": run.scheme,
                    "params": dict(run.params),
                    "label": Path(run.directory).name,
                }
            )
        if not schemes:  # e.g. a ring, which the master-worker model does not simulate
            schemes.append({"scheme": "uncoded", "params": {"n": self.workers}, "label": "uncoded"})
        fitted = {
            "name": name,
            "description": (
                f"paper 000's T1 fitted by gradcode timing fit to {len(self.runs)} run(s) of "
                f"{self.workers} workers, in model {self.model}; seconds"
            ),
            "source": ", ".join(run.directory for run in self.runs),
            "model": self.model,
            "parameters": self.parameters(),
            "confidence": self.confidence,
            "fit": self.report(),
            "schemes": schemes,
        }
        if problem is not None:
            fitted["fit"]["latency_misfit"] = problem
        return fitted

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
                # master-worker's: beyond the code's rule on the workers' times counted from
                # their receipt of the model (the download, polling, decoding, the update)
                "mean": self.overhead,
                "interval": list(self.overhead_interval),
                "by_run": {run.directory: float(np.mean(run.overhead)) for run in self.runs},
                # shared-links': after the decodable set (decoding, the update)
                "after_decodable": {
                    "mean": self.finish,
                    "interval": list(self.finish_interval),
                    "by_run": {run.directory: float(np.mean(run.finish)) for run in self.runs},
                },
                "written": self.written_overhead,
                "written_is": "after_decodable" if self.model == "shared-links" else "mean",
            },
            "model": self.model,
            "link_rates": self._link_report(),
            "links": {
                run.directory: {
                    "upload_bytes_per_second": list(run.upload_rate),
                    "download_bytes_per_second": run.download_rate,
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
    model: str = "auto",
    latency: float | None = None,
) -> FittedModel:
    """Fit paper 000's model to the runs in ``directories`` (see the module docstring);
    ``model``: the spec's timing model (``auto``: ``shared-links`` for runs over real links
    with one clock, else ``master-worker``); ``latency``: the links' one-way latency in
    seconds as the user knows it (shared-links only), instead of the fitted one."""
    _check_options(per_worker, model, confidence, level)
    if latency is not None and not (math.isfinite(latency) and latency >= 0):
        raise UserError(f"latency: must be a finite number of seconds >= 0 (got {latency})")
    runs = read_runs(directories, skip=skip)
    comm = _communication_observed(runs)
    separable = _separable(runs)
    fit = _fit_separable if separable else _fit_joint
    model = _spec_model(runs, model)
    if latency is not None and model != "shared-links":
        raise UserError(
            f"latency: the {model} model has no links' latency; it is for shared-links fits "
            "(flat runs over real links with one clock, their model sent as copies)"
        )
    rng = np.random.default_rng(seed)
    pooled_fit = fit(pooled(runs), comm, confidence=confidence, bootstrap=bootstrap, rng=rng)
    trees = [run.tree for run in runs if run.tree is not None]
    if trees and len(trees) == len(runs):
        pooled_fit = _replayed(pooled_fit, trees, None, bootstrap, rng)
    # the workers differ only in what the spec's model uses (on shared links: the compute)
    per_worker_comm = comm and model == "master-worker" and not separable
    homogeneity, differ = _homogeneity(runs, per_worker_comm, per_worker, level)
    by_worker = None
    if per_worker == "yes" or (per_worker == "auto" and differ):
        by_worker = tuple(
            fit(pooled(runs, [worker]), comm, confidence=confidence, bootstrap=bootstrap, rng=rng)
            for worker in range(runs[0].workers)
        )
        if trees and len(trees) == len(runs):
            by_worker = tuple(
                _replayed(one, trees, [worker], bootstrap, rng)
                for worker, one in enumerate(by_worker)
            )
    overheads, finishes = Moments(), Moments()
    overheads.add(np.concatenate([np.asarray(run.overhead) for run in runs]))
    finishes.add(np.concatenate([np.asarray(run.finish) for run in runs]))
    return FittedModel(
        runs=tuple(runs),
        pooled=pooled_fit,
        per_worker=by_worker,
        homogeneity=homogeneity,
        overhead=overheads.mean,
        overhead_interval=overheads.interval(confidence),
        confidence=confidence,
        level=level,
        skip=skip,
        model=model,
        finish=finishes.mean,
        finish_interval=finishes.interval(confidence),
        latency=None if latency is None else float(latency),
    )


def _check_options(per_worker: str, model: str, confidence: float, level: float) -> None:
    if per_worker not in PER_WORKER_CHOICES:
        raise UserError(f"per_worker: must be one of {', '.join(PER_WORKER_CHOICES)}")
    if model not in MODEL_CHOICES:
        raise UserError(f"model: must be one of {', '.join(MODEL_CHOICES)}")
    if not 0 < confidence < 1:
        raise UserError(f"confidence: must be in (0, 1) (got {confidence})")
    if not 0 < level < 1:
        raise UserError(f"level: must be in (0, 1) (got {level})")


def _communication_observed(runs: Sequence[RunObservations]) -> bool:
    """Whether the runs observe their communication (all or none of them may)."""
    with_comm = [run.comm_observed for run in runs]
    if any(with_comm) and not all(with_comm):
        quiet = runs[with_comm.index(False)]
        raise UserError(
            f"{quiet.directory}: its communication is not observed (no shared clock, nothing "
            "injected) but other runs' is; fit them separately"
        )
    return all(with_comm)


def _separable(runs: Sequence[RunObservations]) -> bool:
    """Whether the runs observe the computation and the link delay apart (all or none)."""
    separable = [run.separable for run in runs]
    if any(separable) and not all(separable):
        apart = runs[separable.index(True)]
        raise UserError(
            f"{apart.directory}: a {apart.topology} run observes the computation and the link "
            "delay apart, a flat run only their sum; fit them separately"
        )
    return all(separable)


def _spec_model(runs: Sequence[RunObservations], model: str) -> str:
    """The spec's timing model: ``model``, or for ``auto`` the one the runs allow."""
    # the master's link is read off n copies of the model leaving it, and a worker's off its
    # least contended result: a scattered model (one copy, every worker at once) gives neither
    on_links = [
        run.links and run.one_clock and run.direct and run.distribution == "isend" for run in runs
    ]
    if model == "auto":
        model = "shared-links" if all(on_links) else "master-worker"
    elif model == "shared-links" and not all(on_links):
        other = runs[on_links.index(False)]
        raise UserError(
            f"{other.directory}: not a flat run over real links with one clock whose model went "
            "as copies (runtime.distribution: isend); the shared-links model needs the links' "
            "measured transfers"
        )
    return model


def _homogeneity(
    runs: Sequence[RunObservations], comm: bool, per_worker: str, level: float
) -> tuple[dict[str, Any], bool]:
    """The test of whether the workers differ (``comm``: in their communication too), and
    whether they do at ``level``; a test that cannot be made is reported, and an error only
    with ``per_worker="yes"``."""
    samples = [_sample(pooled(runs, [worker]), comm) for worker in range(runs[0].workers)]
    homogeneity: dict[str, Any]
    try:
        test = compare_groups(samples)
        homogeneity = {"tested": True, **test.as_dict()}
        differ = test.pvalue < level
    except FitError as error:
        if per_worker == "yes":
            raise
        homogeneity = {"tested": False, "reason": str(error)}
        differ = False
    return homogeneity, differ


def _simulated(model: TimingModel, run: RunObservations) -> bool:
    """Whether ``model`` simulates the run's code (its ``check`` accepts it)."""
    try:
        model.check(build(run.scheme, **run.params))
    except ValueError:
        return False
    return True


def _fit_joint(arrays: dict[str, np.ndarray], comm: bool, **options: Any) -> TimesFit:
    """Flat runs: ``X1`` and ``X2`` through their sum, censored together."""
    return fit_times(_sample(arrays, comm), **options)


def _fit_separable(arrays: dict[str, np.ndarray], comm: bool, **options: Any) -> TimesFit:
    """Tree and ring runs: ``X1`` censored at its ``threshold`` alone, ``X2`` complete wherever
    observed, fitted apart (their likelihood factorises), as one ``TimesFit``."""
    # the next model's arrival censors a node: a fixed threshold, not the count rule of a
    # master that waits for its fastest workers (so no iteration labels to replay)
    compute = fit_times(replace(_sample(arrays, False), iteration=None), **options)
    if not comm:
        return compute
    seen = np.isfinite(arrays["comm"])
    link = Sample(
        subsets=arrays["fraction"][seen],  # q X2: X2 scaled like a computation of q subsets
        fraction=np.zeros(int(seen.sum())),
        threshold=np.full(int(seen.sum()), np.inf),
        observed=np.ones(int(seen.sum()), dtype=bool),
        compute=arrays["comm"][seen],
    )
    try:
        link_fit = fit_times(link, **options)
    except FitError as error:
        raise FitError(str(error).replace("compute:", "communication:", 1)) from None
    return TimesFit(
        compute=compute.compute,
        comm=replace(link_fit.compute, name=COMPONENTS[1]),
        loglik=compute.loglik + link_fit.loglik,
        observations=compute.observations,
        censored=compute.censored,
        confidence=compute.confidence,
        bootstrap=compute.bootstrap,
    )


def _replayed(
    fit: TimesFit,
    trees: Sequence[TreeIterations],
    workers: Sequence[int] | None,
    bootstrap: int,
    rng: np.random.Generator,
) -> TimesFit:
    """``fit`` with its computation's KS distance and p-value from ``replay.tree_ks``."""
    compute = fit.compute
    ks, pvalue = tree_ks(
        trees, compute.shift, compute.rate, workers=workers, replicates=bootstrap, rng=rng
    )
    return replace(fit, compute=replace(compute, ks=ks, ks_pvalue=pvalue))


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


def describe(component: ComponentFit, unit: str = "s") -> str:
    """``shift [low, high] + Exp(rate [low, high])`` for printing."""
    s_low, s_high = component.shift_interval
    r_low, r_high = component.rate_interval
    return (
        f"{component.shift:.4g} [{s_low:.4g}, {s_high:.4g}] {unit} + Exp(rate "
        f"{component.rate:.4g} [{r_low:.4g}, {r_high:.4g}] /{unit}), KS {component.ks:.3f} "
        f"(p = {component.ks_pvalue:.3f}, {component.complete} complete)"
    )
