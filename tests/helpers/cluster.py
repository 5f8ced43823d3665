"""An emulated cluster for the root tests of one module: up without SLURM for the module's
tests, down after them, skipped when another cluster is up on this machine."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest

from gradcode.cluster import control
from gradcode.cluster.spec import ClusterSpec, build_spec
from gradcode.cluster.state import State


def emulated_cluster(options: Mapping[str, Any]) -> Iterator[ClusterSpec]:
    """Yield the spec of a cluster brought up from ``options`` (``gradcode.cluster.spec``),
    taken down afterwards (a generator for a module-scoped fixture)."""
    if State.load() is not None:
        pytest.skip("a cluster is already up on this machine (gradcode cluster down first)")
    spec = build_spec(options)
    try:
        control.up(spec, with_slurm=False)
        yield spec
    finally:
        control.down()
