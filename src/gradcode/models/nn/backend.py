"""The JAX glue of the networks: a forward pass in, compiled per-row losses, gradient sums and
predicted classes out, on flat NumPy float64 vectors at the boundary.

Every call runs under ``jax.enable_x64(True)`` (a context manager: the process's default stays
as it was), so a float64 network computes in float64 and a float32 one in float32 (the inputs
are cast to the network's dtype, the outputs back to float64).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from gradcode.models.nn.layout import Layout

#: ``logits(params, x)``: params by name (``Layout.unflatten``), ``x`` ``(rows, features)`` ->
#: ``(rows, classes)``, written with ``jax.numpy`` and ``jax.lax``
Logits = Callable[[dict[str, Any], Any], Any]


def cross_entropy(logits: Any, labels: Any) -> Any:
    """Softmax cross-entropy per row: ``logsumexp(z) - z[y]``, ``(rows,)``."""
    picked = jnp.take_along_axis(logits, labels[:, None], axis=1)[:, 0]
    return jax.nn.logsumexp(logits, axis=1) - picked


def chunks(rows: int, most: int) -> list[slice]:
    """``rows`` cut into the fewest runs of at most ``most`` rows, of sizes that differ by one
    at most (so ``jax.jit`` compiles for two shapes at most); one empty run for no rows."""
    count = max(1, -(-rows // most))
    edges = [rows * i // count for i in range(count + 1)]
    return [slice(start, stop) for start, stop in itertools.pairwise(edges)]


class Compiled:
    """The compiled functions of one network on rows of one width (``jax.jit`` compiles once
    per shape of the rows). A call takes ``rows_per_call`` rows at most, so that the
    activations of a whole training set (a CNN's are about a megabyte per image) never sit in
    memory at once; a gradient sum over more rows adds the sums of the runs, in order."""

    def __init__(self, layout: Layout, logits: Logits, dtype: str, rows_per_call: int) -> None:
        self.layout, self.dtype, self.rows_per_call = layout, np.dtype(dtype), rows_per_call

        def forward(theta: Any, x: Any) -> Any:
            return logits(layout.unflatten(theta), x)

        def losses(theta: Any, x: Any, y: Any) -> Any:
            return cross_entropy(forward(theta, x), y)

        def total(theta: Any, x: Any, y: Any) -> Any:
            return jnp.sum(losses(theta, x, y))

        self._losses = jax.jit(losses)
        self._gradient = jax.jit(jax.grad(total))
        self._predict = jax.jit(lambda theta, x: jnp.argmax(forward(theta, x), axis=1))

    def _inputs(self, theta: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        if theta.shape != (self.layout.size,):
            raise ValueError(f"parameters of shape {theta.shape}, expected ({self.layout.size},)")
        return np.asarray(theta, dtype=self.dtype), np.asarray(x, dtype=self.dtype)

    def gradient_sum(self, theta: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """``sum_i grad l(x_i, y_i; theta)``, float64 ``(p,)``."""
        total = None
        with jax.enable_x64(True):
            for run in chunks(len(y), self.rows_per_call):
                # a copy: JAX's buffer is read-only, and the runtime adds into what it gets
                part = np.array(self._gradient(*self._inputs(theta, x[run]), y[run]), np.float64)
                total = part if total is None else np.add(total, part, out=total)
        assert total is not None
        return total

    def losses(self, theta: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """``l(x_i, y_i; theta)`` per row, float64 ``(rows,)``."""
        with jax.enable_x64(True):
            parts = [
                np.asarray(self._losses(*self._inputs(theta, x[run]), y[run]), np.float64)
                for run in chunks(len(y), self.rows_per_call)
            ]
        return np.concatenate(parts)

    def predict(self, theta: np.ndarray, x: np.ndarray) -> np.ndarray:
        """The class of highest logit per row, ``(rows,)``."""
        with jax.enable_x64(True):
            parts = [
                np.asarray(self._predict(*self._inputs(theta, x[run])))
                for run in chunks(len(x), self.rows_per_call)
            ]
        return np.concatenate(parts)
