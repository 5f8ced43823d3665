"""Constant vector: every coordinate of the message set to ``value`` (ByzShield's and
DETOX's "constant" attack)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from gradcode.attacks.base import Attack
from gradcode.checks import check_number


class ConstantAttack(Attack):
    """``value`` in every coordinate, whatever was computed."""

    name: ClassVar[str] = "constant"

    def __init__(self, value: float = 1.0) -> None:
        self.value = check_number("value", f"attack {self.name}", value)

    def params(self) -> dict[str, Any]:
        return {"value": self.value}

    def forge(self, own: np.ndarray, honest: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return np.full(own.shape, self.value)
