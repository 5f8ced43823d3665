"""Rows of the report's comparison table: a paper's number beside the reproduced one.

Every notebook writes its rows with ``write_rows``; the workflow concatenates them. ``kind``
says how the reproduced number was obtained: ``simulation`` (Monte Carlo of the paper's
timing model), ``emulated cluster`` (real MPI ranks on one machine with injected delays),
``emulated network`` (real TCP between MPI ranks over rate-limited links on one machine:
``gradcode cluster``, measurements set beside the ``shared-links`` model's prediction),
``real cluster``, ``exact computation`` (a construction's numbers computed exactly, no
randomness) or ``emulated failure`` (real MPI ranks on one machine, on Open MPI with ULFM,
whose workers are killed with SIGKILL from outside mid-run: the papers count a worker that
never answers as a straggler but measure no failure, so what a run did through the deaths,
finished or stopped, its distance to the serial model and how soon the master knew, is set
beside the paper's claim, mostly a string) or ``emulated attack`` (real MPI ranks on one
machine, chosen workers forging their messages, an omniscient attack emulated at the master:
the run's distance to the honest serial run beside a paper's claim of exactness or
robustness).

Rows made from runs carry the runs' time ``dilation`` (``gradcode.dilation``; 1: none) and
their ``fidelity`` verdict (``gradcode.fidelity``): ``links`` or ``injected delays`` when those
decided the runs' times, ``machine`` when the machine emulating them did for any of the runs
(``gradcode.figures.fidelity.row_fidelity``); empty for rows that no run made.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from gradcode.atomic import atomic_file

KINDS = (
    "simulation",
    "emulated cluster",
    "emulated network",
    "real cluster",
    "exact computation",
    "emulated failure",
    "emulated attack",
)


@dataclass(frozen=True)
class Comparison:
    paper: str
    item: str
    quantity: str
    paper_value: float | str
    reproduced: float | str
    kind: str
    note: str = ""
    #: the runs' time dilation (empty: no run made the row)
    dilation: float | str = ""
    #: what decided the runs' times: links, injected delays or machine (empty: no run)
    fidelity: str = ""

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"comparison kind must be one of {KINDS} (got {self.kind!r})")

    @property
    def difference(self) -> str:
        """Relative difference in percent where both sides are numbers, else empty."""
        if isinstance(self.paper_value, str) or isinstance(self.reproduced, str):
            return ""
        if self.paper_value == 0 or not math.isfinite(self.paper_value):
            return ""
        return f"{100.0 * (self.reproduced - self.paper_value) / abs(self.paper_value):+.2f}%"


FIELDS = (
    "paper",
    "item",
    "quantity",
    "paper_value",
    "reproduced",
    "difference",
    "kind",
    "note",
    "dilation",
    "fidelity",
)


def write_rows(
    path: str | Path, rows: list[Comparison], fidelity: Mapping[str, Any] | None = None
) -> None:
    """Write ``rows`` as CSV with the columns ``FIELDS`` (atomically); ``fidelity``
    (``gradcode.figures.fidelity.row_fidelity`` of the figure's runs) fills the ``dilation``
    and ``fidelity`` of rows that do not say which runs made them."""
    with atomic_file(path, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=FIELDS)
        writer.writeheader()
        for row in rows:
            if fidelity is not None and not row.fidelity:
                row = replace(row, **fidelity)
            record = asdict(row) | {"difference": row.difference}
            for key in ("paper_value", "reproduced"):
                if isinstance(record[key], float):
                    record[key] = f"{record[key]:.6g}"
            writer.writerow(record)
