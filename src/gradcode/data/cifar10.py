"""CIFAR-10 (Krizhevsky 2009) from its own python batches: 32x32 colour images, 10 classes.

Inputs: the folder ``cifar-10-batches-py`` of ``cifar-10-python.tar.gz`` (under
``$GRADCODE_DATA_DIR`` it is found as is): ``data_batch_1`` .. ``data_batch_5`` (training),
``test_batch`` and ``batches.meta``. Each batch is a Python 2 pickle of a dict whose ``data`` is
a uint8 array ``(rows, 3072)``, one image per row, channel-first and row-major (1024 red, then
green, then blue values, each 32x32 by rows), and whose ``labels`` is a list of ints 0..9;
``batches.meta`` gives ``num_cases_per_batch``, ``num_vis`` (3072) and the ten
``label_names``. The pickles are read by an unpickler that accepts numpy arrays, lists,
dicts, strings and numbers only (a pickle can otherwise run code), and checked: the keys, the
array's shape and dtype, a label per image, labels in 0..9, rows per batch as
``batches.meta`` says, and the class balance the data set publishes (every class equally often
in ``test_batch``, and in the five training batches together).

Features: ``X = pixel / 255`` (float64 in [0, 1], the files' order, so a row reshapes to
``(3, 32, 32)``); not standardised: the per-channel mean and standard deviation of the
training rows are in ``meta["recipe"]`` for a model that wants them. Labels: the class index
0..9 (as float64, like every prepared label); ``meta["task"]`` is ``multiclass``. Rows are
numbered in the concatenation of the five training batches (0..49,999), then ``test_batch``
(50,000..59,999).

- ``full``: train = the 50,000 training images, test = the 10,000 test images.
- ``paper001``: paper 001 trains on "a random subset of d = 49920 training images"; here the
  subset is ``numpy.random.default_rng(seed).permutation(50000)[:49920]``, kept in file
  order (which of them the paper used is not said).
- ``custom``: a random subset of ``rows`` training images drawn the same way.
- ``small``: a class-balanced random subset of 1,260 training images (126 per class) and 500
  test images (50 per class), for MPI runs of a network on a small machine (21 JAX ranks of
  paper 001's CNN on 2 cores: ``config/fig13-cnn.yaml``): per class, in class order,
  ``rng.permutation`` of that class's training rows, the first 126 kept; then the same for the
  test rows; kept in file order. ``test_rows`` does not apply to it. 1,260 = 2^2 3^2 5 7 is a
  multiple of every partition count of those runs (20 workers; CodedReduce's 28 partitions on
  a (4, 2) tree), so no scheme trims rows and the exact ones train on the same images (1,200
  would leave CodedReduce 1,176).

``test_rows`` (any variant) keeps a random subset of that many test images, drawn after the
training subset from the same generator. The authors publish an md5 of the archive only, no
checksum per file, so the inputs are recorded by sha256 but not verified against one. The files
are not on our machines and cannot be fetched here: tests read small files fabricated in this
format, and ``cifar10-standin`` is the offline substitute.
"""

from __future__ import annotations

import io
import pickle
from typing import Any

import numpy as np

from gradcode.data.errors import DataError, OptionError
from gradcode.data.io import RawFile
from gradcode.data.prepared import Built

CHANNELS, SIDE, CLASSES = 3, 32, 10
PIXELS = CHANNELS * SIDE * SIDE
TRAIN_BATCHES = tuple(f"data_batch_{i}" for i in range(1, 6))
FILES = (*TRAIN_BATCHES, "test_batch", "batches.meta")
PAPER_001_TRAIN_ROWS = 49920
#: images per class of variant ``small`` (training, test)
SMALL_PER_CLASS = (126, 50)
VARIANTS = {
    "full": "50,000 training and 10,000 test images",
    "paper001": "a seeded random subset of 49,920 training images (paper 001's d), all test",
    "custom": "a seeded random subset of --rows training images",
    "small": "a seeded class-balanced subset of 1,260 training and 500 test images",
}

_NUMPY = np.zeros(0)
# the callables a pickled numpy array refers to, under Python 2 / numpy 1 and numpy 2 names
_ALLOWED: dict[tuple[str, str], Any] = {
    ("numpy", "ndarray"): np.ndarray,
    ("numpy", "dtype"): np.dtype,
    ("numpy.core.multiarray", "_reconstruct"): _NUMPY.__reduce__()[0],
    ("numpy._core.multiarray", "_reconstruct"): _NUMPY.__reduce__()[0],
    ("numpy.core.numeric", "_frombuffer"): _NUMPY.__reduce_ex__(5)[0],
    ("numpy._core.numeric", "_frombuffer"): _NUMPY.__reduce_ex__(5)[0],
}


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in _ALLOWED:
            raise pickle.UnpicklingError(f"refers to {module}.{name}, not a numpy array")
        return _ALLOWED[(module, name)]


def read_pickle(raw: RawFile) -> dict[str, Any]:
    """A CIFAR-10 pickle -> dict with str keys; ``DataError`` if it is not a pickled dict."""
    try:
        loaded = _Unpickler(io.BytesIO(raw.content), encoding="bytes").load()
    except Exception as error:  # a corrupt pickle fails in many ways; name the file, not them
        detail = " ".join(str(error).split()) or type(error).__name__
        raise DataError(f"{raw.file}: not a readable pickle ({detail})") from None
    if not isinstance(loaded, dict):
        raise DataError(f"{raw.file}: holds a {type(loaded).__name__}, expected a dict")
    return {k.decode("latin-1") if isinstance(k, bytes) else str(k): v for k, v in loaded.items()}


def _entry(raw: RawFile, content: dict[str, Any], key: str) -> Any:
    if key not in content:
        raise DataError(f"{raw.file}: no {key!r} entry (has {', '.join(sorted(content))})")
    return content[key]


def _count(raw: RawFile, content: dict[str, Any], key: str) -> int:
    value = _entry(raw, content, key)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise DataError(f"{raw.file}: {key} is {value!r}, expected a positive integer")
    return value


def read_meta(raw: RawFile) -> dict[str, Any]:
    """``batches.meta`` -> ``{"per_batch": int, "label_names": [10 str]}``, checked."""
    content = read_pickle(raw)
    per_batch = _count(raw, content, "num_cases_per_batch")
    if (vis := _count(raw, content, "num_vis")) != PIXELS:
        raise DataError(f"{raw.file}: num_vis is {vis}, expected {PIXELS} (3 x 32 x 32)")
    names = _entry(raw, content, "label_names")
    if not isinstance(names, list) or len(names) != CLASSES:
        raise DataError(f"{raw.file}: label_names is not a list of {CLASSES} names")
    names = [n.decode("latin-1") if isinstance(n, bytes) else str(n) for n in names]
    return {"per_batch": per_batch, "label_names": names}


def read_batch(raw: RawFile, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """One batch -> (uint8 ``(rows, 3072)``, int64 labels ``(rows,)``), checked."""
    content = read_pickle(raw)
    data, labels = _entry(raw, content, "data"), _entry(raw, content, "labels")
    if not isinstance(data, np.ndarray) or data.dtype != np.uint8 or data.ndim != 2:
        what = f"{data.dtype} {data.shape}" if isinstance(data, np.ndarray) else type(data).__name__
        raise DataError(f"{raw.file}: data is {what}, expected a uint8 array (rows, {PIXELS})")
    if data.shape != (rows, PIXELS):
        raise DataError(
            f"{raw.file}: data has shape {data.shape}, expected ({rows}, {PIXELS}) "
            f"(batches.meta: {rows} images per batch; truncated?)"
        )
    if not isinstance(labels, list) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in labels
    ):
        raise DataError(f"{raw.file}: labels is not a list of integers")
    if len(labels) != rows:
        raise DataError(f"{raw.file}: {len(labels)} labels for {rows} images")
    array = np.asarray(labels, dtype=np.int64)
    bad = np.flatnonzero((array < 0) | (array >= CLASSES))
    if bad.size:
        raise DataError(f"{raw.file}: label {array[bad[0]]} at row {bad[0]}, expected 0..9")
    return data, array


def _check_balance(labels: np.ndarray, where: str) -> None:
    counts = np.bincount(labels, minlength=CLASSES)
    if counts.min() != counts.max():
        raise DataError(
            f"{where}: class counts {counts.tolist()}, CIFAR-10 has every class equally often"
        )


def read_files(inputs: dict[str, RawFile]) -> dict[str, Any]:
    """All seven files, checked: train and test images (uint8) and labels, label names."""
    meta = read_meta(inputs["batches.meta"])
    batches = [read_batch(inputs[name], meta["per_batch"]) for name in TRAIN_BATCHES]
    test_x, test_y = read_batch(inputs["test_batch"], meta["per_batch"])
    train_y = np.concatenate([labels for _, labels in batches])
    _check_balance(train_y, "data_batch_1..5")
    _check_balance(test_y, inputs["test_batch"].file)
    return {
        "train_x": np.concatenate([images for images, _ in batches]),
        "train_y": train_y,
        "test_x": test_x,
        "test_y": test_y,
        "label_names": meta["label_names"],
    }


def subset_rows(total: int, keep: int | None, rng: np.random.Generator, what: str) -> np.ndarray:
    """Sorted indices of a random subset of ``keep`` of ``total`` rows (all when ``None``)."""
    if keep is None:
        return np.arange(total, dtype=np.int64)
    if keep > total:
        raise DataError(f"{what}: {keep} rows asked, the files have {total}")
    return np.sort(rng.permutation(total)[:keep]).astype(np.int64)


def channel_statistics(x: np.ndarray) -> dict[str, list[float]]:
    """Per-channel mean and standard deviation of ``(rows, 3072)`` scaled images."""
    channels = x.reshape(x.shape[0], CHANNELS, -1)
    return {
        "channel_mean": [round(float(channels[:, c].mean()), 6) for c in range(CHANNELS)],
        "channel_std": [round(float(channels[:, c].std()), 6) for c in range(CHANNELS)],
    }


def balanced_subset(
    labels: np.ndarray, per_class: int, rng: np.random.Generator, what: str
) -> np.ndarray:
    """Sorted indices of ``per_class`` random rows of every class (classes in order 0..9)."""
    keep = []
    for label in range(CLASSES):
        rows = np.flatnonzero(labels == label)
        if rows.size < per_class:
            raise DataError(f"{what}: class {label} has {rows.size} rows, {per_class} asked")
        keep.append(rng.permutation(rows)[:per_class])
    return np.sort(np.concatenate(keep)).astype(np.int64)


def train_rows_wanted(variant: str, options: dict[str, Any]) -> int | None:
    """Training images a variant keeps (``None``: all)."""
    fixed = {"full": None, "paper001": PAPER_001_TRAIN_ROWS, "small": CLASSES * SMALL_PER_CLASS[0]}
    return fixed.get(variant, options.get("rows"))


def held_out_rows(variant: str, options: dict[str, Any]) -> int | None:
    """Test images a variant keeps (``None``: all)."""
    if variant == "small":
        if "test_rows" in options:
            raise OptionError("variant 'small' has its own 500 test images; drop test_rows")
        return CLASSES * SMALL_PER_CLASS[1]
    return options.get("test_rows")


def _subsets(
    variant: str, options: dict[str, Any], files: dict[str, Any], rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    if variant == "small":
        held_out_rows(variant, options)
        train_per_class, test_per_class = SMALL_PER_CLASS
        return (
            balanced_subset(files["train_y"], train_per_class, rng, "data_batch_1..5"),
            balanced_subset(files["test_y"], test_per_class, rng, "test_batch"),
        )
    n_train, n_test = files["train_y"].size, files["test_y"].size
    train = subset_rows(n_train, train_rows_wanted(variant, options), rng, "data_batch_1..5")
    return train, subset_rows(n_test, options.get("test_rows"), rng, "test_batch")


def build(
    *, variant: str, seed: int | None, inputs: dict[str, RawFile], options: dict[str, Any]
) -> Built:
    """Prepare CIFAR-10 from its python batches, subsets as ``variant`` and ``test_rows`` say."""
    files = read_files(inputs)
    rng = np.random.default_rng(seed)
    n_train = files["train_y"].size
    train, test = _subsets(variant, options, files, rng)
    x_train = files["train_x"][train] / 255.0
    return Built(
        X_train=x_train,
        y_train=files["train_y"][train].astype(np.float64),
        X_test=files["test_x"][test] / 255.0,
        y_test=files["test_y"][test].astype(np.float64),
        train_rows=train,
        test_rows=n_train + test,
        task="multiclass",
        description=(
            f"CIFAR-10 (Krizhevsky 2009): 32x32 colour images, {CLASSES} classes; "
            f"variant {variant}: {VARIANTS[variant]}"
        ),
        row_index="0-based row in data_batch_1..5 concatenated, then in test_batch numbered on",
        recipe={
            "source": "CIFAR-10 python batches data_batch_1..5, test_batch, batches.meta",
            "features": "pixel / 255, channel-first (3, 32, 32) row-major as in the files",
            "labels": "class index 0..9",
            "label_names": files["label_names"],
            "subset": (
                "numpy.random.default_rng(seed).permutation per class, 0..9, sorted; test after"
                " train"
                if variant == "small"
                else "numpy.random.default_rng(seed).permutation, sorted; test after train"
            ),
            **channel_statistics(x_train),
        },
        notes=(
            ["paper001: paper 001 does not say which 49,920 images it used; this is a seeded one."]
            if variant == "paper001"
            else []
        ),
    )
