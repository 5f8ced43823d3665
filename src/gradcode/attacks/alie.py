"""A little is enough (Baruch, Baruch & Goldberg, NeurIPS 2019): the honest messages' mean
plus ``z`` standard deviations, coordinate by coordinate. Omniscient: it reads the honest
messages, and needs two of them for a standard deviation."""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from gradcode.attacks.base import Attack
from gradcode.checks import check_number


class ALIEAttack(Attack):
    """``mean(honest) + z * std(honest)`` per coordinate (population standard deviation).

    ``z`` is given, not derived: the paper's ``z_max`` depends on the aggregator it evades,
    which a gradient code's decoder is not; 1.0 by default.
    """

    name: ClassVar[str] = "alie"
    omniscient: ClassVar[bool] = True
    min_honest: ClassVar[int] = 2

    def __init__(self, z: float = 1.0) -> None:
        self.z = check_number("z", f"attack {self.name}", z)

    def params(self) -> dict[str, Any]:
        return {"z": self.z}

    def forge(self, own: np.ndarray, honest: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        return honest.mean(axis=0) + self.z * honest.std(axis=0)
