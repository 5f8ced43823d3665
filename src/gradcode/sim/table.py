"""Result tables: one row per scheme configuration, written as CSV plus a JSON sidecar.

Columns, in order: ``label``, ``scheme``, the scheme's parameters by name (``code.params()``,
in order of first appearance over the rows, plus ``k`` when it is not a parameter),
``workers``, ``trials``, ``mean_time``, ``ci_low``, ``ci_high``, ``std_time``, then
``reference_time`` (the paper's value, when the spec gives one), the communication load
``messages`` (mean number received by the master; for trees by all parents; for Ring-AllReduce
by all workers), ``vectors`` (the same in units of one full-length gradient, ``messages / m``)
and ``floats`` (``messages * ceil(length / m)``, when the spec gives the gradient ``length``),
then model-specific columns (e.g. Theorem 2's bounds). A cell that does not apply is empty.

Everything is deterministic for given inputs: floats are printed with 10 significant digits,
lists as compact JSON, no timestamps. Files are written to a temporary name in the same
folder and renamed, so a reader never sees a partial table.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from gradcode.atomic import write_atomic
from gradcode.jsonable import to_jsonable

#: fixed columns; a scheme parameter may not use these names
FIXED = (
    "label",
    "scheme",
    "workers",
    "trials",
    "mean_time",
    "ci_low",
    "ci_high",
    "std_time",
    "reference_time",
    "messages",
    "vectors",
    "floats",
)


@dataclass(frozen=True)
class ResultRow:
    """The estimate for one scheme configuration (see the module docstring for columns)."""

    label: str
    scheme: str
    params: dict[str, Any]
    workers: int
    trials: int
    mean_time: float
    ci_low: float
    ci_high: float
    std_time: float
    messages: float
    vectors: float
    floats: float | None = None
    reference_time: float | None = None
    extras: dict[str, float] = field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        """Column -> value, in column order (columns that do not apply are left out)."""
        clash = sorted(set(self.params) & set(FIXED))
        if clash:
            raise ValueError(f"{self.scheme}: parameter {clash[0]!r} clashes with a column name")
        out: dict[str, Any] = {"label": self.label, "scheme": self.scheme, **self.params}
        out |= {
            "workers": self.workers,
            "trials": self.trials,
            "mean_time": self.mean_time,
            "ci_low": self.ci_low,
            "ci_high": self.ci_high,
            "std_time": self.std_time,
        }
        if self.reference_time is not None:
            out["reference_time"] = self.reference_time
        out |= {"messages": self.messages, "vectors": self.vectors}
        if self.floats is not None:
            out["floats"] = self.floats
        return out | self.extras


def columns(rows: Sequence[ResultRow]) -> list[str]:
    """The union of the rows' columns, in first-appearance order with fixed columns placed."""
    seen: dict[str, None] = {}
    for row in rows:
        seen.update(dict.fromkeys(row.record()))
    order = list(seen)
    params = [c for c in order if c not in FIXED and not _is_extra(c, rows)]
    extras = [c for c in order if _is_extra(c, rows)]
    fixed = [c for c in FIXED if c in seen]
    return fixed[:2] + params + fixed[2:] + extras


def _is_extra(column: str, rows: Sequence[ResultRow]) -> bool:
    return any(column in row.extras for row in rows)


def format_value(value: Any) -> str:
    """One CSV cell: ints as is, floats with 10 significant digits, lists as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | np.integer):
        return str(int(value))
    if isinstance(value, float | np.floating):
        return format(float(value), ".10g")
    if isinstance(value, str):
        return value
    return json.dumps(to_jsonable(value), separators=(",", ":"))


def render_csv(rows: Sequence[ResultRow]) -> str:
    """The table as CSV text (LF line ends)."""
    names = columns(rows)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(names)
    for row in rows:
        record = row.record()
        writer.writerow([format_value(record.get(name)) for name in names])
    return buffer.getvalue()


def sidecar_path(csv_path: str | os.PathLike[str]) -> Path:
    """Where the JSON description of ``FILE.csv`` goes: ``FILE.csv.json``."""
    path = Path(csv_path)
    return path.with_name(path.name + ".json")


def write_table(
    path: str | os.PathLike[str], rows: Sequence[ResultRow], meta: Mapping[str, Any]
) -> tuple[Path, Path]:
    """Write the CSV and its JSON sidecar (``meta``, e.g. description and model); both paths."""
    sidecar = sidecar_path(path)
    write_atomic(sidecar, json.dumps(to_jsonable(meta), indent=2, sort_keys=False) + "\n")
    write_atomic(path, render_csv(rows))
    return Path(path), sidecar


def read_csv(path: str | os.PathLike[str]) -> list[dict[str, str]]:
    """The rows of a table written by ``write_table``, as strings (for tests and scripts)."""
    with open(path, encoding="utf-8", newline="") as stream:
        return list(csv.DictReader(stream))
