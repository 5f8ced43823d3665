"""``cifar10-standin``: synthetic images shaped like CIFAR-10. NOT CIFAR-10.

CIFAR-10 cannot be fetched on our machines, so tests and the offline default pipeline use this
stand-in. Its name, ``meta["stand_in"] = true`` and the description in ``meta.json`` say what
it is, so that no figure can pass it off as CIFAR-10.

What it matches: the shape (3 x 32 x 32 images as rows of 3072, channel-first, the variants'
50,000 / 49,920 / ``rows`` training and 10,000 (or ``test_rows``) test images; ``small``:
1,260 and 500, 126 and 50 per class, as ``cifar10 small``), integer pixel
values 0..255 scaled by 1/255 exactly as ``cifar10`` scales them, ten classes each equally
often (as CIFAR-10), ``task = multiclass`` and labels 0..9.

How it is drawn (``numpy.random.default_rng(seed)``, in this order): one template per class and
channel, a sum of four plane waves of random low frequency (0..3 cycles per image each way),
phase and amplitude, scaled to standard deviation 1; then for the training images and then the
test images, a balanced random order of labels and, per image, the class template shifted
circularly by a random 0..32 pixels each way, ``pixel = round(128 + 48 * template + noise)``
with noise ``N(0, 20^2)``, clipped to 0..255. The shift hides where a pattern is, so a rule on
fixed pixels is weak (a nearest-class-mean rule on 4,000 images: test accuracy 0.60, mostly from
the classes' mean colours), while a small network trained on inputs centred and scaled (as one
trains on CIFAR-10) passed 0.65 within 12 epochs on the same 4,000 images; chance is 0.1. The
accuracies say nothing about CIFAR-10.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcode.data.cifar10 import (
    CHANNELS,
    CLASSES,
    PIXELS,
    SIDE,
    held_out_rows,
    train_rows_wanted,
)
from gradcode.data.io import RawFile
from gradcode.data.prepared import Built

TRAIN_ROWS, TEST_ROWS = 50_000, 10_000
WAVES, MAX_FREQUENCY, MAX_SHIFT = 4, 3, SIDE // 2
CONTRAST, NOISE = 48.0, 20.0
_ROWS_PER_BLOCK = 2000  # bounds the float64 draws to 2000 x 3072 at a time


def templates(rng: np.random.Generator) -> np.ndarray:
    """``(CLASSES, CHANNELS, SIDE, SIDE)`` smooth patterns, each of standard deviation 1."""
    grid = np.arange(SIDE) / SIDE
    out = np.zeros((CLASSES, CHANNELS, SIDE, SIDE))
    for c in range(CLASSES):
        for channel in range(CHANNELS):
            fx, fy = rng.integers(0, MAX_FREQUENCY + 1, (2, WAVES))
            phase, amplitude = rng.uniform(0, 2 * np.pi, WAVES), rng.uniform(0.5, 1.0, WAVES)
            for k in range(WAVES):
                angle = 2 * np.pi * (fy[k] * grid[:, None] + fx[k] * grid[None, :]) + phase[k]
                out[c, channel] += amplitude[k] * np.cos(angle)
            out[c, channel] /= out[c, channel].std() or 1.0
    return out


def balanced_labels(rng: np.random.Generator, rows: int) -> np.ndarray:
    """``rows`` labels, every class ``rows // 10`` or one more times, in random order."""
    return rng.permutation(np.arange(rows) % CLASSES)


def images(rng: np.random.Generator, patterns: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """``(rows, 3072)`` integer-valued float64 pixels 0..255 of the given classes."""
    out = np.empty((labels.size, PIXELS))
    for start in range(0, labels.size, _ROWS_PER_BLOCK):
        block = labels[start : start + _ROWS_PER_BLOCK]
        shifts = rng.integers(-MAX_SHIFT, MAX_SHIFT + 1, (block.size, 2))
        noise = rng.normal(0.0, NOISE, (block.size, PIXELS))
        for i, (label, (dy, dx)) in enumerate(zip(block, shifts, strict=True)):
            shifted = np.roll(patterns[label], (dy, dx), axis=(1, 2)).reshape(-1)
            noise[i] += 128.0 + CONTRAST * shifted
        out[start : start + block.size] = np.clip(np.round(noise), 0, 255)
    return out


def build(
    *, variant: str, seed: int | None, inputs: dict[str, RawFile], options: dict[str, Any]
) -> Built:
    """Draw the stand-in with the variant's (and options') numbers of images."""
    n_train = train_rows_wanted(variant, options) or TRAIN_ROWS
    n_test = held_out_rows(variant, options) or TEST_ROWS
    rng = np.random.default_rng(seed)
    patterns = templates(rng)
    y_train = balanced_labels(rng, n_train)
    x_train = images(rng, patterns, y_train) / 255.0
    y_test = balanced_labels(rng, n_test)
    x_test = images(rng, patterns, y_test) / 255.0
    return Built(
        X_train=x_train,
        y_train=y_train.astype(np.float64),
        X_test=x_test,
        y_test=y_test.astype(np.float64),
        train_rows=np.arange(n_train, dtype=np.int64),
        test_rows=np.arange(n_train, n_train + n_test, dtype=np.int64),
        task="multiclass",
        stand_in=True,
        description=(
            "STAND-IN, NOT CIFAR-10: synthetic 3x32x32 images of ten classes (class patterns, "
            f"shifts and noise), {n_train} + {n_test} images, pixels 0..255 scaled by 1/255, "
            "for tests and offline runs only"
        ),
        row_index="0-based row in order of generation (training images, then test images)",
        recipe={
            "generator": "numpy.random.default_rng(seed)",
            "templates": f"per class and channel {WAVES} plane waves, 0..{MAX_FREQUENCY} cycles",
            "pixels": f"round(128 + {CONTRAST:g} * shifted template + N(0, {NOISE:g}^2)), 0..255",
            "shift": f"circular, -{MAX_SHIFT}..{MAX_SHIFT} pixels each way (any position)",
            "features": "pixel / 255, channel-first (3, 32, 32) row-major, as cifar10",
            "labels": "class index 0..9, balanced, random order",
            "imitates": "cifar10 " + variant,
        },
        notes=["Synthetic stand-in: never report results on it as CIFAR-10 results."],
    )
