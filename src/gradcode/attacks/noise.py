"""Noise: the honest message plus Gaussian noise of ``scale`` times its RMS (the runtime's
adversary before attacks were plug-ins, unchanged: the same draws for the same seed)."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from gradcode.attacks.base import Attack
from gradcode.checks import check_number


class NoiseAttack(Attack):
    """``own + N(0, (scale * rms(own))^2)`` per coordinate (``rms`` of 0 counts as 1)."""

    name: ClassVar[str] = "noise"

    def __init__(self, scale: float = 1.0) -> None:
        self.scale = check_number("scale", f"attack {self.name}", scale, positive=True)

    def params(self) -> dict[str, Any]:
        return {"scale": self.scale}

    def forge(self, own: np.ndarray, honest: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        rms = float(np.sqrt(np.mean(own * own))) or 1.0
        # one draw of own.size normals, scaled, added: the exact sequence of operations the
        # worker ran in place before, so existing runs keep their bits
        return own + rng.standard_normal(own.size) * (self.scale * rms)
