"""Nesterov's accelerated gradient as paper 000 uses it (it cites Bubeck, "Convex Optimization:
Algorithms and Complexity", 2015, Section 3.7.1).

With ``lambda_0 = 0``, ``lambda_s = (1 + sqrt(1 + 4 lambda_{s-1}^2)) / 2`` and
``gamma_s = (1 - lambda_s) / lambda_{s+1}``, from ``x_1 = y_1 = theta_0``::

    y_{s+1} = x_s - eta_s grad F(x_s)
    x_{s+1} = (1 - gamma_s) y_{s+1} + gamma_s y_s

The gradient is evaluated at ``x`` (``point``); the iterate reported is ``y`` (``model``).
Iteration ``t`` (0-based) is Bubeck's ``s = t + 1``; Bubeck's step is ``1 / beta``, ours the
schedule's ``eta_t``.
"""

from __future__ import annotations

import math

import numpy as np

from gradcode.optim.base import Optimizer, State


def _next_lambda(value: float) -> float:
    return (1.0 + math.sqrt(1.0 + 4.0 * value * value)) / 2.0


class Nesterov(Optimizer):
    kind = "nesterov"

    def init(self, theta0: np.ndarray) -> State:
        theta0 = np.array(theta0, dtype=np.float64)
        # lambda_1 = 1 (from lambda_0 = 0); kept in the state so a resumed run continues it
        return {"x": theta0, "y": theta0.copy(), "lam": np.array(_next_lambda(0.0))}

    def point(self, state: State) -> np.ndarray:
        return state["x"]

    def model(self, state: State) -> np.ndarray:
        return state["y"]

    def step(self, state: State, t: int, gradient: np.ndarray) -> None:
        lam = float(state["lam"])
        lam_next = _next_lambda(lam)
        gamma = (1.0 - lam) / lam_next
        gradient *= self.schedule(t)
        y_next = state["x"] - gradient
        state["x"] = (1.0 - gamma) * y_next + gamma * state["y"]
        state["y"] = y_next
        state["lam"] = np.array(lam_next)
