"""Optimizer interface and step-size schedules."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

State = dict[str, np.ndarray]


class Schedule(ABC):
    """Step size ``eta_t`` of iteration ``t`` (0-based)."""

    @abstractmethod
    def __call__(self, t: int) -> float: ...


@dataclass(frozen=True)
class Constant(Schedule):
    eta: float

    def __call__(self, t: int) -> float:
        return self.eta


@dataclass(frozen=True)
class Inverse(Schedule):
    """``c1 / (t + c2)``: paper 001's SGD baseline (its ``c1, c2`` "numerically optimized")."""

    c1: float
    c2: float

    def __call__(self, t: int) -> float:
        return self.c1 / (t + self.c2)


class Optimizer(ABC):
    """One step per iteration on the decoded gradient; see the package docstring."""

    kind: ClassVar[str]

    def __init__(self, schedule: Schedule) -> None:
        self.schedule = schedule

    @abstractmethod
    def init(self, theta0: np.ndarray) -> State:
        """The state at iteration 0 from the initial parameters ``theta0`` ``(p,)``."""

    @abstractmethod
    def point(self, state: State) -> np.ndarray:
        """Where the gradient of the next step is evaluated, ``(p,)`` (do not modify)."""

    @abstractmethod
    def model(self, state: State) -> np.ndarray:
        """The current iterate ``theta_t``, ``(p,)`` (do not modify)."""

    @abstractmethod
    def step(self, state: State, t: int, gradient: np.ndarray) -> None:
        """Advance ``state`` in place from iteration ``t`` to ``t + 1``.

        ``gradient`` is ``grad F(point(state))``, shape ``(p,)``; it may be overwritten.
        """
