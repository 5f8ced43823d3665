"""The ``scheme:`` block: the gradient code and its parameters, checked against the rest of
the run when it is planned (``gradcode.runfile.plan``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gradcode.runfile.section import Section


@dataclass(frozen=True)
class SchemeConfig:
    name: str
    params: dict[str, Any]


def parse(top: Section) -> SchemeConfig:
    """The ``scheme`` block of ``top``."""
    scheme = top.section("scheme", ("name", "params"))
    return SchemeConfig(scheme.string("name"), scheme.mapping("params"))
