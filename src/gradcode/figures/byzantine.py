"""Runs of the Byzantine comparison, as its figure and comparison rows read them.

Every run of the comparison's experiments (``config/experiments/byzantine.yaml`` in the
default workflow, ``byzantine-grid.yaml`` under ``config/byzantine.yaml``) trains one
*defence* under one attack with ``a`` liars: a code that corrects adversaries, an aggregable
code with a robust ``aggregator``, or none at all (``adversaries.undefended``). From its
outputs (``summary.json``, ``log.jsonl``, ``trajectory.npy``, the workflow's ``run.yaml``)
and the honest serial run of the same run file (``gradcode.runfile.reference``: no liars, no
aggregator, the exact sum in partition order) ``measure`` makes one row of the comparison's
table (``COLUMNS``):

- ``distance_final``, ``distance_max``: the relative distance of the iterates to the honest
  serial run, ``max |theta_t - theta*_t| / max |theta*_t|``, after the last iteration and
  the largest over iterations; ``exact``: ``distance_max <= EXACT_TOLERANCE`` (round-off);
- ``loss``, ``auc``: the run's final training loss and test AUC (its summary), beside the
  honest serial run's (``loss_honest``, ``auc_honest``, computed here on the same data);
- ``gradient_error``: the median over iterations of the relative error of the gradient sum
  the master stepped along (recovered from two iterates, ``gradient_errors``), the
  aggregators' error in the units of the exact sum;
- ``iteration_ms``, ``decode_ms``: medians over iterations of the logged times (the decode
  time includes an aggregator's and an emulated omniscient attack's);
- ``load_max``, ``load_mean``: partitions per worker; ``message_bytes``: the median message;
- ``liars_named``: the fraction of iterations whose logged ``adversaries`` are exactly the
  liars (empty where the defence names nobody).

The defence's label (``defence_of``) is read from the run file, never from the run's name:
the scheme, ``+`` the aggregator, or ``+none`` for an undefended run.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gradcode.atomic import atomic_file
from gradcode.figures.failures import gradient_errors
from gradcode.figures.trajectories import RunOutputError, TrajectoryRun, read_outputs
from gradcode.runfile.config import RunConfig
from gradcode.runfile.dataset import load_training_data
from gradcode.runfile.plan import build_plan

#: the largest relative distance to the honest serial run still called exact: round-off of
#: 20 iterations of 50 features is 1e-15 to 1e-13; a liar's forgery that got through is
#: many orders of magnitude more
EXACT_TOLERANCE = 1e-9

#: the table's columns, in order (module docstring)
COLUMNS = (
    "run",
    "defence",
    "scheme",
    "aggregator",
    "attack",
    "a",
    "workers",
    "iterations",
    "distance_final",
    "distance_max",
    "exact",
    "loss",
    "loss_honest",
    "auc",
    "auc_honest",
    "gradient_error",
    "iteration_ms",
    "decode_ms",
    "load_max",
    "load_mean",
    "message_bytes",
    "liars_named",
)


class ByzantineRunError(RunOutputError):
    """A run's outputs lack what the comparison needs (one line naming the file)."""


@dataclass(frozen=True)
class ByzantineRun(TrajectoryRun):
    """One run of the comparison and its honest serial reference (module docstring)."""

    #: the honest serial run's final training loss and test AUC
    honest: dict[str, float]

    error = ByzantineRunError

    @property
    def defence(self) -> str:
        return defence_of(self.config)

    def median_ms(self, field: str) -> float:
        """The median over iterations of a logged time ``field`` (seconds), in ms."""
        values = [record[field] for record in self.records if field in record]
        return 1e3 * float(np.median(values)) if values else float("nan")


def defence_of(config: RunConfig) -> str:
    """The defence a run file trains: ``scheme``, ``scheme+aggregator`` or ``scheme+none``."""
    if config.aggregator is not None:
        return f"{config.scheme.name}+{config.aggregator.name}"
    if config.adversaries.undefended:
        return f"{config.scheme.name}+none"
    return config.scheme.name


def _honest_metrics(config: RunConfig, theta: np.ndarray) -> dict[str, float]:
    """The final loss and test AUC of the honest serial run's last iterate ``theta``."""
    plan = build_plan(config)
    data = load_training_data(config.data, plan.partitions, config.model.kind)
    model = config.model.build()
    loss = model.loss(data.X_train, data.y_train, theta, config.model.l2_value(data.rows))
    metrics = model.metrics(theta, None, data.X_test, data.y_test, data.theta_star)
    return {"loss": loss, "auc": float(metrics.get("auc", float("nan")))}


def read_byzantine_run(summary_path: str | Path) -> ByzantineRun:
    """The run whose ``summary.json`` is at ``summary_path`` (its other outputs beside it)."""
    outputs = read_outputs(summary_path, ByzantineRunError)
    config = outputs["config"]
    if not config.adversaries.workers:
        run_file = Path(summary_path).parent / "run.yaml"
        raise ByzantineRunError(f"{run_file}: no adversaries.workers (no liars)")
    return ByzantineRun(**outputs, honest=_honest_metrics(config, outputs["reference"][-1]))


def _liars_named(run: ByzantineRun) -> float | None:
    """The fraction of iterations whose logged ``adversaries`` are exactly the liars; None
    where no iteration logs any (a defence that names nobody)."""
    logged = [record["adversaries"] for record in run.records if "adversaries" in record]
    if not logged:
        return None
    liars = sorted(run.config.adversaries.workers)
    return sum(sorted(named) == liars for named in logged) / len(run.records)


def measure(run: ByzantineRun) -> dict[str, Any]:
    """The run's row of the comparison's table (``COLUMNS``, module docstring)."""
    code = build_plan(run.config).code
    load = [len(code.partitions(worker)) for worker in range(code.n)]
    errors, norms = gradient_errors(run)
    distance = run.distance
    final = run.summary.get("final", {})
    sizes = [m["bytes"] for record in run.records for m in record.get("messages", ())]
    adversaries = run.config.adversaries
    return {
        "run": run.name,
        "defence": run.defence,
        "scheme": run.config.scheme.name,
        "aggregator": run.config.aggregator.name if run.config.aggregator else "",
        "attack": adversaries.plan().attack().name,
        "a": len(adversaries.workers),
        "workers": code.n,
        "iterations": len(run.trajectory),
        "distance_final": float(distance[-1]),
        "distance_max": float(distance.max()),
        "exact": bool(distance.max() <= EXACT_TOLERANCE),
        "loss": float(final.get("loss", float("nan"))),
        "loss_honest": run.honest["loss"],
        "auc": float(final.get("auc", float("nan"))),
        "auc_honest": run.honest["auc"],
        "gradient_error": float(np.median(errors / norms)),
        "iteration_ms": run.median_ms("iteration_time"),
        "decode_ms": run.median_ms("decode_time"),
        "load_max": max(load),
        "load_mean": float(np.mean(load)),
        "message_bytes": float(np.median(sizes)) if sizes else float("nan"),
        "liars_named": _liars_named(run),
    }


def comparison_table(summaries: list[str | Path]) -> list[dict[str, Any]]:
    """One row per run (``measure``), in the order given."""
    return [measure(read_byzantine_run(path)) for path in summaries]


def write_table(path: str | Path, rows: list[dict[str, Any]]) -> None:
    """Write the rows as CSV with the columns ``COLUMNS`` (atomically; None as empty)."""
    with atomic_file(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        for row in rows:
            writer.writerow({key: "" if row[key] is None else row[key] for key in COLUMNS})
