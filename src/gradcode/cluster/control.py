"""``up``, ``down`` and ``status`` of the emulated cluster (what the CLI and the tests call)."""

from __future__ import annotations

import fcntl
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from gradcode.cluster import slurm
from gradcode.cluster.latency import delay
from gradcode.cluster.mpi import hydra
from gradcode.cluster.network import namespaces
from gradcode.cluster.network.namespaces import ClusterError
from gradcode.cluster.spec import SWITCH, ClusterSpec, format_limit
from gradcode.cluster.state import State, lock_path, running_spec
from gradcode.clusterstate.files import RUN_DIR


@contextmanager
def _exclusive() -> Iterator[None]:
    """One ``up`` or ``down`` at a time (a second one would undo the first's half-made work)."""
    lock = lock_path()
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise ClusterError("another gradcode cluster up or down is running") from None
        yield


def up(spec: ClusterSpec, *, with_slurm: bool = True) -> str:
    """Bring the cluster up; a no-op when the same one is already up. Returns what was done."""
    namespaces.require_privileges()
    with _exclusive():
        return _up(spec, with_slurm)


def down() -> list[str]:
    """Remove everything ``up`` made (also after a killed ``up``); what is left, if anything."""
    namespaces.require_privileges()
    with _exclusive():
        return _down()


def _up(spec: ClusterSpec, with_slurm: bool) -> str:
    if with_slurm:
        slurm.require_slurm()
    current = State.load()
    if current is not None:
        same = (
            current.data.get("spec") == spec.as_dict() and current.data.get("slurm") == with_slurm
        )
        if current.data.get("complete") and same and not _missing(current):
            return "already up"
        if current.data.get("complete") and not same:
            raise ClusterError(
                "a cluster with another spec (or with SLURM where this one has none, or the other "
                "way round) is up: gradcode cluster down first"
            )
        _down()  # what a killed or broken up left behind
    state = State({"spec": spec.as_dict(), "slurm": with_slurm, "complete": False})
    state.save()
    try:
        namespaces.create_network(spec, state)
        if spec.delayed:
            delay.start(spec, state)
        hydra.LAUNCHER.write_text(hydra.launcher_script(spec))
        hydra.LAUNCHER.chmod(0o755)
        if with_slurm:
            slurm.start_slurm(spec, state)
    except BaseException:
        _down()
        raise
    state.data["complete"] = True
    state.save()
    return "up"


def _missing(state: State) -> list[str]:
    """Recorded namespaces or daemons that are gone (the cluster needs remaking)."""
    gone = [
        entry["name"]
        for entry in state.resources
        if entry["kind"] == "netns" and not namespaces.netns_path(entry["name"]).exists()
    ]
    gone += [
        entry["name"]
        for entry in state.resources
        if entry["kind"] == "daemon" and not _running(entry)
    ]
    entry = delay.entry_of(state)
    if entry is not None and "pid" in entry and not delay.running(entry["pid"]):
        gone.append("delayer")
    return gone


def _running(entry: dict[str, Any]) -> bool:
    pid = entry.get("pid")
    if not pid:
        return False
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    # nsenter and setpriv exec the daemon, so the process is the program they were given
    program = next((a for a in entry.get("argv") or [] if a.startswith("/usr/sbin/")), None)
    return program is not None and cmdline[0].decode() == program


def _stop_munged_by_pid_file() -> None:
    try:
        pid = int(Path("/run/munge/munged.pid").read_text().split()[0])
        comm = Path(f"/proc/{pid}/comm").read_text().strip()
    except (OSError, ValueError, IndexError):
        return
    if comm == "munged":
        namespaces.terminate([pid])


def _down() -> list[str]:
    state = State.load() or State({})
    # daemons outside the namespaces (munged) by pid; everything inside goes with its namespace
    for entry in reversed(state.resources):
        if entry["kind"] == "daemon" and _running(entry):
            namespaces.terminate([int(entry["pid"])])
        elif entry == {"kind": "daemon", "name": "munged"}:
            # started, but up was killed before it wrote down the pid: munged's own pid file
            _stop_munged_by_pid_file()
    delay.stop(state)  # before its namespace, so that it lets go of what it holds
    nodes = [e["name"] for e in state.resources if e["kind"] == "netns" and e["name"] != SWITCH]
    for name in sorted(set(nodes) | set(namespaces.our_namespaces()) - {SWITCH}):
        namespaces.remove_namespace(name)
    namespaces.remove_namespace(SWITCH)
    for entry in state.resources:
        if entry["kind"] == "uts":
            namespaces.remove_uts(entry["path"])
        elif entry["kind"] == "slurm.conf":
            slurm.restore_conf(entry)
        elif entry["kind"] == "dir":
            shutil.rmtree(entry["path"], ignore_errors=True)
    for path in (RUN_DIR / "uts").glob("*"):
        namespaces.remove_uts(str(path))
    state.forget()
    # the launcher, task prolog, rank records and pid files: nothing of it outlives the cluster
    shutil.rmtree(RUN_DIR, ignore_errors=True)
    return namespaces.leftovers() + delay.leftovers()


def status() -> dict[str, Any] | None:
    """The cluster as recorded and as running: nodes, addresses, rates, latencies, SLURM node
    states, and the link delayer (``None`` when no link has a latency)."""
    state = State.load()
    if state is None or "spec" not in state.data:
        return None
    spec = ClusterSpec.from_dict(state.data["spec"])
    states = slurm.node_states(spec) if state.data.get("slurm") else {}
    return {
        "complete": bool(state.data.get("complete")),
        "missing": _missing(state),
        "subnet": spec.subnet,
        "nodes": [
            {
                "name": node.name,
                "role": "master" if node.master else "worker",
                "address": node.address,
                "egress": format_limit(node.egress),
                "ingress": format_limit(node.ingress),
                "latency": str(node.latency),
                "jitter": str(node.jitter),
                "slurm": states.get(node.name, "-") if state.data.get("slurm") else "no slurm",
            }
            for node in spec.nodes
        ],
        "delayer": delay.report(state),
    }


def current_spec() -> ClusterSpec:
    """The spec of the cluster that is up, or a one-line error saying to bring one up."""
    spec = running_spec()
    if spec is None:
        raise ClusterError("no emulated cluster is up: gradcode cluster up --nodes N first")
    return spec


def exec_argv(node: str, command: list[str]) -> list[str]:
    """``command`` run on ``node`` (checked against the cluster that is up)."""
    spec = current_spec()
    return [*namespaces.enter(spec.node(node).name), *command]
