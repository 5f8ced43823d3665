"""The training data of a run: loaded (or prepared on the fly) on rank 0, trimmed, partitioned.

Partitions are deterministic: with ``data.trim`` (default) the last ``N mod k`` training rows
are dropped (as Tandon et al.'s code drops the remainder), then the rows are split into the
code's ``k`` partitions by ``gradcode.data.partition_rows`` (contiguous blocks, or blocks of
a seeded permutation with ``data.partition_seed``); a prepared ``partition_offsets`` is used
when it describes exactly that split. Worker ranks receive only the rows of their partitions.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gradcode.data import DataError, OptionError, load_prepared, partition_rows, prepare
from gradcode.data.location import raw_dirs
from gradcode.data.prepared import PreparedData
from gradcode.models import task as model_task
from gradcode.models.base import Matrix
from gradcode.runfile.config import ConfigError, DataConfig

#: environment variables: where raw inputs live (as for `gradcode data`), where to cache
CACHE_ENV = "GRADCODE_CACHE_DIR"


@dataclass(frozen=True)
class TrainingData:
    """What rank 0 holds: ``X_train`` ``(N, p)`` (trimmed), ``y_train`` ``(N,)``, the test
    split, ``theta_star`` ``(p,)`` or ``None``, and ``partitions``: ``k`` int64 row arrays."""

    X_train: Matrix
    y_train: np.ndarray
    X_test: Matrix
    y_test: np.ndarray
    theta_star: np.ndarray | None
    partitions: list[np.ndarray]
    meta: dict[str, Any]
    rows_dropped: int

    @property
    def rows(self) -> int:
        return int(self.y_train.size)

    @property
    def features(self) -> int:
        return int(self.X_train.shape[1])

    def part(self, index: int) -> tuple[Matrix, np.ndarray]:
        """``(X_p, y_p)`` of partition ``index``."""
        rows = self.partitions[index]
        return self.X_train[rows], self.y_train[rows]

    def describe(self) -> dict[str, Any]:
        return {
            "dataset": self.meta.get("dataset"),
            "variant": self.meta.get("variant"),
            "stand_in": bool(self.meta.get("stand_in")),
            "rows": self.rows,
            "rows_dropped": self.rows_dropped,
            "features": self.features,
            "test_rows": int(self.y_test.size),
            "partitions": len(self.partitions),
            "partition_sizes": sorted({int(p.size) for p in self.partitions}),
        }


def load_training_data(config: DataConfig, k: int, model_kind: str) -> TrainingData:
    """Load (preparing if needed) and partition into ``k``; ``ConfigError`` on any problem."""
    try:
        prepared = _prepared(config)
    except (DataError, OptionError) as error:
        raise ConfigError(f"data: {error}") from None
    task, needed = prepared.meta.get("task"), model_task(model_kind)
    if task != needed:
        raise ConfigError(
            f"model.kind: {model_kind} needs a {needed} data set, {prepared.name} is {task}"
        )
    rows = prepared.n_train
    kept = rows - rows % k if config.trim else rows
    if kept < k:
        raise ConfigError(f"data: {rows} training rows cannot fill k = {k} partitions")
    offsets = prepared.partition_offsets
    if (
        config.partition_seed is None
        and offsets is not None
        and offsets.size == k + 1
        and offsets[-1] == kept
    ):
        parts = [np.arange(offsets[j], offsets[j + 1], dtype=np.int64) for j in range(k)]
    else:
        parts = partition_rows(kept, k, seed=config.partition_seed)
    return TrainingData(
        X_train=prepared.X_train[:kept],
        y_train=np.ascontiguousarray(prepared.y_train[:kept]),
        X_test=prepared.X_test,
        y_test=np.ascontiguousarray(prepared.y_test),
        theta_star=prepared.theta_star,
        partitions=parts,
        meta=prepared.meta,
        rows_dropped=rows - kept,
    )


def _prepared(config: DataConfig) -> PreparedData:
    if config.prepared is not None:
        if not Path(config.prepared).is_dir():
            raise ConfigError(f"data.prepared: no such directory {config.prepared}")
        return load_prepared(config.prepared)
    assert config.dataset is not None  # the config parser guarantees one of the two
    from gradcode.data import registry

    spec = registry.get(config.dataset)
    variant = spec.check_variant(config.variant)
    seed = spec.check_seed(config.seed)
    options = spec.check_options(variant, config.options)
    key = json.dumps({"variant": variant, "seed": seed, "options": options}, sort_keys=True)
    digest = hashlib.sha256(key.encode()).hexdigest()[:12]
    directory = _cache_root(config) / f"{config.dataset}-{variant}-{digest}"
    if not (directory / "meta.json").is_file():
        raw = list(config.raw)
        if not raw:
            raw = [str(path) for path in raw_dirs(config.dataset)]
        try:
            return prepare(
                config.dataset, directory, raw=raw, variant=variant, seed=seed, **options
            )
        except DataError:
            # a concurrent run may have prepared the same directory meanwhile
            if not (directory / "meta.json").is_file():
                raise
    return load_prepared(directory)


def _cache_root(config: DataConfig) -> Path:
    if config.cache is not None:
        return Path(config.cache)
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    return Path.home() / ".cache" / "gradcode" / "prepared"
