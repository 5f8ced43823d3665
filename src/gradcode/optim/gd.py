"""Plain gradient descent."""

from __future__ import annotations

import numpy as np

from gradcode.optim.base import Optimizer, State


class GradientDescent(Optimizer):
    """``theta_{t+1} = theta_t - eta_t grad F(theta_t)``."""

    kind = "gd"

    def init(self, theta0: np.ndarray) -> State:
        return {"theta": np.array(theta0, dtype=np.float64)}

    def point(self, state: State) -> np.ndarray:
        return state["theta"]

    def model(self, state: State) -> np.ndarray:
        return state["theta"]

    def step(self, state: State, t: int, gradient: np.ndarray) -> None:
        gradient *= self.schedule(t)
        state["theta"] = state["theta"] - gradient
