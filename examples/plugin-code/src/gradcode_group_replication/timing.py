"""A heavy-tailed master-worker timing model: Pareto computation times.

The papers' master-worker model (``master-worker``) draws the time to compute one data subset
from a shifted exponential. Measured cloud stragglers often have heavier tails; here
``T1 = t1 (1 + X)`` with ``X`` Lomax-distributed (Pareto type II) with tail index ``shape``,
so ``T1`` is Pareto with minimum ``t1`` and mean ``t1 shape / (shape - 1)``. Communication is
instantaneous. Everything else (how messages become ready, decodability by the code's own
``completion_times``) is the built-in model's: this class only replaces its draws.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from gradcode.timing import MasterWorkerModel
from gradcode.timing.model import Draws


class ParetoMasterWorker(MasterWorkerModel):
    """Master-worker timing with Pareto times per data subset (see the module docstring)."""

    name = "pareto-master-worker"
    parameters: ClassVar[dict[str, str]] = {
        "t1": "minimum time to compute one data subset",
        "shape": "Pareto tail index (> 1, so that the mean is finite)",
    }
    optional = frozenset()

    def __init__(self, t1: float, shape: float) -> None:
        for key, value in (("t1", t1), ("shape", shape)):
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"parameters.{key}: must be a number (got {value!r})")
        if not t1 > 0:
            raise ValueError(f"parameters.t1: must be > 0 (got {t1})")
        if not shape > 1:
            raise ValueError(f"parameters.shape: must be > 1 for a finite mean (got {shape})")
        self.t1, self.shape = float(t1), float(shape)
        self.comm = None

    def params(self) -> dict[str, Any]:
        return {"t1": self.t1, "shape": self.shape}

    def check(self, scheme: Any) -> None:
        if getattr(scheme, "capabilities", None) is None or scheme.capabilities.topology == "ring":
            raise ValueError(f"model {self.name} simulates gradient codes, not {scheme.name}")

    def sample(self, rng: np.random.Generator, trials: int, workers: int) -> Draws:
        """``compute``: ``T1`` per worker, ``(trials, workers)``."""
        return {"compute": self.t1 * (1.0 + rng.pareto(self.shape, size=(trials, workers)))}

    def heterogeneous(self) -> bool:
        return False

    def extras(self, scheme: Any) -> dict[str, float]:
        return {}
