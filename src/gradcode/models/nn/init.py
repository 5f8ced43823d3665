"""Initial weights drawn with NumPy from the run's seed (the same numbers on every machine and
with every JAX version): the two initializers paper 001's network uses."""

from __future__ import annotations

import math

import numpy as np


def glorot_uniform(rng: np.random.Generator, shape: tuple[int, ...], fan_in: int, fan_out: int):
    """Glorot and Bengio's uniform initializer: ``U(-b, b)``, ``b = sqrt(6 / (fan_in +
    fan_out))`` (for a convolution, both fans count the kernel's positions)."""
    bound = math.sqrt(6.0 / (fan_in + fan_out))
    return rng.uniform(-bound, bound, size=shape)


def torch_default_uniform(rng: np.random.Generator, shape: tuple[int, ...], fan_in: int):
    """PyTorch's default for ``nn.Linear`` and ``nn.Conv2d`` weights and biases:
    ``kaiming_uniform_(a=sqrt(5))`` for the weights, whose bound ``gain * sqrt(3 / fan_in)``
    with ``gain = sqrt(2 / (1 + 5))`` is ``1 / sqrt(fan_in)``, and the same bound for the
    biases: ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))``."""
    bound = 1.0 / math.sqrt(fan_in) if fan_in > 0 else 0.0
    return rng.uniform(-bound, bound, size=shape)
