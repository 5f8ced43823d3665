"""The ``optimizer:`` block: the update rule and its step, constant or ``c1 / (t + c2)``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from gradcode.runfile.section import Section, number


@dataclass(frozen=True)
class OptimizerConfig:
    kind: str
    step: float | None = None
    c1: float | None = None
    c2: float | None = None


def parse(top: Section) -> OptimizerConfig:
    """The ``optimizer`` block of ``top``."""
    optimizer = top.section("optimizer", ("kind", "step"))
    kind = optimizer.string("kind", "gd", choices=("gd", "nesterov", "tandon"))
    step = optimizer.raw("step")
    if isinstance(step, Mapping):
        schedule = Section(step, "optimizer.step", ("c1", "c2"))
        return OptimizerConfig(
            kind,
            c1=schedule.number("c1", positive=True),
            c2=schedule.number("c2", positive=True),
        )
    return OptimizerConfig(kind, step=number("optimizer.step", step, positive=True))
