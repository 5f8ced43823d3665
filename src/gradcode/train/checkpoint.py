"""Checkpoints: everything a run needs to continue exactly, written atomically by rank 0.

``OUT/checkpoints/ckpt-<completed>.npz`` holds the number of completed iterations, the
optimizer state (every array, so the resumed run continues bit for bit), the previous iterate
(for the relative-error metric), the training time so far, the lines of ``log.jsonl`` so far
and, with ``log.trajectory``, every iterate. Nothing else is needed: injected delays and
adversary noise are functions of ``(seed, iteration)``, not of a generator's history; and the
log's copy makes a resumed run's log whole even when ``log.jsonl`` itself was removed (as
Snakemake removes the outputs of a failed job before retrying it). Files are written beside
their final name, fsynced and renamed, so a ``kill -9`` at any instant leaves either the old
or the new checkpoint, never a torn one; the newest ``keep`` are kept.
"""

from __future__ import annotations

import json
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gradcode.atomic import atomic_file
from gradcode.runfile.config import ConfigError

PATTERN = re.compile(r"ckpt-(\d{8})\.npz")
STATE_PREFIX = "state__"


@dataclass
class Checkpoint:
    completed: int
    state: dict[str, np.ndarray]
    previous: np.ndarray | None
    train_time: float
    fingerprint: str
    trajectory: np.ndarray | None = None
    extra: dict[str, Any] | None = None
    #: the text of ``log.jsonl`` up to ``completed`` (``None`` in checkpoints written before
    #: checkpoints carried it)
    log: str | None = None


def save(directory: Path, checkpoint: Checkpoint, keep: int) -> Path:
    """Write ``checkpoint`` atomically and prune all but the newest ``keep``; its path."""
    directory.mkdir(parents=True, exist_ok=True)
    meta = {
        "completed": checkpoint.completed,
        "train_time": checkpoint.train_time,
        "fingerprint": checkpoint.fingerprint,
        "extra": checkpoint.extra or {},
    }
    arrays: dict[str, np.ndarray] = {
        f"{STATE_PREFIX}{name}": np.asarray(value) for name, value in checkpoint.state.items()
    }
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    if checkpoint.previous is not None:
        arrays["previous"] = checkpoint.previous
    if checkpoint.trajectory is not None:
        arrays["trajectory"] = checkpoint.trajectory
    if checkpoint.log is not None:
        arrays["log"] = np.frombuffer(checkpoint.log.encode(), dtype=np.uint8)
    final = directory / f"ckpt-{checkpoint.completed:08d}.npz"
    with atomic_file(final, "wb", durable=True) as handle:
        np.savez(handle, **arrays)
    for old in sorted(_listed(directory))[:-keep]:
        old[1].unlink(missing_ok=True)
    return final


def _listed(directory: Path) -> list[tuple[int, Path]]:
    if not directory.is_dir():
        return []
    found = []
    for path in directory.iterdir():
        match = PATTERN.fullmatch(path.name)
        if match:
            found.append((int(match.group(1)), path))
    return sorted(found)


def load_latest(directory: Path, fingerprint: str) -> Checkpoint | None:
    """The newest readable checkpoint in ``directory`` (``None`` if there is none).

    Raises ``ConfigError`` when it was written by a different configuration.
    """
    for _, path in reversed(_listed(directory)):
        try:
            checkpoint = _load(path)
        except (OSError, ValueError, KeyError, zipfile.BadZipFile):
            continue  # unreadable: fall back to the one before (cannot happen with rename)
        if checkpoint.fingerprint != fingerprint:
            raise ConfigError(
                f"checkpoint: {path} was written by a different configuration; "
                "pass --fresh to start over"
            )
        return checkpoint
    return None


def _load(path: Path) -> Checkpoint:
    with np.load(path, allow_pickle=False) as arrays:
        meta = json.loads(arrays["meta"].tobytes().decode())
        state = {
            name[len(STATE_PREFIX) :]: arrays[name].copy()
            for name in arrays.files
            if name.startswith(STATE_PREFIX)
        }
        return Checkpoint(
            completed=int(meta["completed"]),
            state=state,
            previous=arrays["previous"].copy() if "previous" in arrays.files else None,
            train_time=float(meta["train_time"]),
            fingerprint=str(meta["fingerprint"]),
            trajectory=arrays["trajectory"].copy() if "trajectory" in arrays.files else None,
            extra=meta.get("extra") or {},
            log=arrays["log"].tobytes().decode() if "log" in arrays.files else None,
        )
