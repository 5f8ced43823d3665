"""Per-run outputs written by rank 0: ``log.jsonl``, ``summary.json``, ``model.npy``.

``log.jsonl`` has one JSON object per iteration (see ``gradcode.train.record`` for the fields);
on resume the lines of iterations after the checkpoint are dropped (the killed run may have
logged a few more) and logging continues, so the file describes exactly one trajectory. The
lines before the checkpoint come from the checkpoint's own copy of the log when it has one, so
they survive the removal of ``log.jsonl`` between the two sessions.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from gradcode.atomic import atomic_file, write_atomic
from gradcode.jsonable import to_jsonable

LOG_FILE = "log.jsonl"
SUMMARY_FILE = "summary.json"
MODEL_FILE = "model.npy"
TRAJECTORY_FILE = "trajectory.npy"
RANKS_FILE = "ranks.json"


class RunLog:
    """Append-only JSON-lines log that keeps only iterations ``< keep_below`` on open, taken
    from ``restored`` (a checkpoint's copy of the log) if given, else from the file."""

    def __init__(self, directory: Path, keep_below: int, restored: str | None = None) -> None:
        self.path = directory / LOG_FILE
        kept: list[str] = []
        previous = restored
        if previous is None and self.path.exists():
            previous = self.path.read_text()
        if previous is not None:
            for line in previous.splitlines():
                try:
                    record = json.loads(line)
                except json.JSONDecodeError:
                    break  # a line torn by a kill: everything after it is lost anyway
                if isinstance(record, dict) and record.get("iteration", math.inf) < keep_below:
                    kept.append(line)
        text = "".join(line + "\n" for line in kept)
        write_atomic(self.path, text)
        self._handle = open(self.path, "a")

    def write(self, record: dict[str, Any]) -> None:
        self._handle.write(
            json.dumps(to_jsonable(record, finite_only=True), separators=(",", ":")) + "\n"
        )
        self._handle.flush()

    def text(self) -> str:
        """Everything logged so far (flushed at every line)."""
        return self.path.read_text()

    def close(self) -> None:
        self._handle.close()


def read_log(directory: str | Path) -> list[dict[str, Any]]:
    """The records of ``directory/log.jsonl``."""
    path = Path(directory) / LOG_FILE
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def write_json(path: Path, payload: dict[str, Any]) -> None:
    text = json.dumps(to_jsonable(payload, finite_only=True), indent=2, sort_keys=False) + "\n"
    write_atomic(path, text)


def write_array(path: Path, array: np.ndarray) -> None:
    with atomic_file(path, "wb") as handle:
        np.save(handle, array)
