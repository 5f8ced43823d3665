"""The ``log:`` block: how often the loss and metric are evaluated, and whether every iterate
is saved."""

from __future__ import annotations

from dataclasses import dataclass

from gradcode.runfile.section import Section


@dataclass(frozen=True)
class LogConfig:
    metrics_every: int = 1
    trajectory: bool = False


def parse(top: Section) -> LogConfig:
    """The ``log`` block of ``top``."""
    section = top.section("log", ("metrics_every", "trajectory"))
    return LogConfig(
        metrics_every=section.integer("metrics_every", 1),
        trajectory=section.boolean("trajectory", False),
    )
