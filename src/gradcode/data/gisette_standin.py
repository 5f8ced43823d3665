"""``gisette-standin``: synthetic data shaped like GISETTE. NOT GISETTE.

The GISETTE feature files are not available on our machines, so tests and the offline default
pipeline use this stand-in. Its name, ``meta["stand_in"] = true`` and the description in
``meta.json`` say what it is, so that no figure can pass it off as GISETTE.

What it matches: the shape (6000 + 1000 rows, or paper 001's 6552 + 448, by 5000 features and
a bias column, p = 5001), integer values in 0..999, about 13% non-zero entries (GISETTE's
commonly quoted density; the real files could not be checked here), a mean value of about
105.5 per entry (the value sum of gisette_train.data in gisette.param over 6000 * 5000
entries), and exactly balanced labels in every split (GISETTE has 3000/3000 and 500/500).

How it is drawn (``numpy.random.default_rng(seed)``, in this order): a true direction ``w``
(standard normal on a random half of the features, zero on the other half, like GISETTE's
2500 "probe" features that carry no information); then for the training rows and then the
test rows: each entry is non-zero with probability 0.13 and then has value
``1 + floor(999 * u ** (1 / a))``, ``u`` uniform, ``a = 4.31`` (mean ~ 811 among non-zeros);
within each split the half of the rows with the largest ``x . w`` gets label +1 (ties by row
order), the rest -1. The labels are therefore a deterministic function of x (a linear model
trained on 3000 rows predicts 3000 others with accuracy about 0.7; real GISETTE is much easier,
about 0.97, because its features are highly structured: do not compare accuracies).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import sparse

from gradcode.data.gisette import MAX_VALUE, N_FEATURES, PAPER_001_TRAIN_ROWS
from gradcode.data.io import RawFile
from gradcode.data.prepared import Built

DENSITY = 0.13
# u ** (1 / a) has mean a / (a + 1); a = 4.31 puts the mean non-zero value near 811, so that
# the mean entry is near GISETTE's 3,164,568,508 / (6000 * 5000) ~ 105.5 at 13% density
SHAPE_A = 4.31
VARIANTS = {
    "uci": (6000, 1000),
    "paper001": (PAPER_001_TRAIN_ROWS, 6000 + 1000 - PAPER_001_TRAIN_ROWS),
}
_ROWS_PER_BLOCK = 500  # bounds the dense random draws to 500 x 5000 at a time


def _features(rng: np.random.Generator, rows: int) -> sparse.csr_array:
    blocks = []
    for start in range(0, rows, _ROWS_PER_BLOCK):
        count = min(_ROWS_PER_BLOCK, rows - start)
        present = rng.random((count, N_FEATURES)) < DENSITY
        u = rng.random(int(np.count_nonzero(present)))
        values = np.zeros((count, N_FEATURES))
        values[present] = 1 + np.floor(MAX_VALUE * u ** (1 / SHAPE_A))
        blocks.append(sparse.csr_array(values))
    return sparse.csr_array(sparse.vstack(blocks, format="csr"))


def _balanced_labels(features: sparse.csr_array, direction: np.ndarray) -> np.ndarray:
    order = np.argsort(-(features @ direction), kind="stable")
    labels = -np.ones(features.shape[0])
    labels[order[: features.shape[0] // 2]] = 1.0
    return labels


def _with_bias(features: sparse.csr_array) -> sparse.csr_array:
    bias = sparse.csr_array(np.ones((features.shape[0], 1)))
    return sparse.csr_array(sparse.hstack([features, bias], format="csr"))


def build(
    *, variant: str, seed: int | None, inputs: dict[str, RawFile], options: dict[str, Any]
) -> Built:
    """Draw the stand-in with ``VARIANTS[variant]`` = (train rows, test rows)."""
    n_train, n_test = VARIANTS[variant]
    rng = np.random.default_rng(seed)
    direction = rng.standard_normal(N_FEATURES)
    direction[rng.permutation(N_FEATURES)[: N_FEATURES // 2]] = 0.0
    train = _features(rng, n_train)
    test = _features(rng, n_test)
    return Built(
        X_train=_with_bias(train),
        y_train=_balanced_labels(train, direction),
        X_test=_with_bias(test),
        y_test=_balanced_labels(test, direction),
        train_rows=np.arange(n_train, dtype=np.int64),
        test_rows=np.arange(n_train, n_train + n_test, dtype=np.int64),
        stand_in=True,
        description=(
            "STAND-IN, NOT GISETTE: synthetic data with GISETTE's shape "
            f"({n_train} + {n_test} rows x {N_FEATURES} features + bias), value range 0..999, "
            f"~{DENSITY:.0%} non-zeros and balanced labels, for tests and offline runs only"
        ),
        row_index="0-based row in order of generation (training rows, then test rows)",
        recipe={
            "generator": "numpy.random.default_rng(seed)",
            "density": DENSITY,
            "nonzero_values": f"1 + floor({MAX_VALUE} * u ** (1 / {SHAPE_A})), u ~ U[0, 1)",
            "labels": "+1 for the half of each split with the largest x . w, else -1",
            "true_direction": "w ~ N(0, 1) on a random half of the features, 0 elsewhere",
            "bias": "last column, all ones",
            "imitates": "gisette " + variant,
        },
        notes=["Synthetic stand-in: never report results on it as GISETTE results."],
    )
