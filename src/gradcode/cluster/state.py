"""What ``gradcode cluster up`` made, written down before it is made.

Every step records its resource in the state file first and only then creates it, so a
``down`` after a killed ``up`` still knows every namespace, mount, daemon and file it must
remove (removing something that was never made is a no-op). The file's folder and its reading
are ``gradcode.livecluster.files``' (a run reads the state there without the cluster).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gradcode.atomic import atomic_file
from gradcode.cluster.spec import ClusterSpec
from gradcode.livecluster import files
from gradcode.livecluster.files import read_state, state_path


def lock_path() -> Path:
    """The lock that lets one ``up`` or ``down`` run at a time: beside the runtime folder, not
    in it, since ``down`` removes the folder while holding the lock."""
    folder = files.RUN_DIR  # at call time, as state_path reads it
    return folder.with_name(f"{folder.name}.lock")


class State:
    """The state file: the spec and the ordered list of resources made for it."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data

    @property
    def resources(self) -> list[dict[str, Any]]:
        return self.data.setdefault("resources", [])

    @classmethod
    def load(cls) -> State | None:
        """The current state, or ``None`` when no cluster was brought up."""
        data = read_state()
        return None if data is None else cls(data)

    def save(self) -> None:
        state_path().parent.mkdir(parents=True, exist_ok=True)
        with atomic_file(state_path()) as handle:
            json.dump(self.data, handle, indent=1)

    def record(self, kind: str, **fields: Any) -> dict[str, Any]:
        """Write down a resource before making it (once: recording it again is a no-op)."""
        entry = {"kind": kind, **fields}
        for existing in self.resources:
            if existing["kind"] == kind and all(existing.get(k) == v for k, v in fields.items()):
                return existing
        self.resources.append(entry)
        self.save()
        return entry

    def update(self, entry: dict[str, Any], **fields: Any) -> None:
        """Add what is known only after making it (a daemon's pid)."""
        entry.update(fields)
        self.save()

    def forget(self) -> None:
        state_path().unlink(missing_ok=True)


def running_spec() -> ClusterSpec | None:
    """The spec of the emulated cluster that is up on this machine (its state file, complete),
    or ``None``."""
    state = State.load()
    if state is None or not state.data.get("complete"):
        return None
    return ClusterSpec.from_dict(state.data["spec"])
