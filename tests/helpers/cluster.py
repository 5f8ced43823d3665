"""An emulated cluster for the root tests of one module: up without SLURM for the module's
tests, down after them, skipped when another cluster is up on this machine."""

from __future__ import annotations

import json
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


def state_of_a_cluster_up(
    monkeypatch: pytest.MonkeyPatch, folder: Path, options: Mapping[str, Any]
) -> ClusterSpec:
    """Make a cluster built from ``options`` count as up, for this process and the ones it
    starts: its state file, as ``gradcode cluster up`` leaves it, in ``folder`` (nothing else
    is made); its spec."""
    folder.mkdir()
    spec = build_spec(options)
    document = {"spec": spec.as_dict(), "slurm": False, "complete": True, "resources": []}
    (folder / "state.json").write_text(json.dumps(document))
    monkeypatch.setattr(files, "RUN_DIR", folder)
    monkeypatch.setenv(files.RUN_DIR_ENV, str(folder))
    return spec


def as_if_on_node(monkeypatch: pytest.MonkeyPatch, folder: Path, name: str = "gc-node0") -> None:
    """Make this process, and the ones it starts, count as on node ``name`` of a cluster whose
    state file a test wrote (nothing is made): the nodes' namespace folder is ``folder``, where
    ``name``'s namespace is the reader's own (a link that stat follows, where ``ip netns add``
    mounts one)."""
    folder.mkdir(exist_ok=True)
    if not (folder / name).is_symlink():
        os.symlink("/proc/self/ns/net", folder / name)
    monkeypatch.setattr(files, "NETNS_DIR", folder)
    monkeypatch.setenv(files.NETNS_DIR_ENV, str(folder))
