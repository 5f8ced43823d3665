"""Runs that lost workers on purpose (``faults.kill``, ``faults.lose_node``), as the
failed-workers figures read them.

A run of ``config/experiments/failed-workers.yaml`` (or of ``cluster/node-lost.yaml``) leaves,
beside its ``summary.json`` (``failures``, ``failed_workers``, ``stopped`` when its code could
not go on), the log, its iterates (``trajectory.npy``), its run file (``run.yaml``, data at the
prepared set) and the record of what was done to it: ``gradcode train inject``'s of the kills
(``kills.json``) or ``gradcode cluster lose``'s of the lost node (``lost.json``). From them:

- the distance to the serial reference per iteration: ``max |theta_t - theta*_t| / max
  |theta*_t|``, ``theta*`` the uncoded run computed serially
  (``gradcode.runfile.reference.serial_trajectory``): round-off for an exact code through its
  failures, the approximation's drift for an approximate one;
- the detection time of every failure: the master's ``failures[].monotonic`` minus the kill's
  or the node loss's (one ``time.perf_counter`` clock for every process of one kernel);
- for a run on gradient descent with a constant step, the error of the gradient sum each
  iteration decoded (recovered from two iterates, ``theta_t = theta_{t-1} - step (sum / N + 2
  l2 theta_{t-1})``) and the exact sum's norm, to set beside the decoder's own
  ``error_estimate`` where the code logs one (an approximate code).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gradcode.figures.trajectories import RunOutputError, TrajectoryRun, read_json, read_outputs
from gradcode.pipeline.paths import KILLS_FILE, LOST_FILE
from gradcode.runfile.config import RunConfig
from gradcode.runfile.dataset import load_training_data
from gradcode.runfile.plan import build_plan
from gradcode.runfile.reference import exact_sum

#: how a loss happened, as the figure says it
HOW = {
    "inject": "killed (SIGKILL)",
    "kill": "on a node lost (every process killed)",
    "link": "on a node cut off for good (link down)",
}


class FailureRunError(RunOutputError):
    """A run's outputs lack what the figure needs (one line naming the file)."""


@dataclass(frozen=True)
class FailedRun(TrajectoryRun):
    """One run through its failures (see the module docstring)."""

    #: every failure caused on purpose: worker, iteration aimed at, ``monotonic`` (the moment
    #: on the runtime's clock), ``how`` (a key of ``HOW``), ``node`` for a lost node
    losses: list[dict[str, Any]]

    error = FailureRunError

    @property
    def stopped(self) -> dict[str, Any] | None:
        """``summary.json``'s ``stopped``: where and why the code could not go on."""
        return self.summary.get("stopped")

    @property
    def iteration_times(self) -> np.ndarray:
        return np.array([record["iteration_time"] for record in self.records])

    def detection_seconds(self) -> dict[int, float]:
        """Failed worker -> seconds from its loss to the master's record of the failure."""
        killed = {loss["worker"]: loss["monotonic"] for loss in self.losses}
        return {
            failure["worker"]: failure["monotonic"] - killed[failure["worker"]]
            for failure in self.summary.get("failures", [])
            if failure["worker"] in killed
        }

    def error_estimates(self) -> np.ndarray | None:
        """The decoder's ``error_estimate`` per iteration (absolute, like the decoded sum's
        error), or None when the code logs none."""
        values = [record.get("error_estimate") for record in self.records]
        if all(value is None for value in values):
            return None
        return np.array([np.nan if value is None else value for value in values])


def read_failed_run(summary_path: str | Path) -> FailedRun:
    """The run whose ``summary.json`` is at ``summary_path`` (its other outputs beside it)."""
    outputs = read_outputs(summary_path, FailureRunError)
    directory = Path(summary_path).parent
    return FailedRun(**outputs, losses=read_losses(directory, outputs["config"]))


def read_losses(directory: Path, config: RunConfig) -> list[dict[str, Any]]:
    """The failures a run caused, from the record beside it: ``kills.json`` (workers killed,
    ``gradcode train inject``) or ``lost.json`` (a node lost, ``gradcode cluster lose``)."""
    loss = config.faults.lose_node if config.faults is not None else None
    if loss is None:
        kills = read_json(directory / KILLS_FILE, FailureRunError)["kills"]
        return [{**kill, "how": "inject"} for kill in kills]
    record = read_json(directory / LOST_FILE, FailureRunError)
    if record.get("lost") is None:
        raise FailureRunError(
            f"{directory / LOST_FILE}: {record['node']} was never lost (the run ended first)"
        )
    return [
        {
            "worker": loss.worker,
            "iteration": loss.iteration,
            "monotonic": record["lost"]["clock"],
            "how": record["how"],
            "node": record["node"],
        }
    ]


def gradient_errors(run: TrajectoryRun) -> tuple[np.ndarray, np.ndarray]:
    """Per iteration, ``||decoded sum - exact sum||`` and ``||exact sum||`` at the iterate the
    workers were sent (gradient descent with a constant step only, since the decoded sum is
    recovered from two iterates; ``FailureRunError`` otherwise). The first over the second is
    the decoding's relative error; the code's ``error_estimate`` estimates the first."""
    config = run.config
    step = config.optimizer.step
    if config.optimizer.kind != "gd" or not isinstance(step, int | float):
        raise run.error(
            f"{run.name}: the decoded gradient is recovered only under gd with a constant "
            f"step (optimizer {config.optimizer.kind}, step {step!r})"
        )
    plan = build_plan(config)
    data = load_training_data(config.data, plan.partitions, config.model.kind)
    model = config.model.build()
    l2 = config.model.l2_value(data.rows)
    parts = [data.part(p) for p in range(plan.partitions)]
    errors, norms = np.empty(len(run.trajectory)), np.empty(len(run.trajectory))
    previous = model.initial_parameters(data.features, config.seed)
    for t, theta in enumerate(run.trajectory):
        decoded = data.rows * ((previous - theta) / step - 2.0 * l2 * previous)
        exact = exact_sum(model, parts, plan.code, previous)
        errors[t], norms[t] = np.linalg.norm(decoded - exact), np.linalg.norm(exact)
        previous = theta
    return errors, norms
