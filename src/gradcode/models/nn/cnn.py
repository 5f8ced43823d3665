"""Paper 001's convolutional network (Reisizadeh et al., Table II), the network of its Fig. 13.

Table II lists the layers with parameters, and only those:

====  ======  ===============  ========================
 1    Conv2d  3 x 16 x 3 x 3   stride 1, padding (1, 1)
 2    Conv2d  16 x 64 x 4 x 4  stride 1, padding (0, 0)
 3    Linear  64 x 384
 4    Linear  384 x 192
 5    Linear  192 x 10
====  ======  ===============  ========================

Where the pooling is, the table does not say; the shapes do. A CIFAR-10 image is 3 x 32 x 32.
Convolution 1 (3 x 3, padding 1, stride 1) keeps 32 x 32 and gives 16 channels. The first
linear layer takes 64 inputs, which are convolution 2's 64 channels, so convolution 2 must
output 1 x 1; with a 4 x 4 kernel, stride 1 and no padding its output is ``in - 3`` on a side,
so its input is 4 x 4. Between the two convolutions, then, 32 x 32 becomes 4 x 4: a pooling by
8 in each direction. We take non-overlapping max pooling (window 8 x 8, stride 8; the same as
three 2 x 2 max poolings one after the other), the usual pooling of such networks (a global
pooling after convolution 2 would also fit the shapes, but would leave convolution 2 sliding
over 13 x 13 or 29 x 29 positions for one pooled value, which no such table describes). ReLU
follows both convolutions (before the pooling: max pooling and ReLU commute) and the first two
linear layers; the last gives the logits of softmax cross-entropy.

Parameters: 448 + 16,448 + 24,960 + 73,920 + 1,930 = 117,706 for 3 x 32 x 32 images and 10
classes: the paper's "p ~ 120,000" (Fig. 13's caption).

Initialisation, as the paper says: Glorot uniform for the convolutions' weights (fans counting
the kernel's positions), "the default initializer" (PyTorch's, the paper's library) for the
linear layers' weights and biases, and for the convolutions' biases, which the paper does not
name: ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``.

Rows are flattened images in channel-major order (``C, H, W``: CIFAR-10's own order, 1024 red
values, then green, then blue); the parameter ``image`` gives ``[C, H, W]``. Other sizes keep
the table's layers with the pooling window ``H/4 x W/4`` (so ``H`` and ``W`` must be multiples
of 4): scikit-learn's 8 x 8 digits are ``image: [1, 8, 8]``, pooled by 2.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import jax.numpy as jnp
import numpy as np
from jax import lax

from gradcode.errors import ParameterError
from gradcode.models.nn.init import glorot_uniform, torch_default_uniform
from gradcode.models.nn.layout import Layout
from gradcode.models.nn.network import Network, positive_int

#: Table II: output channels and kernel side of the two convolutions, widths of the hidden
#: linear layers
CONV1, KERNEL1 = 16, 3
CONV2, KERNEL2 = 64, 4
DENSE = (384, 192)
#: the table's shapes are (in, out, kh, kw) for a convolution: JAX's "IOHW"
DIMENSIONS = ("NCHW", "IOHW", "NCHW")


class CodedReduceCNN(Network):
    """Table II of paper 001 (see the module docstring for the reasoning on pooling)."""

    kind: ClassVar[str] = "coded-reduce-cnn"

    def __init__(
        self, *, image: Sequence[int] = (3, 32, 32), classes: int = 10, dtype: str = "float64"
    ) -> None:
        super().__init__(classes=classes, dtype=dtype)
        if isinstance(image, str | bytes) or not isinstance(image, Sequence) or len(image) != 3:
            raise ParameterError(
                f"model {self.kind}: image must be [channels, height, width] (got {image!r})"
            )
        channels, height, width = (positive_int(self.kind, "image", side) for side in image)
        if height % KERNEL2 or width % KERNEL2:
            raise ParameterError(
                f"model {self.kind}: image height and width must be multiples of 4 (got {image!r})"
            )
        self.image = (channels, height, width)
        self.pool = (height // KERNEL2, width // KERNEL2)

    def layout(self, features: int) -> Layout:
        channels, height, width = self.image
        if features != channels * height * width:
            raise ValueError(
                f"model {self.kind}: rows of {features} features are not "
                f"{channels} x {height} x {width} images"
            )
        return Layout.of(
            [
                ("conv1.weight", (channels, CONV1, KERNEL1, KERNEL1)),
                ("conv1.bias", (CONV1,)),
                ("conv2.weight", (CONV1, CONV2, KERNEL2, KERNEL2)),
                ("conv2.bias", (CONV2,)),
                ("dense0.weight", (CONV2, DENSE[0])),
                ("dense0.bias", (DENSE[0],)),
                ("dense1.weight", DENSE),
                ("dense1.bias", (DENSE[1],)),
                ("dense2.weight", (DENSE[1], self.classes)),
                ("dense2.bias", (self.classes,)),
            ]
        )

    def initial_arrays(self, layout: Layout, rng: np.random.Generator) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for name, shape in layout.entries:
            layer, what = name.split(".")
            weight = dict(layout.entries)[f"{layer}.weight"]
            positions = int(np.prod(weight[2:]))  # 1 for a dense layer
            fan_in = weight[0] * positions
            if layer.startswith("conv") and what == "weight":
                out[name] = glorot_uniform(rng, shape, fan_in, weight[1] * positions)
            else:
                out[name] = torch_default_uniform(rng, shape, fan_in)
        return out

    def activations(self, features: int) -> int:
        _channels, height, width = self.image
        convolved = 2 * CONV1 * height * width  # convolution 1, before and after ReLU
        pooled = CONV1 * (height // self.pool[0]) * (width // self.pool[1])
        return features + convolved + pooled + 2 * CONV2 + 2 * sum(DENSE) + self.classes

    def logits(self, params: dict[str, Any], x: Any) -> Any:
        x = x.reshape((x.shape[0], *self.image))
        pad = KERNEL1 // 2
        x = self._conv(x, params, "conv1", ((pad, pad), (pad, pad)))
        window = (1, 1, *self.pool)
        x = lax.reduce_window(x, -jnp.inf, lax.max, window, window, "VALID")
        x = self._conv(x, params, "conv2", ((0, 0), (0, 0)))
        x = x.reshape((x.shape[0], CONV2))
        for i in range(len(DENSE)):
            x = jnp.maximum(x @ params[f"dense{i}.weight"] + params[f"dense{i}.bias"], 0.0)
        last = len(DENSE)
        return x @ params[f"dense{last}.weight"] + params[f"dense{last}.bias"]

    @staticmethod
    def _conv(x: Any, params: dict[str, Any], layer: str, padding: Any) -> Any:
        """Convolution ``layer`` (stride 1) plus its bias, then ReLU."""
        out = lax.conv_general_dilated(
            x, params[f"{layer}.weight"], (1, 1), padding, dimension_numbers=DIMENSIONS
        )
        return jnp.maximum(out + params[f"{layer}.bias"][None, :, None, None], 0.0)
