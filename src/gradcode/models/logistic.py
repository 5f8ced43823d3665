"""Logistic regression on +-1 labels (Tandon et al.; paper 000 on Amazon, paper 001 on GISETTE)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from scipy.special import expit

from gradcode.models.base import Matrix, Model, matvec, rmatvec


class LogisticRegression(Model):
    """``l(x, y; theta) = log(1 + exp(-y x.theta))``; metric: test AUC (scikit-learn)."""

    kind: ClassVar[str] = "logistic"
    task: ClassVar[str] = "classification"

    def partial_gradient(self, X: Matrix, y: np.ndarray, theta: np.ndarray) -> np.ndarray:
        margin = y * matvec(X, theta)
        # -y / (1 + exp(y x.theta)), written with expit so large margins neither overflow
        # nor lose the tiny gradients of well-classified rows
        weights = -y * expit(-margin)
        return rmatvec(X, weights)

    def losses(self, X: Matrix, y: np.ndarray, theta: np.ndarray) -> np.ndarray:
        return np.logaddexp(0.0, -y * matvec(X, theta))

    def metrics(
        self,
        theta: np.ndarray,
        previous: np.ndarray | None,
        X_test: Matrix,
        y_test: np.ndarray,
        theta_star: np.ndarray | None,
    ) -> dict[str, float]:
        out: dict[str, float] = {}
        if y_test.size and len(np.unique(y_test)) == 2:
            # imported here: scikit-learn takes a second to import and only rank 0 needs it
            from sklearn.metrics import roc_auc_score

            out["auc"] = float(roc_auc_score(y_test, matvec(X_test, theta)))
            out["test_loss"] = float(np.mean(self.losses(X_test, y_test, theta)))
        out.update(_relative_error(theta, previous))
        return out


def _relative_error(theta: np.ndarray, previous: np.ndarray | None) -> dict[str, float]:
    """Paper 001, eq. (9): ``||theta_t - theta_{t-1}||^2 / ||theta_{t-1}||^2``."""
    if previous is None:
        return {}
    denominator = float(previous @ previous)
    difference = theta - previous
    value = float(difference @ difference) / denominator if denominator > 0 else float("inf")
    return {"relative_error": value}
