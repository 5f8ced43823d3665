"""``prepare``: validate parameters, find and check the inputs, build, trim, partition, write."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gradcode.data import provenance, registry
from gradcode.data.errors import DataError, OptionError
from gradcode.data.io import COMPRESSIONS, RawFile, logical_name, read_raw
from gradcode.data.partition import partition_offsets, trimmed_size
from gradcode.data.prepared import (
    Built,
    Matrix,
    PreparedData,
    canonical,
    storage_of,
    write_prepared,
)
from gradcode.extras import require

PathLike = str | os.PathLike[str]


def find_inputs(
    spec: registry.DatasetSpec, variant: str, raw: Sequence[PathLike]
) -> dict[str, Path]:
    """Map each input file name the variant needs to a path.

    Each entry of ``raw`` is a file (matched by its name without a compression suffix) or a
    directory searched for ``NAME``, ``NAME.gz``, ``NAME.xz`` or ``NAME.bz2``. A name found
    twice, a file the variant does not read, or a missing file raises ``DataError``.
    """
    needed = spec.variants[variant]
    if isinstance(raw, str | os.PathLike):
        raw = [raw]
    if not needed:
        if raw:
            raise OptionError(f"{spec.name} reads no input files (got {', '.join(map(str, raw))})")
        return {}
    found: dict[str, Path] = {}

    def add(name: str, path: Path) -> None:
        if name in found and found[name] != path:
            raise DataError(f"{name}: given twice ({found[name]} and {path})")
        found[name] = path

    directories = []
    for entry in map(Path, raw):
        if entry.is_dir():
            directories.append(entry)
            for name in needed:
                candidates = [entry / (name + suffix) for suffix in ("", *COMPRESSIONS)]
                present = [c for c in candidates if c.is_file()]
                if len(present) > 1:
                    names = ", ".join(p.name for p in present)
                    raise DataError(f"{name}: ambiguous, {entry} holds {names}")
                if present:
                    add(name, present[0])
        elif entry.is_file():
            name = logical_name(entry)
            if name not in needed:
                raise DataError(
                    f"{entry.name}: not an input of {spec.name} variant {variant} "
                    f"(it reads {', '.join(needed)})"
                )
            add(name, entry)
        else:
            raise DataError(f"{entry.name}: not found ({entry})")
    missing = [name for name in needed if name not in found]
    if missing:
        if directories:
            where, target = f"in {directories[0]}", str(directories[0])
        else:
            where, target = "in a directory passed as raw (CLI --raw)", "DIR"
        hint = f", or run `gradcode data download {spec.name} --to {target}`"
        also = f" (also missing: {', '.join(missing[1:])})" if len(missing) > 1 else ""
        raise DataError(
            f"{missing[0]}: not found; place it (plain, .gz, .xz or .bz2) {where}"
            f"{hint if spec.downloadable else ''}{also}"
        )
    return found


def _count_option(value: object, what: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise OptionError(f"{what} must be a positive integer (got {value!r})")
    return int(value)


def _label_counts(y: np.ndarray, labels: Sequence[int] = (-1, 1)) -> dict[str, int]:
    return {str(label): int(np.count_nonzero(y == label)) for label in labels}


def _nnz(matrix: Any) -> int:
    return int(matrix.nnz) if hasattr(matrix, "nnz") else int(np.count_nonzero(matrix))


def prepare(
    name: str,
    out: PathLike,
    *,
    raw: Sequence[PathLike] = (),
    variant: str | None = None,
    seed: int | None = None,
    trim_to_multiple: int | None = None,
    partitions: int | None = None,
    verify_checksums: bool = True,
    overwrite: bool = False,
    **options: Any,
) -> PreparedData:
    """Prepare data set ``name`` into directory ``out`` (``data.npz`` and ``meta.json``).

    Args:
        name: one of :func:`gradcode.data.available` (``amazon``, ``cifar10``, ``gisette``,
            their ``-standin``, ``synthetic-linear``, ``synthetic-logistic``).
        out: output directory; it must not exist unless ``overwrite``. It appears only when
            everything succeeded (written beside it, then renamed).
        raw: input files and/or directories holding them (real data sets only).
        variant: recipe variant (default: the data set's first; see ``gradcode data list``).
        seed: the data set's seed (default per data set); an error for data sets without one.
        trim_to_multiple: drop the last ``n mod M`` training rows (in training order) so that
            the number of training rows is a multiple of ``M``; recorded in meta.json.
        partitions: record the split of the training rows into this many contiguous
            partitions of sizes differing by at most one (``data.npz["partition_offsets"]``).
        verify_checksums: compare inputs with their published sha256 (default); turning it
            off is recorded in meta.json.
        overwrite: replace an existing ``out``.
        options: data-set options, e.g. ``rows``, ``features``, ``test_rows``, ``noise_std``
            for ``synthetic-linear``.

    Returns the prepared data, equal to ``load_prepared(out)``. Bad parameters raise
    ``OptionError``, bad inputs ``DataError`` (both ``ValueError``), no ``data`` extra
    ``MissingExtra``; then nothing is written. Same inputs and parameters, same bytes.
    """
    require("data", "preparing a data set")
    spec = registry.get(name)
    variant = spec.check_variant(variant)
    seed = spec.check_seed(seed)
    options = spec.check_options(variant, options)
    trim_to_multiple = _count_option(trim_to_multiple, "trim_to_multiple")
    partitions = _count_option(partitions, "partitions")

    paths = find_inputs(spec, variant, raw)
    inputs, records = _read_inputs(spec, paths, verify_checksums)
    built: Built = spec.load_builder()(variant=variant, seed=seed, inputs=inputs, options=options)

    x_train, y_train, train_rows, trim = _trimmed(built, trim_to_multiple)
    offsets, partition = _partition(y_train.size, partitions)

    x_train, x_test = canonical(x_train), canonical(built.X_test)
    meta = _meta(
        built,
        x_train,
        x_test,
        y_train,
        dataset=name,
        variant=variant,
        seed=seed,
        options=options,
        verify_checksums=verify_checksums,
        inputs=records,
        trim=trim,
        partition=partition,
    )
    arrays = _arrays(built, x_train, x_test, y_train, train_rows, offsets)
    meta = write_prepared(out, arrays, meta, overwrite=overwrite)
    return PreparedData(
        X_train=x_train,
        y_train=arrays["y_train"],
        X_test=x_test,
        y_test=arrays["y_test"],
        train_rows=arrays["train_rows"],
        test_rows=arrays["test_rows"],
        meta=meta,
        theta_star=arrays.get("theta_star"),
        partition_offsets=offsets,
    )


def _read_inputs(
    spec: registry.DatasetSpec, paths: dict[str, Path], verify: bool
) -> tuple[dict[str, RawFile], list[dict[str, Any]]]:
    """The input files read, and their provenance records (checked against the published
    sha256 when ``verify``)."""
    published = spec.published()
    inputs, records = {}, []
    for input_name, path in paths.items():
        raw_file = read_raw(path)
        records.append(provenance.check_input(raw_file, published.get(input_name), verify=verify))
        inputs[input_name] = raw_file
    return inputs, records


def _trimmed(
    built: Built, multiple: int | None
) -> tuple[Matrix, np.ndarray, np.ndarray, dict[str, Any] | None]:
    """The training rows without the last ``n mod multiple``, and what was dropped (``None``:
    no ``multiple``, nothing dropped)."""
    x_train, y_train, train_rows = built.X_train, built.y_train, built.train_rows
    if multiple is None:
        return x_train, y_train, train_rows, None
    before = y_train.size
    kept = trimmed_size(before, multiple)
    trim = {
        "multiple": multiple,
        "rows_before": before,
        "rows_dropped": before - kept,
        "rule": "the last rows of the training order are dropped (not moved to test)",
    }
    return x_train[:kept], y_train[:kept], train_rows[:kept], trim


def _partition(
    rows: int, partitions: int | None
) -> tuple[np.ndarray | None, dict[str, Any] | None]:
    """The offsets of ``partitions`` contiguous blocks of ``rows``, and their record (``None``:
    no ``partitions``)."""
    if partitions is None:
        return None, None
    offsets = partition_offsets(rows, partitions)
    partition = {
        "k": partitions,
        "sizes": np.diff(offsets).tolist(),
        "rule": "contiguous blocks of the training order, sizes differ by at most one",
    }
    return offsets, partition


def _meta(
    built: Built,
    x_train: Matrix,
    x_test: Matrix,
    y_train: np.ndarray,
    *,
    dataset: str,
    variant: str,
    seed: int | None,
    options: dict[str, Any],
    verify_checksums: bool,
    inputs: list[dict[str, Any]],
    trim: dict[str, Any] | None,
    partition: dict[str, Any] | None,
) -> dict[str, Any]:
    """``meta.json`` but its ``outputs`` (``write_prepared`` adds them)."""
    meta: dict[str, Any] = {
        "format": provenance.FORMAT,
        "dataset": dataset,
        "variant": variant,
        "description": built.description,
        "stand_in": built.stand_in,
        "task": built.task,
        "seed": seed,
        "options": options,
        "verify_checksums": verify_checksums,
        "inputs": sorted(inputs, key=lambda r: r["name"]),
        "recipe": built.recipe,
        "row_index": built.row_index,
        "storage": storage_of(x_train),
        "shapes": {
            "X_train": list(x_train.shape),
            "X_test": list(x_test.shape),
            "y_train": [int(y_train.size)],
            "y_test": [int(built.y_test.size)],
        },
        "nnz": {"X_train": _nnz(x_train), "X_test": _nnz(x_test)},
        "trim": trim,
        "partitions": partition,
        "notes": built.notes,
        "comparison": None,
        "software": provenance.software(),
    }
    if built.task == "classification":
        meta["labels"] = {"train": _label_counts(y_train), "test": _label_counts(built.y_test)}
    elif built.task == "multiclass":
        classes = range(int(max(y_train.max(initial=0), built.y_test.max(initial=0))) + 1)
        meta["labels"] = {
            "train": _label_counts(y_train, classes),
            "test": _label_counts(built.y_test, classes),
        }
    if built.comparison is not None:
        comparison = dict(built.comparison)
        comparison["features"] = int(x_train.shape[1])
        comparison["train_rows"] = int(y_train.size)
        comparison["feature_difference"] = comparison["features"] - comparison["reported_features"]
        comparison["train_row_difference"] = (
            comparison["train_rows"] - comparison["reported_train_rows"]
        )
        meta["comparison"] = comparison
    return meta


def _arrays(
    built: Built,
    x_train: Matrix,
    x_test: Matrix,
    y_train: np.ndarray,
    train_rows: np.ndarray,
    offsets: np.ndarray | None,
) -> dict[str, Any]:
    """What ``data.npz`` holds."""
    arrays: dict[str, Any] = {
        "X_train": x_train,
        "X_test": x_test,
        "y_train": np.asarray(y_train, dtype=np.float64),
        "y_test": np.asarray(built.y_test, dtype=np.float64),
        "train_rows": np.asarray(train_rows, dtype=np.int64),
        "test_rows": np.asarray(built.test_rows, dtype=np.int64),
        **built.extras,
    }
    if offsets is not None:
        arrays["partition_offsets"] = offsets
    return arrays
