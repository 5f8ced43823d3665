"""What every node of a tree code did in each iteration: ``nodes.jsonl``, for the timing fit.

The master of a tree run hears only its own children, and a parent forwards one reduced message,
so ``log.jsonl`` cannot say how long a deeper node computed, or a node whose message its parent
no longer needed. Every tree node therefore keeps its own rows (``NODE_FIELDS``), one per
iteration it began, and sends them with its ``DONE`` report; rank 0 writes them as
``nodes.jsonl``, one line per iteration::

    {"iteration": t, "nodes": [{"worker": v, "complete": true, "work": ..., "elapsed": ...,
                                "budget": ..., "injected_comm": ..., "width": ...}, ...]}

A row is written when the iteration's work ends for the node: a newer model (or ``STOP``)
arrived, ``budget`` seconds after this one. By then its own partials were done (``complete``)
or not, so the computation is observed under a known censoring time:

- ``work``: seconds of the node's own computation (measured, plus the injected start and compute
  delays), when ``complete``;
- ``elapsed``: seconds from the model's arrival until its own partials were done (``complete``)
  or until the newer model came (``elapsed = budget``: the work would have taken longer, a
  right-censored observation);
- ``injected_comm``: the link delay the straggler model drew for its message (seconds, for its
  ``width`` numbers), drawn when the iteration began, so known whether or not it was served.

A node that never answers (persistent straggler, silent) has no rows. On resume the lines of
iterations before the checkpoint are kept from the previous file, as ``log.jsonl``'s are.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from gradcode.atomic import write_atomic
from gradcode.jsonable import to_jsonable

NODES_FILE = "nodes.jsonl"

NODE_FIELDS = (
    "iteration",
    "worker",
    "complete",
    "work",
    "elapsed",
    "budget",
    "injected_comm",
    "width",
)
F = len(NODE_FIELDS)


class NodeLog:
    """One node's rows, encoded into (and decoded from) a float64 tail of its ``DONE`` report."""

    def __init__(self, worker: int) -> None:
        self.worker = worker
        self.rows: list[tuple[float, ...]] = []

    def add(
        self,
        iteration: int,
        *,
        complete: bool,
        work: float,
        elapsed: float,
        budget: float,
        injected_comm: float,
        width: int,
    ) -> None:
        self.rows.append(
            (iteration, self.worker, float(complete), work, elapsed, budget, injected_comm, width)
        )

    def encode(self) -> np.ndarray:
        """``[rows, row 0 ..., row 1 ..., ...]``."""
        flat = np.asarray(self.rows, dtype=np.float64).reshape(-1)
        return np.concatenate([[float(len(self.rows))], flat])


def decode(tail: np.ndarray) -> list[dict[str, Any]]:
    """The rows ``NodeLog.encode`` wrote (an empty ``tail``: none)."""
    if tail.size == 0:
        return []
    count = int(tail[0])
    rows = np.asarray(tail[1 : 1 + count * F]).reshape(count, F)
    return [
        {
            "iteration": int(row[0]),
            "worker": int(row[1]),
            "complete": bool(row[2]),
            "work": float(row[3]),
            "elapsed": float(row[4]),
            "budget": float(row[5]),
            "injected_comm": float(row[6]),
            "width": int(row[7]),
        }
        for row in rows
    ]


def write_nodes(directory: Path, rows: list[dict[str, Any]], keep_below: int) -> None:
    """``nodes.jsonl``: the previous file's lines of iterations ``< keep_below`` (a resumed run),
    then ``rows`` grouped by iteration (``>= keep_below``), every line atomically at once."""
    path = directory / NODES_FILE
    lines: list[str] = []
    if keep_below > 0 and path.exists():
        for line in path.read_text().splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                break
            if isinstance(record, dict) and record.get("iteration", keep_below) < keep_below:
                lines.append(line)
    by_iteration: dict[int, list[dict[str, Any]]] = {}
    for row in rows:
        if row["iteration"] >= keep_below:
            entry = {key: value for key, value in row.items() if key != "iteration"}
            by_iteration.setdefault(row["iteration"], []).append(entry)
    for t in sorted(by_iteration):
        nodes = sorted(by_iteration[t], key=lambda entry: entry["worker"])
        record = to_jsonable({"iteration": t, "nodes": nodes}, finite_only=True)
        lines.append(json.dumps(record, separators=(",", ":")))
    write_atomic(path, "".join(line + "\n" for line in lines))


def read_nodes(directory: str | Path) -> dict[int, list[dict[str, Any]]]:
    """``nodes.jsonl`` of ``directory`` by iteration (``{}`` without the file)."""
    path = Path(directory) / NODES_FILE
    if not path.exists():
        return {}
    found: dict[int, list[dict[str, Any]]] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            record = json.loads(line)
            found[int(record["iteration"])] = list(record["nodes"])
    return found
