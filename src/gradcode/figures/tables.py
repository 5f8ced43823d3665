"""Read the workflow's CSV tables for plotting (no pandas dependency), and reshape their rows."""

from __future__ import annotations

import csv
import json
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any


def _value(text: str) -> float | int | str:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def read_rows(path: str | Path) -> list[dict[str, float | int | str]]:
    """Rows of a CSV file, numbers converted; empty cells stay ``''``."""
    with Path(path).open(newline="") as handle:
        return [
            {key: _value(value) for key, value in row.items()} for row in csv.DictReader(handle)
        ]


def read_sidecar(table: str | Path) -> dict[str, Any]:
    """The JSON sidecar written beside a table (``TABLE.json``: its parameters and metadata)."""
    return json.loads(Path(f"{table}.json").read_text())


def group_by(rows: Iterable[Any], key: str | Callable[[Any], object]) -> dict[object, list]:
    """Rows grouped by ``row[key]`` (or by ``key(row)`` for a function), groups in order of
    first appearance."""
    groups: dict[object, list] = {}
    for row in rows:
        groups.setdefault(key(row) if callable(key) else row[key], []).append(row)
    return groups


def index_by(rows: Iterable[dict], key: str) -> dict[object, dict]:
    """Rows by ``row[key]`` (a later row with the same key replaces an earlier one)."""
    return {row[key]: row for row in rows}


def select(rows: Iterable[dict], **where: object) -> list[dict]:
    """The rows whose columns equal every ``column=value`` given, in order."""
    return [row for row in rows if all(row[column] == value for column, value in where.items())]


def ci_errors(rows: Iterable[dict], column: str = "mean_time") -> list[list[float]]:
    """Error bars from a mean and its confidence interval (``ci_low``, ``ci_high``), as
    matplotlib's ``yerr`` takes them: [distances below, distances above]."""
    rows = list(rows)
    return [
        [row[column] - row["ci_low"] for row in rows],
        [row["ci_high"] - row[column] for row in rows],
    ]


def means(
    rows: Iterable[dict], fields: Mapping[str, str | Callable[[dict], float]]
) -> dict[str, float]:
    """Per field, the mean over ``rows`` of a column (by name) or of ``field(row)``."""
    rows = list(rows)
    return {
        name: sum(field(row) if callable(field) else row[field] for row in rows) / len(rows)
        for name, field in fields.items()
    }
