"""Read the workflow's CSV tables for plotting (no pandas dependency)."""

from __future__ import annotations

import csv
from collections.abc import Iterable
from pathlib import Path


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


def group_by(rows: Iterable[dict], key: str) -> dict[object, list[dict]]:
    """Rows grouped by ``row[key]``, groups in order of first appearance."""
    groups: dict[object, list[dict]] = {}
    for row in rows:
        groups.setdefault(row[key], []).append(row)
    return groups
