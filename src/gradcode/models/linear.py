"""Linear regression (paper 001's synthetic experiments, eq. (10))."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from gradcode.models.base import Matrix, Model, matvec, rmatvec
from gradcode.models.logistic import _relative_error


class LinearRegression(Model):
    """``l(x, y; theta) = (x.theta - y)^2 / 2``; metrics: relative and normalized error."""

    kind: ClassVar[str] = "linear"
    task: ClassVar[str] = "regression"

    def partial_gradient(self, X: Matrix, y: np.ndarray, theta: np.ndarray) -> np.ndarray:
        return rmatvec(X, matvec(X, theta) - y)

    def losses(self, X: Matrix, y: np.ndarray, theta: np.ndarray) -> np.ndarray:
        return 0.5 * (matvec(X, theta) - y) ** 2

    def metrics(
        self,
        theta: np.ndarray,
        previous: np.ndarray | None,
        X_test: Matrix,
        y_test: np.ndarray,
        theta_star: np.ndarray | None,
    ) -> dict[str, float]:
        out = _relative_error(theta, previous)
        if theta_star is not None:
            # paper 001, Figs. 10-12: ||theta_t - theta*||^2 / ||theta*||^2
            difference = theta - theta_star
            out["normalized_error"] = float(difference @ difference) / float(
                theta_star @ theta_star
            )
        if y_test.size:
            out["test_loss"] = float(np.mean(self.losses(X_test, y_test, theta)))
        return out
