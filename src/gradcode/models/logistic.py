"""Logistic regression on +-1 labels (Tandon et al.; paper 000 on Amazon, paper 001 on GISETTE)."""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from gradcode.models.base import Matrix, Model, matvec, rmatvec


def expit(z: np.ndarray) -> np.ndarray:
    """``1 / (1 + exp(-z))`` elementwise, ``(rows,)``: SciPy's formula in NumPy.

    Where ``exp(-z)`` overflows (``z < -709``) the result is the exact limit 0, as SciPy's.
    NumPy's ``exp`` may differ from the C library's in the last bit, so this may differ from
    ``scipy.special.expit`` by up to two units in the last place (tested).
    Not SciPy itself: it costs every MPI rank 0.26 s to import, on cores the ranks share.
    """
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-z))


class LogisticRegression(Model):
    """``l(x, y; theta) = log(1 + exp(-y x.theta))``; metric: test AUC (``roc_auc``)."""

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
            out["auc"] = roc_auc(y_test, matvec(X_test, theta))
            out["test_loss"] = float(np.mean(self.losses(X_test, y_test, theta)))
        out.update(_relative_error(theta, previous))
        return out


def roc_auc(labels: np.ndarray, scores: np.ndarray) -> float:
    """Area under the ROC curve of ``scores`` ``(m,)`` for labels ``(m,)`` (positive: > 0),
    both classes present: the Mann-Whitney statistic with ties counted one half, the value
    scikit-learn's ``roc_auc_score`` gives. Written here because importing scikit-learn took
    the master of every training job a second or more before its first iteration's metrics.
    """
    scores = np.asarray(scores, dtype=np.float64)
    positive = np.asarray(labels) > 0
    order = np.argsort(scores, kind="stable")
    _, first, counts = np.unique(scores[order], return_index=True, return_counts=True)
    ranks = np.empty(scores.size)
    ranks[order] = np.repeat(first + (counts + 1) / 2.0, counts)  # 1-based, ties averaged
    n_positive = int(positive.sum())
    n_negative = scores.size - n_positive
    u = float(ranks[positive].sum()) - n_positive * (n_positive + 1) / 2.0
    return u / (n_positive * n_negative)


def _relative_error(theta: np.ndarray, previous: np.ndarray | None) -> dict[str, float]:
    """Paper 001, eq. (9): ``||theta_t - theta_{t-1}||^2 / ||theta_{t-1}||^2``."""
    if previous is None:
        return {}
    denominator = float(previous @ previous)
    difference = theta - previous
    value = float(difference @ difference) / denominator if denominator > 0 else float("inf")
    return {"relative_error": value}
