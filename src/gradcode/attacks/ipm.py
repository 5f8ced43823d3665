"""Inner-product manipulation, "fall of empires" (Xie, Koyejo & Gupta, UAI 2019): a negative
multiple of the honest messages' mean, so the aggregate's inner product with the true
gradient turns negative. Omniscient: it needs one honest message at least."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from gradcode.attacks.base import Attack
from gradcode.checks import check_number


class InnerProductAttack(Attack):
    """``-epsilon * mean(honest)`` (the paper's 0.1 by default)."""

    name: ClassVar[str] = "ipm"
    omniscient: ClassVar[bool] = True
    min_honest: ClassVar[int] = 1

    def __init__(self, epsilon: float = 0.1) -> None:
        self.epsilon = check_number("epsilon", f"attack {self.name}", epsilon, positive=True)

    def params(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon}

    def forge(self, own: np.ndarray, honest: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return -self.epsilon * honest.mean(axis=0)
