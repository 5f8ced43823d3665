"""An emulated cluster for the root tests of one module: up without SLURM for the module's
tests, down after them, skipped when another cluster is up on this machine."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from gradcode.cluster import control
from gradcode.cluster.spec import ClusterSpec, build_spec
from gradcode.cluster.state import State
from gradcode.livecluster import files


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


def as_if_on_node(monkeypatch: pytest.MonkeyPatch, folder: Path, name: str = "gc-node0") -> None:
    """Make this process count as on node ``name`` of a cluster whose state file a test wrote
    (nothing is made): the nodes' namespace folder is ``folder``, where ``name``'s namespace
    is this process's own (a link that stat follows, where ``ip netns add`` mounts one)."""
    folder.mkdir(exist_ok=True)
    if not (folder / name).is_symlink():
        os.symlink("/proc/self/ns/net", folder / name)
    monkeypatch.setattr(files, "NETNS_DIR", folder)
