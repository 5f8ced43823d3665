"""Runs that logged their iterates, read back beside the serial run of the same run file.

A run with ``log: {trajectory: true}`` leaves ``trajectory.npy`` beside its ``summary.json``,
its log and the run file the workflow wrote (``run.yaml``, data at the prepared set). The
failed-workers figures (``gradcode.figures.failures``) and the Byzantine comparison
(``gradcode.figures.byzantine``) both measure such a run against its serial reference
(``gradcode.runfile.reference.serial_trajectory``: no faults, no liars, the exact sum in
partition order); what they add to it differs, so each extends ``TrajectoryRun``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gradcode.runfile.config import RunConfig, load_config
from gradcode.runfile.reference import serial_trajectory
from gradcode.runlogs.log import read_log


class RunOutputError(ValueError):
    """A run's outputs lack what a figure needs (one line naming the file)."""


@dataclass(frozen=True)
class TrajectoryRun:
    """One finished run's outputs and the serial reference's iterates."""

    name: str
    summary: dict[str, Any]
    config: RunConfig
    records: list[dict[str, Any]]
    trajectory: np.ndarray
    reference: np.ndarray

    #: what this kind of run raises on outputs it cannot use (a ``RunOutputError``)
    error = RunOutputError

    @property
    def distance(self) -> np.ndarray:
        """Per completed iteration, the relative distance to the serial reference."""
        return relative_distance(self.trajectory, self.reference, self.error)


def relative_distance(
    trajectory: np.ndarray,
    reference: np.ndarray,
    error: type[RunOutputError] = RunOutputError,
) -> np.ndarray:
    """``max |a_t - b_t| / max |b_t|`` per row ``t`` of the first ``len(trajectory)`` rows."""
    reference = reference[: len(trajectory)]
    if trajectory.shape != reference.shape:
        raise error(
            f"trajectory {trajectory.shape} and reference {reference.shape} differ in shape"
        )
    return np.abs(trajectory - reference).max(axis=1) / np.abs(reference).max(axis=1)


def read_json(path: Path, error: type[RunOutputError] = RunOutputError) -> Any:
    """The JSON file at ``path``; ``error`` naming it when it cannot be read."""
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise error(f"{path}: cannot read ({exc})") from None


def read_outputs(
    summary_path: str | Path, error: type[RunOutputError] = RunOutputError
) -> dict[str, Any]:
    """The fields of ``TrajectoryRun`` for the run whose ``summary.json`` is at
    ``summary_path`` (its other outputs beside it), for a subclass to add its own to."""
    directory = Path(summary_path).parent
    summary = read_json(Path(summary_path), error)
    trajectory_file = directory / "trajectory.npy"
    if not trajectory_file.is_file():
        raise error(f"{trajectory_file}: missing (the run needs log: {{trajectory: true}})")
    trajectory = np.load(trajectory_file)
    config = load_config(directory / "run.yaml")
    return {
        "name": summary["name"].rsplit("/", 1)[-1],
        "summary": summary,
        "config": config,
        "records": read_log(directory),
        "trajectory": trajectory,
        "reference": serial_trajectory(config, iterations=len(trajectory)),
    }
