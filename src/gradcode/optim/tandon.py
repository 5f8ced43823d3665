"""The accelerated update of Tandon et al.'s public code (rashisht1/gradient_coding, the master
loop of ``src/naive.py`` and the coded variants), so that their runs can be compared.

Their master keeps ``beta`` and an auxiliary ``u`` (``utemp``, zero at the start) and, at
iteration ``i`` (0-based), with the decoded sum ``g`` of per-example gradients at ``beta``::

    theta = 2 / (i + 2)
    ytemp = (1 - theta) beta + theta u
    beta' = ytemp - (eta_i / N) g - 2 alpha eta_i beta
    u     = beta + (beta' - beta) / theta

with ``eta_i = 10`` and ``alpha = 1 / N`` in their ``main.py``. In our terms ``(1/N) g + 2 alpha
beta`` is ``grad F(beta)`` for the objective with ``l2 = alpha`` (``gradcode.models``), so the
step is ``beta' = ytemp - eta_i grad F(beta)``: the gradient is taken at ``beta``, not at
``ytemp`` as in textbook NAG.
"""

from __future__ import annotations

import numpy as np

from gradcode.optim.base import Optimizer, State


class TandonAccelerated(Optimizer):
    kind = "tandon"

    def init(self, theta0: np.ndarray) -> State:
        theta0 = np.array(theta0, dtype=np.float64)
        return {"beta": theta0, "u": np.zeros_like(theta0)}

    def point(self, state: State) -> np.ndarray:
        return state["beta"]

    def model(self, state: State) -> np.ndarray:
        return state["beta"]

    def step(self, state: State, t: int, gradient: np.ndarray) -> None:
        theta = 2.0 / (t + 2.0)
        beta = state["beta"]
        ytemp = (1.0 - theta) * beta + theta * state["u"]
        gradient *= self.schedule(t)
        new = ytemp - gradient
        state["u"] = beta + (new - beta) * (1.0 / theta)
        state["beta"] = new
