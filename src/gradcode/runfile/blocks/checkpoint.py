"""The ``checkpoint:`` block: how often a run saves what it needs to resume, and how many
saves it keeps."""

from __future__ import annotations

from dataclasses import dataclass

from gradcode.runfile.section import Section


@dataclass(frozen=True)
class CheckpointConfig:
    every: int = 0
    keep: int = 2


def parse(top: Section) -> CheckpointConfig:
    """The ``checkpoint`` block of ``top``."""
    section = top.section("checkpoint", ("every", "keep"))
    return CheckpointConfig(
        every=section.integer("every", 0), keep=section.integer("keep", 2, minimum=1)
    )
