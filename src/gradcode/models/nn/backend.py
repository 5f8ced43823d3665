"""The JAX glue of the networks: a forward pass in, compiled per-row losses, gradient sums and
predicted classes out, on flat NumPy float64 vectors at the boundary.

Every call runs under ``jax.enable_x64(True)`` (a context manager: the process's default stays
as it was), so a float64 network computes in float64 and a float32 one in float32 (the inputs
are cast to the network's dtype, the outputs back to float64).
"""

from __future__ import annotations

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


class Compiled:
    """The compiled functions of one network on rows of one width (``jax.jit`` compiles once
    per shape of the rows, i.e. once per partition size)."""

    def __init__(self, layout: Layout, logits: Logits, dtype: str) -> None:
        self.layout, self.dtype = layout, np.dtype(dtype)

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
        with jax.enable_x64(True):
            out = self._gradient(*self._inputs(theta, x), y)
            # a copy: JAX's buffer is read-only, and the runtime adds into what it gets
            return np.array(out, dtype=np.float64)

    def losses(self, theta: np.ndarray, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """``l(x_i, y_i; theta)`` per row, float64 ``(rows,)``."""
        with jax.enable_x64(True):
            return np.array(self._losses(*self._inputs(theta, x), y), dtype=np.float64)

    def predict(self, theta: np.ndarray, x: np.ndarray) -> np.ndarray:
        """The class of highest logit per row, ``(rows,)``."""
        with jax.enable_x64(True):
            return np.asarray(self._predict(*self._inputs(theta, x)))
