"""Synthetic data sets: paper 001's linear regression, and a small logistic set for smoke runs.

``synthetic-linear`` follows paper 001, eq. (10): ``theta* ~ N(0, I_p)``, rows
``x_j ~ N(0, I_p)`` and ``y_j = x_j . theta* + z_j`` with ``z_j`` standard Gaussian noise
(``noise_std = 1``; other values are allowed and recorded). Presets are the paper's sizes
``(d, p) = (7644, 6500)`` and ``(32760, 5000)`` (its text once says ``(32760, 500)``, its
Fig. 12 and the issue say 5000). The paper trains on all ``d`` rows and reports the normalised
error ``||theta - theta*||^2 / ||theta*||^2``, so ``theta_star`` is saved and there are no test
rows unless ``test_rows`` asks for them. No bias column (eq. 10 has none).

``synthetic-logistic`` is small and quick: ``theta* ~ N(0, I_p) * 3 / sqrt(p)`` (so
``x . theta*`` has standard deviation about 3), ``x ~ N(0, I_p)``, and ``y = +1`` with
probability ``1 / (1 + exp(-x . theta*))``, else -1.

Both draw from ``numpy.random.default_rng(seed)`` in this order: ``theta*``, training
features, training noise, test features, test noise. Features are dense (``storage:
dense``): storing Gaussian data as CSR would only add index arrays.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcode.data.io import RawFile
from gradcode.data.prepared import Built

#: variant -> (rows, features, test rows); "custom" takes them from the options
LINEAR_VARIANTS = {
    "d7644-p6500": (7644, 6500, 0),
    "d32760-p5000": (32760, 5000, 0),
    # a quarter of each side: the reduced-scale runs of the default workflow on 2 cores
    "d1911-p1625": (1911, 1625, 0),
    "d8190-p1250": (8190, 1250, 0),
}
LOGISTIC_VARIANTS = {
    "small": (2000, 50, 500),
    # the emulated network's runs (config/cluster.yaml): 40 kB messages; and a gradient of
    # 125,000 floats (1 MB: 0.08 s at 100 Mbit/s, paper 000's E[T2] of 16 units of 5 ms)
    "links-p5000": (400, 5000, 80),
    "links-p125000": (16, 125000, 8),
    # the same gradients for Figs. 3/4 of paper 000 on the links (n = k up to 20 data subsets)
    "links-p125000-r20": (20, 125000, 8),
    # paper 001 on the links (config/cluster-coded-reduce.yaml): 200 kB gradients, 16 ms at
    # 100 Mbit/s, the model's tc; 336 rows, 4 per worker at N = 84, so 85 ranks on 2 cores
    # spend their time on the links, not computing
    "links-p25000": (336, 25000, 84),
}
LOGISTIC_SIGNAL = 3.0


def sizes(
    presets: dict[str, tuple[int, int, int]], variant: str, options: dict[str, Any]
) -> tuple[int, int, int]:
    """(rows, features, test rows) of ``variant``; ``options`` give them for ``custom``."""
    rows, features, test_rows = presets.get(variant, (None, None, 0))
    rows = options.get("rows", rows)
    features = options.get("features", features)
    test_rows = options.get("test_rows", test_rows)
    return rows, features, test_rows


def build_linear(
    *, variant: str, seed: int | None, inputs: dict[str, RawFile], options: dict[str, Any]
) -> Built:
    """Paper 001's linear regression data, eq. (10)."""
    rows, features, test_rows = sizes(LINEAR_VARIANTS, variant, options)
    noise_std = float(options.get("noise_std", 1.0))
    rng = np.random.default_rng(seed)
    theta = rng.standard_normal(features)
    x_train = rng.standard_normal((rows, features))
    y_train = x_train @ theta + noise_std * rng.standard_normal(rows)
    x_test = rng.standard_normal((test_rows, features))
    y_test = x_test @ theta + noise_std * rng.standard_normal(test_rows)
    return Built(
        X_train=x_train,
        y_train=y_train,
        X_test=x_test,
        y_test=y_test,
        train_rows=np.arange(rows, dtype=np.int64),
        test_rows=np.arange(rows, rows + test_rows, dtype=np.int64),
        task="regression",
        description=(
            f"Synthetic linear regression of paper 001, eq. (10): d = {rows}, p = {features}, "
            f"noise standard deviation {noise_std:g}"
        ),
        row_index="0-based row in order of generation (training rows, then test rows)",
        recipe={
            "generator": "numpy.random.default_rng(seed)",
            "draw_order": "theta*, X_train, z_train, X_test, z_test",
            "theta_star": "N(0, I_p)",
            "features": "x ~ N(0, I_p)",
            "targets": "y = x . theta* + z, z ~ N(0, noise_std^2)",
            "noise_std": noise_std,
            "reference": "paper 001 (CodedReduce), eq. (10) and Figs. 11-12",
        },
        extras={"theta_star": theta},
    )


def build_logistic(
    *, variant: str, seed: int | None, inputs: dict[str, RawFile], options: dict[str, Any]
) -> Built:
    """A small logistic-regression set with a known model, for smoke runs."""
    rows, features, test_rows = sizes(LOGISTIC_VARIANTS, variant, options)
    rng = np.random.default_rng(seed)
    theta = rng.standard_normal(features) * (LOGISTIC_SIGNAL / np.sqrt(features))

    def draw(count: int) -> tuple[np.ndarray, np.ndarray]:
        x = rng.standard_normal((count, features))
        p_plus = 1.0 / (1.0 + np.exp(-(x @ theta)))
        return x, np.where(rng.random(count) < p_plus, 1.0, -1.0)

    x_train, y_train = draw(rows)
    x_test, y_test = draw(test_rows)
    return Built(
        X_train=x_train,
        y_train=y_train,
        X_test=x_test,
        y_test=y_test,
        train_rows=np.arange(rows, dtype=np.int64),
        test_rows=np.arange(rows, rows + test_rows, dtype=np.int64),
        description=(
            f"Synthetic logistic regression for smoke runs: {rows} + {test_rows} rows, "
            f"p = {features}"
        ),
        row_index="0-based row in order of generation (training rows, then test rows)",
        recipe={
            "generator": "numpy.random.default_rng(seed)",
            "draw_order": "theta*, X_train, u_train, X_test, u_test",
            "theta_star": f"N(0, I_p) * {LOGISTIC_SIGNAL:g} / sqrt(p)",
            "features": "x ~ N(0, I_p)",
            "labels": "+1 if u < 1 / (1 + exp(-x . theta*)), else -1; u ~ U[0, 1)",
        },
        extras={"theta_star": theta},
    )
