"""Reversed gradient: the honest message, sign-flipped and scaled (DRACO's and DETOX's
"reverse" attack)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from gradcode.attacks.base import Attack
from gradcode.checks import check_number


class ReversedAttack(Attack):
    """``-scale * own``."""

    name: ClassVar[str] = "reversed"

    def __init__(self, scale: float = 1.0) -> None:
        self.scale = check_number("scale", f"attack {self.name}", scale, positive=True)

    def params(self) -> dict[str, Any]:
        return {"scale": self.scale}

    def forge(self, own: np.ndarray, honest: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return -self.scale * own
