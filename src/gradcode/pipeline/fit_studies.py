"""The workflow's fit studies (config ``fit``): fit runs, recommend a code, run it, compare.

A study names the training runs it calibrates on (``calibrate``: run ids of the config, all flat
or all tree and ring runs, with one number of workers) and the limits of the recommendation.
The workflow (``workflow/rules/fit.smk``) then writes, in the study's folder (``paths.FIT``):

- ``fitted.yaml``: ``gradcode timing fit`` of the calibration runs;
- ``recommend.json``: ``gradcode codes recommend --spec fitted.yaml --n N --json``;
- ``paths.RECOMMENDED_RUN_FILE``: the first calibration run's run file with the
  recommended scheme (``write_recommended_run``, also ``python -m
  gradcode.pipeline.fit_studies``), trained by the workflow's rule ``train`` like every run
  (run id ``<study>/recommended``), so the loop is closed by a measurement.

Validated here, once, at DAG construction: unknown run ids, tree or ring runs, runs of
different sizes, a ``latency`` outside ``gradcode.duration``'s grammar, each a one-line
``ValueError`` naming the study and the key. A study over real links whose calibration runs
are all of one message size cannot fit the links' latency (``gradcode.fit.latency``): it
gives it (``latency``, passed as ``--latency``) or the fit stops the workflow.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from gradcode.atomic import write_atomic
from gradcode.duration import Duration
from gradcode.errors import UserError
from gradcode.pipeline import paths
from gradcode.pipeline.runs import TrainingRuns
from gradcode.runfile.config import parse_config
from gradcode.runfile.plan import Plan, build_plan

#: config key of a study's limits -> ``gradcode codes recommend`` option
LIMIT_OPTIONS = {
    "max_load": "--max-load",
    "max_message": "--max-message",
    "stragglers": "--stragglers",
    "model_kind": "--model-kind",
}


@dataclass(frozen=True)
class FitStudy:
    """One study of config ``fit`` (see the module docstring)."""

    name: str
    calibrate: tuple[str, ...]
    workers: int
    limits: dict[str, Any]
    trials: int
    bootstrap: int
    accept_misfit: bool
    #: the links' one-way latency as set (``--latency``), or ``None``: fitted
    latency: Duration | None = None

    @property
    def folder(self) -> str:
        return paths.FIT.format(study=self.name)

    @property
    def fitted(self) -> str:
        return paths.FIT_FITTED.format(study=self.name)

    @property
    def recommendation(self) -> str:
        return paths.FIT_RECOMMENDATION.format(study=self.name)

    @property
    def recommended_id(self) -> str:
        """The run id of the recommended code's run (its folder: ``paths.RUN``)."""
        return paths.RECOMMENDED_RUN_ID.format(study=self.name)

    @property
    def recommended_run(self) -> str:
        return paths.RECOMMENDED_RUN_FILE.format(study=self.name)

    @property
    def recommended(self) -> str:
        return paths.RECOMMENDED_SUMMARY.format(study=self.name)

    def outputs(self) -> list[str]:
        return [self.fitted, self.recommendation, self.recommended]

    def fit_arguments(self) -> list[str]:
        """Options of ``gradcode timing fit`` beyond the run directories and ``--out``."""
        args = ["--bootstrap", str(self.bootstrap), "--name", self.name]
        if self.latency is not None:
            args += ["--latency", str(self.latency)]
        return args + (["--accept-misfit"] if self.accept_misfit else [])

    def recommend_arguments(self) -> list[str]:
        """Options of ``gradcode codes recommend`` beyond ``--spec``."""
        args = ["--n", str(self.workers), "--trials", str(self.trials)]
        for key, option in LIMIT_OPTIONS.items():
            if key in self.limits:
                args += [option, str(self.limits[key])]
        if self.limits.get("schemes"):
            args += ["--schemes", ",".join(self.limits["schemes"])]
        if self.limits.get("exact_only"):
            args.append("--exact-only")
        return args


def collect_studies(config: Mapping[str, Any], runs: TrainingRuns) -> dict[str, FitStudy]:
    """The studies of config ``fit`` (validated against the config's runs); a study set to
    ``None`` is left out (an overlay config's way to drop one of the base config's: config
    files merge mappings, so leaving it unsaid would keep it)."""
    studies = {}
    for name, entry in config.items():
        if entry is None:
            continue
        where = f"config fit.{name}"
        calibrate = tuple(entry["calibrate"])
        sizes, kinds = set(), set()
        for run in calibrate:
            if run not in runs.runs:
                known = ", ".join(sorted(runs.runs)) or "none"
                raise ValueError(f"{where}.calibrate: no run {run!r} in the config ({known})")
            plan = runs.plan(run)
            kinds.add("flat" if plan.topology.direct else "tree or ring")
            if runs.runs[run][1].get("faults"):
                raise ValueError(
                    f"{where}.calibrate: {run} has faults; calibrate on runs of a healthy cluster"
                )
            sizes.add(plan.workers)
        if len(kinds) > 1:
            raise ValueError(
                f"{where}.calibrate: mixes flat runs and tree or ring runs, which observe the "
                "computation and the link delay apart; a fit reads one kind"
            )
        if len(sizes) > 1:
            raise ValueError(
                f"{where}.calibrate: runs of {sorted(sizes)} workers; a fit is of one cluster size"
            )
        latency = None
        if entry.get("latency") is not None:
            try:
                latency = Duration.parse(entry["latency"], f"{where}.latency")
            except UserError as error:
                raise ValueError(str(error)) from None
        studies[name] = FitStudy(
            name=name,
            calibrate=calibrate,
            workers=sizes.pop(),
            limits=dict(entry.get("limits", {})),
            trials=int(entry.get("trials", 20_000)),
            bootstrap=int(entry.get("bootstrap", 200)),
            accept_misfit=bool(entry.get("accept_misfit", False)),
            latency=latency,
        )
    return studies


def recommended_plan(run_file: str | Path) -> Plan:
    """The plan of a written recommended run (for its resources)."""
    document = yaml.safe_load(Path(run_file).read_text())
    return build_plan(parse_config(document, default_name=str(run_file)))


def write_recommended_run(
    run_file: str | Path, recommendation: str | Path, out: str | Path
) -> None:
    """``run_file`` with the scheme of ``recommendation`` (``gradcode codes recommend
    --json``'s output), named after ``out``'s folder, its results pushed
    (``runtime.collection: push``, as the fit's models predict them)."""
    run = yaml.safe_load(Path(run_file).read_text())
    chosen = json.loads(Path(recommendation).read_text())
    best = chosen.get("best")
    if not best:
        raise UserError(f"{recommendation}: recommends no code (see its ranked and skipped)")
    run["scheme"] = {"name": best["scheme"], "params": best["params"]}
    run["name"] = f"{Path(out).parent.parent.name}/{Path(out).parent.name}"
    run.pop("output", None)
    # the fitted models predict results sent as soon as they are ready (runs that pulled them
    # are not fitted): the recommended code is measured the way it was predicted
    run.setdefault("runtime", {})["collection"] = "push"
    write_atomic(out, yaml.safe_dump(run, sort_keys=False))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m gradcode.pipeline.fit_studies",
        description="write the run file of a fit study's recommended code",
    )
    parser.add_argument("run_file", help="the calibration run's run.yaml")
    parser.add_argument("recommendation", help="gradcode codes recommend --json output")
    parser.add_argument("out", help="the run file to write")
    args = parser.parse_args(argv)
    try:
        write_recommended_run(args.run_file, args.recommendation, args.out)
    except UserError as error:
        print(f"gradcode: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
