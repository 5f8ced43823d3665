"""The interface of a model: per-partition gradient sums, the objective, metrics, and what the
runtime asks before training: the parameter count, the initial parameters, the task."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any, ClassVar

import numpy as np

from gradcode.sparsity import is_sparse

Matrix = Any  # scipy.sparse CSR array/matrix or a dense float64 ndarray


def matvec(X: Matrix, theta: np.ndarray) -> np.ndarray:
    """``X @ theta`` as a float64 ndarray ``(rows,)``, for CSR and dense ``X`` alike."""
    return np.asarray(X @ theta, dtype=np.float64).reshape(-1)


def rmatvec(X: Matrix, residual: np.ndarray) -> np.ndarray:
    """``X.T @ residual`` as a float64 ndarray ``(p,)``."""
    if is_sparse(X):
        return np.asarray(X.T @ residual, dtype=np.float64).reshape(-1)
    return residual @ X


#: what a model may declare as its ``task``: the ``meta["task"]`` of the data it trains on
#: (``classification``: labels +-1; ``regression``: real targets; ``multiclass``: labels
#: ``0 .. C-1``)
TASKS = ("classification", "regression", "multiclass")


class Model(ABC):
    """A loss per example; see the package docstring for the objective and the scaling.

    A subclass names itself (``kind``, the name run files use), declares its ``task`` (one of
    ``TASKS``) and takes its parameters as keyword arguments of its constructor (a run file's
    ``model.params``). The defaults below are the linear models': one parameter per feature,
    starting at zero; a network overrides both.
    """

    kind: ClassVar[str]
    #: the task the model needs in a prepared data set's ``meta["task"]`` (one of ``TASKS``)
    task: ClassVar[str]

    def parameter_count(self, features: int) -> int:
        """The length ``p`` of the flat parameter vector for rows of ``features`` columns
        (``ValueError`` when the model cannot take such rows)."""
        return features

    def initial_parameters(self, features: int, seed: int) -> np.ndarray:
        """``theta_0``: float64 ``(parameter_count(features),)``, a function of ``seed`` only
        (the same on every machine). The linear models start at zero, whatever the seed."""
        del seed  # zero needs no draw
        return np.zeros(self.parameter_count(features))

    def warm_up(self, parts: Iterable[tuple[Matrix, np.ndarray]]) -> None:
        """Pay now, before training, what the first gradient of each of ``parts`` (a worker's
        partitions) would otherwise pay once inside a timed iteration; the numpy models have
        nothing to pay (a network compiles, ``gradcode.models.nn.network``)."""
        del parts

    @abstractmethod
    def partial_gradient(self, X: Matrix, y: np.ndarray, theta: np.ndarray) -> np.ndarray:
        """``sum_i grad l(x_i, y_i; theta)`` over the rows of ``X``, shape ``(p,)``."""

    @abstractmethod
    def losses(self, X: Matrix, y: np.ndarray, theta: np.ndarray) -> np.ndarray:
        """``l(x_i, y_i; theta)`` per row, shape ``(rows,)``."""

    def loss(self, X: Matrix, y: np.ndarray, theta: np.ndarray, l2: float = 0.0) -> float:
        """The objective ``F(theta)`` on ``(X, y)`` (mean loss plus ``l2 ||theta||^2``)."""
        mean = float(np.mean(self.losses(X, y, theta))) if y.size else float("nan")
        return mean + l2 * float(theta @ theta)

    @staticmethod
    def full_gradient(data_sum: np.ndarray, point: np.ndarray, rows: int, l2: float) -> np.ndarray:
        """``grad F(point)`` from the decoded sum of per-example gradients: ``(p,)``."""
        gradient = data_sum / rows
        if l2:
            gradient += (2.0 * l2) * point
        return gradient

    @abstractmethod
    def metrics(
        self,
        theta: np.ndarray,
        previous: np.ndarray | None,
        X_test: Matrix,
        y_test: np.ndarray,
        theta_star: np.ndarray | None,
    ) -> dict[str, float]:
        """The papers' metrics of iterate ``theta`` (``previous``: the one before)."""
