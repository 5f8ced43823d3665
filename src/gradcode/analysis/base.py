"""The result of an analysis and how it is written (CSV plus JSON sidecar, atomically)."""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gradcode.atomic import write_atomic
from gradcode.jsonable import to_jsonable
from gradcode.sim.table import format_value, sidecar_path

#: receives one human-readable progress line
Progress = Callable[[str], None]


@dataclass(frozen=True)
class Analysis:
    """Rows of one analysis, each a column -> value mapping, plus what the sidecar records.

    ``meta`` should say what was computed, from which paper section, and every parameter
    (``trials`` and ``seed`` are added by ``run_analysis``).
    """

    rows: Sequence[Mapping[str, Any]]
    meta: Mapping[str, Any] = field(default_factory=dict)

    def columns(self) -> list[str]:
        """The union of the rows' columns in first-appearance order."""
        seen: dict[str, None] = {}
        for row in self.rows:
            seen.update(dict.fromkeys(row))
        return list(seen)

    def render_csv(self) -> str:
        names = self.columns()
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(names)
        for row in self.rows:
            writer.writerow([format_value(row.get(name)) for name in names])
        return buffer.getvalue()

    def write(self, path: str | os.PathLike[str]) -> tuple[Path, Path]:
        """Write the CSV and its ``.json`` sidecar; both paths."""
        if not self.rows:
            raise ValueError("an analysis must produce at least one row")
        sidecar = sidecar_path(path)
        write_atomic(sidecar, json.dumps(to_jsonable(dict(self.meta)), indent=2) + "\n")
        write_atomic(path, self.render_csv())
        return Path(path), sidecar


def read_analysis(path: str | os.PathLike[str]) -> list[dict[str, str]]:
    """Rows of a written analysis table, as strings."""
    with open(path, encoding="utf-8", newline="") as stream:
        return list(csv.DictReader(stream))
