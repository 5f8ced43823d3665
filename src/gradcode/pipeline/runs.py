"""The training runs a workflow config asks for: run files and experiments, validated.

A run file's id is its stem; an experiment's runs are ``<experiment>/<run>``. Every run is
parsed and planned (scheme, topology, MPI ranks) here, at DAG construction, so a bad run
fails before any job starts, with an error naming the config key, the file and the run.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gradcode.runfile.config import ConfigError, parse_config
from gradcode.runfile.experiment import load_experiment
from gradcode.runfile.plan import Plan, build_plan
from gradcode.yamlfile import read_yaml

#: the data keys a workflow run may set (the workflow prepares the data itself)
DATA_KEYS = ("dataset", "variant", "trim", "partition_seed")


@dataclass
class TrainingRuns:
    """``runs``: id -> (source file, run document); ``ranks``: id -> MPI ranks;
    ``experiments``: name -> its run ids in file order; ``experiment_files``: name -> file."""

    runs: dict[str, tuple[str, dict[str, Any]]] = field(default_factory=dict)
    ranks: dict[str, int] = field(default_factory=dict)
    experiments: dict[str, list[str]] = field(default_factory=dict)
    experiment_files: dict[str, str] = field(default_factory=dict)
    _plans: dict[str, Plan] = field(default_factory=dict, repr=False)

    def add(
        self, run_id: str, source: str, document: Mapping[str, Any], ranks: int, where: str
    ) -> None:
        if run_id in self.runs:
            raise ValueError(f"{where}: run {run_id!r} is defined twice")
        data = document["data"]
        extra = sorted(set(data) - set(DATA_KEYS))
        if "dataset" not in data or extra:
            raise ValueError(
                f"{where}: data must name dataset and variant only (prepared by the workflow); "
                f"got {sorted(data)}"
            )
        self.ranks[run_id] = ranks
        self.runs[run_id] = (source, dict(document))

    def plan(self, run_id: str) -> Plan:
        """The plan (scheme, topology, workers) of run ``run_id``, built once."""
        if run_id not in self._plans:
            document = self.runs[run_id][1]
            self._plans[run_id] = build_plan(parse_config(document, default_name=run_id))
        return self._plans[run_id]

    def plain_runs(self) -> list[str]:
        """The ids of run files (not of experiments), sorted."""
        return sorted(run for run in self.runs if "/" not in run)


def collect_runs(
    run_files: Sequence[str], experiment_files: Sequence[str], root: str | Path
) -> TrainingRuns:
    """The runs of config ``train.runs`` and ``train.experiments`` (paths relative to ``root``,
    the repository); ``ValueError`` naming the config key, file and run on any problem."""
    found = TrainingRuns()
    for index, path in enumerate(run_files):
        where = f"config train.runs[{index}] ({path})"
        source = str(Path(root, path))
        try:
            document = read_yaml(source, ConfigError)
            plan = build_plan(parse_config(document, default_name=Path(path).stem))
        except ConfigError as error:
            raise ValueError(f"{where}: {error}") from None
        found.add(Path(path).stem, source, document, plan.world_size, where)
    for index, path in enumerate(experiment_files):
        where = f"config train.experiments[{index}] ({path})"
        source = str(Path(root, path))
        try:
            experiment = load_experiment(source)
        except ConfigError as error:
            raise ValueError(f"{where}: {error}") from None
        if experiment.name in found.experiments or experiment.name in found.runs:
            raise ValueError(f"{where}: experiment name {experiment.name!r} is used twice")
        found.experiments[experiment.name] = []
        found.experiment_files[experiment.name] = source
        for run, document in experiment.runs.items():
            run_id = f"{experiment.name}/{run}"
            found.add(run_id, source, document, experiment.world_sizes[run], f"{where} runs.{run}")
            found.experiments[experiment.name].append(run_id)
    return found
