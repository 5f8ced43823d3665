"""A multilayer perceptron: dense layers with ReLU between them, softmax cross-entropy."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any, ClassVar

import jax.numpy as jnp
import numpy as np

from gradcode.errors import ParameterError
from gradcode.models.nn.init import torch_default_uniform
from gradcode.models.nn.layout import Layout
from gradcode.models.nn.network import Network, positive_int


class MLP(Network):
    """``features -> hidden[0] -> ... -> classes``, ReLU after every layer but the last.

    Parameters (a run file's ``model.params``): ``hidden``, the widths of the hidden layers
    (``[]``: softmax regression), ``classes``, ``dtype``. The flat vector holds, layer by
    layer, ``dense{i}.weight`` ``(in, out)`` (the layer computes ``x @ W + b``) then
    ``dense{i}.bias`` ``(out,)``. Initial weights and biases: PyTorch's default for
    ``nn.Linear``, ``U(-1/sqrt(in), 1/sqrt(in))``.
    """

    kind: ClassVar[str] = "mlp"

    def __init__(
        self, *, hidden: Sequence[int] = (32,), classes: int = 10, dtype: str = "float64"
    ) -> None:
        super().__init__(classes=classes, dtype=dtype)
        if isinstance(hidden, str | bytes) or not isinstance(hidden, Sequence):
            raise ParameterError(f"model mlp: hidden must be a list of widths (got {hidden!r})")
        self.hidden = tuple(positive_int(self.kind, "hidden", width) for width in hidden)

    def widths(self, features: int) -> list[int]:
        """Every layer's width, input and output included."""
        return [positive_int(self.kind, "features", features), *self.hidden, self.classes]

    def layout(self, features: int) -> Layout:
        widths = self.widths(features)
        entries: list[tuple[str, tuple[int, ...]]] = []
        for i, (fan_in, fan_out) in enumerate(itertools.pairwise(widths)):
            entries += [(f"dense{i}.weight", (fan_in, fan_out)), (f"dense{i}.bias", (fan_out,))]
        return Layout.of(entries)

    def initial_arrays(self, layout: Layout, rng: np.random.Generator) -> dict[str, np.ndarray]:
        return {
            name: torch_default_uniform(rng, shape, fan_in=layout_fan_in(layout, name))
            for name, shape in layout.entries
        }

    def activations(self, features: int) -> int:
        return sum(self.widths(features))

    def logits(self, params: dict[str, Any], x: Any) -> Any:
        layers = len(self.hidden) + 1
        for i in range(layers):
            x = x @ params[f"dense{i}.weight"] + params[f"dense{i}.bias"]
            if i < layers - 1:
                x = jnp.maximum(x, 0.0)
        return x


def layout_fan_in(layout: Layout, name: str) -> int:
    """The fan-in of the dense layer that parameter ``name`` belongs to: the first dimension
    of its ``.weight``."""
    layer = name.rsplit(".", 1)[0]
    return dict(layout.entries)[f"{layer}.weight"][0]
