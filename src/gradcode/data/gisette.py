"""GISETTE (NIPS 2003 feature selection challenge, UCI id 170): separate handwritten 4 from 9.

Inputs, UCI format (variants ``uci`` and ``paper001``): ``gisette_train.data`` (6000 lines) and
``gisette_valid.data`` (1000 lines) of 5000 blank-separated integers 0..999 each (UCI lines end
in a blank), ``gisette_train.labels`` / ``gisette_valid.labels`` (one ``1`` or ``-1`` per line)
and ``gisette.param`` (feature count, row and class counts, and the sum of all values of each
data file). Each file is checked against its published sha256 (unless ``verify_checksums`` is
off, which ``meta.json`` records), and always against ``gisette.param``: row counts, class
counts and value sums (the challenge's own check-sums).

Variant ``libsvm`` reads LIBSVM's ``gisette_scale`` / ``gisette_scale.t`` instead (the same
6000 / 1000 rows, features scaled to [-1, 1]); LIBSVM publishes no checksums for them.

Features are stored as given (UCI: integers 0..999, not rescaled), then a bias column of ones,
so ``p = 5001`` as in paper 001. Rows are numbered in the concatenation ``gisette_train.data``
(0..5999) then ``gisette_valid.data`` (6000..6999):

- ``uci``: train = the 6000 training rows, test = the 1000 validation rows (the challenge's
  split; the test file has no public labels).
- ``paper001``: paper 001 trains on ``d = 6552`` rows without saying which. 6552 = 6 * 1092
  with 1092 = lcm(84, 156), the two worker counts of its experiments (its synthetic sizes 7644
  and 32760 are multiples of 1092 too), and it is the largest such multiple that fits in the
  7000 labelled rows. This variant is our reconstruction: train = the first 6552 rows of
  train followed by valid, test = the remaining 448 validation rows.

The feature files are not on our machines (see shared/datasets/README.md); tests run this
loader on small files in the same format, and ``gisette-standin`` is the offline substitute.
"""

from __future__ import annotations

import io
import re
from typing import Any

import numpy as np
from scipy import sparse

from gradcode.data.errors import DataError
from gradcode.data.io import RawFile, parse_int_table
from gradcode.data.prepared import Built
from gradcode.data.provenance import Published

N_FEATURES = 5000
MAX_VALUE = 999
PAPER_001_TRAIN_ROWS = 6552

#: sha256 and size of the UCI files (see shared/datasets/README.md)
PUBLISHED = {
    "gisette_train.data": Published(
        "6d4c5e998afe67937b9e77a3334e03c85e545ebc65a6eb1333ffc14125cfc389", 67_788_724
    ),
    "gisette_valid.data": Published(
        "5cea897956dd172a006132738254a27a8f61ecc1ceb6f5b20639c281d2942254"
    ),
    "gisette_train.labels": Published(
        "42bd681fe51b161f033df773df14a0116e492676555ab14616c1b72edc054075", 15_000
    ),
    "gisette_valid.labels": Published(
        "a6b857a0448023f033c4dda2ef848714b4be2ae45ce598d088fb3efb406e08c5", 2_500
    ),
    "gisette.param": Published(
        "77e8bfcf20d9eb772a40c5b31eaa6ba005bcd6ddeba2122223168c891c520490", 269
    ),
}

UCI_FILES = (
    "gisette_train.data",
    "gisette_train.labels",
    "gisette_valid.data",
    "gisette_valid.labels",
    "gisette.param",
)
VARIANTS = {
    "uci": "UCI files; train 6000 rows, test = the 1000 validation rows",
    "paper001": "UCI files; train = first 6552 of train+valid (paper 001's d), test = last 448",
    "libsvm": "LIBSVM gisette_scale (train) and gisette_scale.t (test), scaled to [-1, 1]",
}

_PARAM_ROW = re.compile(r"^(Train|Valid|Test|All)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)(?:\.0+)?\s*$")
_PARAM_FEATURES = re.compile(r"^Number of features:\s*(\d+)\s*$")


def read_param(raw: RawFile) -> dict[str, Any]:
    """``gisette.param`` -> ``{"features": int, "Train": {"positive", "negative", "total",
    "value_sum"}, "Valid": {...}, ...}``."""
    try:
        text = raw.content.decode("ascii")
    except UnicodeDecodeError:
        raise DataError(f"{raw.file}: not ASCII text") from None
    param: dict[str, Any] = {}
    for line in text.splitlines():
        line = line.strip()
        if match := _PARAM_FEATURES.match(line):
            param["features"] = int(match.group(1))
        elif match := _PARAM_ROW.match(line):
            positive, negative, total, value_sum = (int(g) for g in match.groups()[1:])
            param[match.group(1)] = {
                "positive": positive,
                "negative": negative,
                "total": total,
                "value_sum": value_sum,
            }
    for key in ("features", "Train", "Valid"):
        if key not in param:
            what = "'Number of features:' line" if key == "features" else f"{key!r} row"
            raise DataError(f"{raw.file}: no {what}")
    return param


def read_data(raw: RawFile, n_features: int = N_FEATURES) -> np.ndarray:
    """A UCI ``.data`` file -> int16 ``(rows, n_features)``, every value in 0..999."""
    return parse_int_table(
        raw.content,
        name=raw.file,
        n_fields=n_features,
        delimiter=None,
        max_value=MAX_VALUE,
        dtype=np.int16,
    )


def read_labels(raw: RawFile) -> np.ndarray:
    """A ``.labels`` file -> int64 ``(rows,)`` of +-1."""
    labels = parse_int_table(
        raw.content, name=raw.file, n_fields=1, delimiter=None, signed=True
    ).reshape(-1)
    bad = np.flatnonzero(np.abs(labels) != 1)
    if bad.size:
        row = int(bad[0])
        raise DataError(f"{raw.file}: line {row + 1}: label {labels[row]}, expected 1 or -1")
    return labels


def _check_against_param(
    data: RawFile, table: np.ndarray, labels_raw: RawFile, labels: np.ndarray, row: dict
) -> None:
    """Row count, class counts and value sum of one split against its gisette.param row."""
    if labels.size != table.shape[0]:
        raise DataError(
            f"{labels_raw.file}: {labels.size} labels but {data.file} has {table.shape[0]} rows"
        )
    if table.shape[0] != row["total"]:
        raise DataError(
            f"{data.file}: {table.shape[0]} rows, gisette.param says {row['total']} (truncated?)"
        )
    positive = int(np.count_nonzero(labels == 1))
    if (positive, labels.size - positive) != (row["positive"], row["negative"]):
        raise DataError(
            f"{labels_raw.file}: {positive} positive / {labels.size - positive} negative, "
            f"gisette.param says {row['positive']} / {row['negative']}"
        )
    value_sum = int(table.sum(dtype=np.int64))
    if value_sum != row["value_sum"]:
        raise DataError(
            f"{data.file}: value sum {value_sum} differs from the check-sum {row['value_sum']} "
            "in gisette.param"
        )


def _with_bias(features: sparse.csr_array) -> sparse.csr_array:
    bias = sparse.csr_array(np.ones((features.shape[0], 1)))
    return sparse.csr_array(sparse.hstack([features, bias], format="csr"))


def _read_uci(inputs: dict[str, RawFile]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    param = read_param(inputs["gisette.param"])
    if param["features"] != N_FEATURES:
        raise DataError(f"gisette.param: {param['features']} features, expected {N_FEATURES}")
    out = []
    for split, key in (("train", "Train"), ("valid", "Valid")):
        data, labels_raw = inputs[f"gisette_{split}.data"], inputs[f"gisette_{split}.labels"]
        labels = read_labels(labels_raw)
        table = read_data(data)
        _check_against_param(data, table, labels_raw, labels, param[key])
        out += [table, labels]
    return out[0], out[1], out[2], out[3]


def _read_libsvm(raw: RawFile) -> tuple[sparse.csr_array, np.ndarray]:
    from sklearn.datasets import load_svmlight_file

    try:
        features, labels = load_svmlight_file(
            io.BytesIO(raw.content), n_features=N_FEATURES, dtype=np.float64, zero_based=False
        )
    except ValueError as error:
        detail = " ".join(str(error).split())
        raise DataError(
            f"{raw.file}: not a LIBSVM file with {N_FEATURES} features ({detail})"
        ) from None
    bad = np.flatnonzero(np.abs(labels) != 1)
    if bad.size:
        row = int(bad[0])
        raise DataError(f"{raw.file}: line {row + 1}: label {labels[row]:g}, expected 1 or -1")
    features = sparse.csr_array(features)
    if features.nnz and np.abs(features.data).max() > 1:
        raise DataError(f"{raw.file}: values outside [-1, 1] (not the scaled gisette_scale)")
    return features, labels.astype(np.int64)


def build(
    *, variant: str, seed: int | None, inputs: dict[str, RawFile], options: dict[str, Any]
) -> Built:
    """Prepare GISETTE from the UCI files (``uci``, ``paper001``) or LIBSVM files (``libsvm``)."""
    if variant == "libsvm":
        train_x, train_y = _read_libsvm(inputs["gisette_scale"])
        test_x, test_y = _read_libsvm(inputs["gisette_scale.t"])
        source = "LIBSVM gisette_scale (train) and gisette_scale.t (test)"
        values = "LIBSVM's scaling to [-1, 1]"
    else:
        train_table, train_y, valid_table, test_y = _read_uci(inputs)
        train_x, test_x = sparse.csr_array(train_table), sparse.csr_array(valid_table)
        source = "UCI gisette_train.data/.labels and gisette_valid.data/.labels"
        values = "raw integers 0..999 (not rescaled)"
    n_train = train_x.shape[0]
    rows = np.arange(n_train + test_x.shape[0], dtype=np.int64)
    labels = np.concatenate([train_y, test_y]).astype(np.float64)
    split = "train = the training file, test = the validation file"
    if variant == "paper001":
        if rows.size < PAPER_001_TRAIN_ROWS + 1:
            raise DataError(
                f"gisette_valid.data: train and valid have {rows.size} rows together, "
                f"paper001 needs more than {PAPER_001_TRAIN_ROWS}"
            )
        pooled = sparse.csr_array(sparse.vstack([train_x, test_x], format="csr"))
        train_x, test_x = pooled[:PAPER_001_TRAIN_ROWS], pooled[PAPER_001_TRAIN_ROWS:]
        n_train = PAPER_001_TRAIN_ROWS
        split = f"train = the first {n_train} rows of train then valid, test = the rest"
    return Built(
        X_train=_with_bias(train_x),
        y_train=labels[:n_train],
        X_test=_with_bias(test_x),
        y_test=labels[n_train:],
        train_rows=rows[:n_train],
        test_rows=rows[n_train:],
        description=(
            "GISETTE (NIPS 2003 feature selection challenge, UCI 170): handwritten 4 vs 9, "
            f"{N_FEATURES} features and a bias; variant {variant}: {VARIANTS[variant]}"
        ),
        row_index=(
            "0-based row of the training file, then of the validation file numbered on after "
            "it (6000..6999 for the UCI files)"
        ),
        recipe={
            "source": source,
            "features": values,
            "bias": "last column, all ones",
            "labels": "as given, 1 or -1",
            "split": split,
            "checks": (
                "sha256 per file (unless verify_checksums is off); row, class and value-sum "
                "check-sums of gisette.param"
                if variant != "libsvm"
                else "labels in {1, -1}, values in [-1, 1]; no published checksums"
            ),
        },
        notes=(
            [
                "paper001: paper 001 does not say which 6552 rows it used; this split is a "
                "reconstruction (6552 = 6 * lcm(84, 156))."
            ]
            if variant == "paper001"
            else []
        ),
    )
