"""Training runs as figures read them: the summary plus the logged metric points."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gradcode.figures.style import STAND_IN_NOTE


@dataclass(frozen=True)
class Run:
    """One finished run: ``summary.json`` and the log records that carry metrics."""

    path: Path
    summary: dict[str, Any]
    points: list[dict[str, Any]]

    @property
    def short_name(self) -> str:
        """The run's name inside its experiment (``n10-uncoded`` of ``ye-abbe-amazon/...``)."""
        return self.summary["name"].rsplit("/", 1)[-1]

    @property
    def params(self) -> dict[str, Any]:
        return self.summary["scheme_params"]

    @property
    def stand_in(self) -> bool:
        return bool(self.summary["data"].get("stand_in"))

    @property
    def time_unit(self) -> float:
        return float(self.summary["config"]["stragglers"].get("time_unit", 1.0))

    @property
    def iteration_time(self) -> float:
        """The measured mean time per iteration (s)."""
        return self.summary["iteration_time"]["mean"]

    def series(self, metric: str) -> tuple[list[float], list[float]]:
        """(training time in seconds, metric) at every logged metric point."""
        rows = [row for row in self.points if metric in row]
        return [row["time"] for row in rows], [row[metric] for row in rows]

    def defined(self, metric: str) -> list[dict[str, Any]]:
        """The metric points where ``metric`` has a value (it is logged as null where it is
        undefined, e.g. eq. (9)'s relative error before the second step)."""
        return [row for row in self.points if row.get(metric) is not None]


def read_run(summary_path: str | Path) -> Run:
    path = Path(summary_path)
    summary = json.loads(path.read_text())
    points = []
    with (path.parent / "log.jsonl").open() as log:
        for line in log:
            record = json.loads(line)
            if "loss" in record:  # iterations where metrics were evaluated
                points.append({k: v for k, v in record.items() if k != "messages"})
    return Run(path, summary, points)


def read_runs(paths: str) -> list[Run]:
    """Runs from the comma-separated summary paths the workflow passes to a notebook."""
    return [read_run(path) for path in paths.split(",") if path]


def legend_label(run: Run) -> str:
    """``NAME: SCHEME on DATASET``, with ``(STAND-IN data)`` for a run on stand-in data."""
    tag = " (STAND-IN data)" if run.stand_in else ""
    summary = run.summary
    return f"{summary['name']}: {summary['scheme']} on {summary['data']['dataset']}{tag}"


def stand_in_suffix(runs: list[Run]) -> str:
    """``"; STAND-IN DATA (...)"`` to end a note about ``runs`` if any used stand-in data,
    else empty."""
    return f"; {STAND_IN_NOTE}" if any(run.stand_in for run in runs) else ""


def data_note(runs: list[Run]) -> str:
    """What the runs trained on, with the stand-in label when any used stand-in data."""
    names = sorted({run.summary["data"]["dataset"] for run in runs})
    note = ", ".join(names)
    if any(run.stand_in for run in runs):
        note += f" - {STAND_IN_NOTE}"
    return note
