"""The interface of a network: a layout of named parameter arrays, their initial values, and a
forward pass; the loss, gradient sums and metrics follow from them."""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Iterable
from typing import Any, ClassVar

import numpy as np

from gradcode.errors import ParameterError
from gradcode.models.base import Matrix, Model
from gradcode.models.logistic import _relative_error
from gradcode.models.nn.backend import Compiled
from gradcode.models.nn.layout import Layout
from gradcode.sparsity import is_sparse

DTYPES = ("float64", "float32")
#: bytes one compiled call may fill with activations (``Network.rows_per_call``)
CALL_MEMORY = 256 * 2**20
#: bytes of memory per activation value in a call, per byte of the dtype: the forward
#: pass's values, the backward pass's as many again, and room for XLA's temporaries
ACTIVATION_COPIES = 4


def positive_int(owner: str, name: str, value: object) -> int:
    """``value`` as an int >= 1; ``ParameterError`` naming ``owner`` (a model kind) and
    ``name`` otherwise."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ParameterError(f"model {owner}: {name} must be an integer >= 1 (got {value!r})")
    return value


class Network(Model):
    """A classifier of rows into ``classes`` classes with softmax cross-entropy; subclasses
    give ``layout``, ``initial_arrays`` and ``logits``."""

    task: ClassVar[str] = "multiclass"

    def __init__(self, *, classes: int = 10, dtype: str = "float64") -> None:
        self.classes = positive_int(self.kind, "classes", classes)
        if dtype not in DTYPES:
            raise ParameterError(
                f"model {self.kind}: dtype must be one of {', '.join(DTYPES)} (got {dtype!r})"
            )
        self.dtype = dtype
        self._compiled: dict[int, Compiled] = {}

    @abstractmethod
    def layout(self, features: int) -> Layout:
        """The parameter arrays for rows of ``features`` columns (``ValueError``: unfit)."""

    @abstractmethod
    def initial_arrays(self, layout: Layout, rng: np.random.Generator) -> dict[str, np.ndarray]:
        """Name -> initial array, drawn from ``rng`` in ``layout`` order."""

    @abstractmethod
    def activations(self, features: int) -> int:
        """How many values the forward pass computes per row (every layer's output): what
        sizes the runs of rows one compiled call takes."""

    @abstractmethod
    def logits(self, params: dict[str, Any], x: Any) -> Any:
        """The forward pass in ``jax.numpy``: ``x`` ``(rows, features)`` -> ``(rows,
        classes)``; only this is written by hand, ``jax.grad`` derives the gradient."""

    # -- what the runtime asks ----------------------------------------------------------------
    def parameter_count(self, features: int) -> int:
        return self.layout(features).size

    def initial_parameters(self, features: int, seed: int) -> np.ndarray:
        layout = self.layout(features)
        return layout.flatten(self.initial_arrays(layout, np.random.default_rng(seed)))

    def compiled(self, features: int) -> Compiled:
        """The compiled functions for rows of ``features`` columns (kept per width)."""
        if features not in self._compiled:
            self._compiled[features] = Compiled(
                self.layout(features), self.logits, self.dtype, self.rows_per_call(features)
            )
        return self._compiled[features]

    def rows_per_call(self, features: int) -> int:
        """The most rows one compiled call takes: ``CALL_MEMORY`` of activations."""
        per_row = self.activations(features) * np.dtype(self.dtype).itemsize * ACTIVATION_COPIES
        return max(1, CALL_MEMORY // per_row)

    def _rows(self, X: Matrix) -> np.ndarray:
        return np.asarray(X.toarray() if is_sparse(X) else X)

    def labels(self, y: np.ndarray) -> np.ndarray:
        """``y`` as int32 classes; ``ValueError`` unless every label is in ``0 .. C-1`` (JAX
        would clamp an index out of range, silently)."""
        labels = np.asarray(y)
        classes = labels.astype(np.int32)
        exact = np.array_equal(classes, labels)
        if labels.size and (not exact or classes.min() < 0 or classes.max() >= self.classes):
            raise ValueError(f"labels must be the integers 0 .. {self.classes - 1}")
        return classes

    def warm_up(self, parts: Iterable[tuple[Matrix, np.ndarray]]) -> None:
        """Compile the gradient for every shape of ``parts`` (one gradient sum per shape, at
        zero parameters): ``jax.jit`` compiles on a shape's first call, which took 0.35 s of
        CPU for a small perceptron and seconds on a loaded machine, and would otherwise land
        in the first iteration's measured compute."""
        seen = set()
        for X, y in parts:
            if X.shape not in seen:
                seen.add(X.shape)
                self.partial_gradient(X, y, np.zeros(self.parameter_count(X.shape[1])))

    def partial_gradient(self, X: Matrix, y: np.ndarray, theta: np.ndarray) -> np.ndarray:
        x = self._rows(X)
        return self.compiled(x.shape[1]).gradient_sum(theta, x, self.labels(y))

    def losses(self, X: Matrix, y: np.ndarray, theta: np.ndarray) -> np.ndarray:
        x = self._rows(X)
        return self.compiled(x.shape[1]).losses(theta, x, self.labels(y))

    def predict(self, X: Matrix, theta: np.ndarray) -> np.ndarray:
        """The predicted class of every row of ``X``, ``(rows,)``."""
        x = self._rows(X)
        return self.compiled(x.shape[1]).predict(theta, x)

    def accuracy(self, X: Matrix, y: np.ndarray, theta: np.ndarray) -> float:
        """The fraction of rows of ``X`` whose predicted class is ``y``'s."""
        return float(np.mean(self.predict(X, theta) == self.labels(y)))

    def metrics(
        self,
        theta: np.ndarray,
        previous: np.ndarray | None,
        X_test: Matrix,
        y_test: np.ndarray,
        theta_star: np.ndarray | None,
    ) -> dict[str, float]:
        out: dict[str, float] = {}
        if y_test.size:
            out["accuracy"] = self.accuracy(X_test, y_test, theta)
            out["test_loss"] = float(np.mean(self.losses(X_test, y_test, theta)))
        out.update(_relative_error(theta, previous))
        return out
