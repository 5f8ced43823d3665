"""``up``, ``down`` and ``status`` of the emulated cluster (what the CLI and the tests call),
and the handlers of ``gradcode cluster up|down|status|exec``."""

from __future__ import annotations

import argparse
import fcntl
import json
import os
import shutil
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from gradcode.cluster import slurm
from gradcode.cluster.during.command import given_command
from gradcode.cluster.latency import delay
from gradcode.cluster.mpi import hydra
from gradcode.cluster.network import namespaces
from gradcode.cluster.network.namespaces import ClusterError
from gradcode.cluster.network.running import current_spec as current_spec  # scripts' import
from gradcode.cluster.network.running import exec_argv
from gradcode.cluster.spec import (
    SWITCH,
    ClusterSpec,
    ClusterSpecError,
    build_spec,
    format_limit,
    parse_node_latency,
    parse_node_rate,
)
from gradcode.cluster.state import State, lock_path
from gradcode.livecluster.files import RUN_DIR
from gradcode.yamlfile import read_yaml


@contextmanager
def _exclusive() -> Iterator[None]:
    """One ``up`` or ``down`` at a time (a second one would undo the first's half-made work).

    A POSIX record lock (``lockf``), which belongs to this process alone, not a ``flock``,
    which a child forked just before this process was killed still held until it exec'd: a
    ``down`` right after a killed ``up`` then failed, on a loaded machine 3 times in 15."""
    lock = lock_path()
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "w") as handle:
        try:
            fcntl.lockf(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
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
        # the queue as asked (the kernel holds it times the dilation), the rates as enforced
        "dilation": spec.dilation,
        "queue": str(spec.queue),
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


def spec_from_arguments(args: argparse.Namespace) -> ClusterSpec:
    """The spec ``gradcode cluster up`` asks for: ``--spec``'s file, overridden by the options
    given on the line, each bad value named by where it came from (the file's key or the
    option)."""
    options: dict[str, Any] = {}
    names: dict[str, str] = {}  # how a bad value's message names its key: file or option
    if args.spec:
        loaded = read_yaml(args.spec, ClusterSpecError)
        if not isinstance(loaded, dict):
            raise ClusterSpecError(f"{args.spec}: expected a mapping of cluster options")
        options.update(loaded)
        names.update((key, f"{args.spec}: {key}") for key in loaded)
    for key in ("nodes", "subnet", "cpus", "rate", "egress", "ingress", "dilation", "queue"):
        if getattr(args, key) is not None:
            options[key] = getattr(args, key)
            names[key] = f"--{key}"
    for key in ("rate", "egress", "ingress"):
        if getattr(args, f"master_{key}") is not None:
            options[f"master_{key}"] = getattr(args, f"master_{key}")
            names[f"master_{key}"] = f"--master-{key}"
    if args.node_rate:
        node_rates = dict(options.get("node_rates") or {})
        node_rates.update(parse_node_rate(text) for text in args.node_rate)
        options["node_rates"] = node_rates
    for key in ("latency", "jitter", "master_latency", "master_jitter"):
        if getattr(args, key) is not None:
            options[key] = getattr(args, key)
            names[key] = f"--{key.replace('_', '-')}"
    if args.node_latency:
        node_latency = dict(options.get("node_latency") or {})
        node_latency.update(parse_node_latency(text) for text in args.node_latency)
        options["node_latency"] = node_latency
        names["node_latency"] = "--node-latency"
    return build_spec(options, names)


def cmd_up(args: argparse.Namespace) -> int:
    """``gradcode cluster up``: the cluster, then its status."""
    done = up(spec_from_arguments(args), with_slurm=not args.no_slurm)
    print(f"gradcode cluster: {done}")
    return print_status(False)


def cmd_down(_: argparse.Namespace) -> int:
    """``gradcode cluster down``: 1 when something was left behind."""
    left = down()
    if left:
        print(f"gradcode cluster: down, but left behind: {', '.join(left)}", file=sys.stderr)
        return 1
    print("gradcode cluster: down (no namespace, link, mount, daemon or delayer left)")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    """``gradcode cluster status [--json]``."""
    return print_status(args.json)


def print_status(as_json: bool) -> int:
    """``status()`` as JSON or as a table of the nodes and a line on the link delayer; 1 when
    no cluster is up."""
    status_now = status()
    if as_json:
        print(json.dumps(status_now, indent=1))
        return 0 if status_now else 1
    if status_now is None:
        print("gradcode cluster: no cluster is up")
        return 1
    state = "up" if status_now["complete"] and not status_now["missing"] else "BROKEN (run down)"
    dilated = f", dilation {status_now['dilation']}" if status_now["dilation"] != 1 else ""
    print(
        f"cluster {state}, subnet {status_now['subnet']}{dilated}, every link's queue "
        f"{status_now['queue']}"
    )
    head = f"{'node':10s} {'role':7s} {'address':14s} {'egress':>10s} {'ingress':>10s}"
    print(f"{head} {'latency':>9s} {'jitter':>9s}  slurm")
    for node in status_now["nodes"]:
        print(
            f"{node['name']:10s} {node['role']:7s} {node['address']:14s} "
            f"{node['egress']:>10s} {node['ingress']:>10s} {node['latency']:>9s} "
            f"{node['jitter']:>9s}  {node['slurm']}"
        )
    _print_delayer(status_now["delayer"])
    if status_now["missing"]:
        print(f"missing: {', '.join(status_now['missing'])}")
    return 0


def _print_delayer(delayer: dict[str, Any] | None) -> None:
    if delayer is not None and delayer["running"]:
        counts = f"{delayer['packets']} packets"
        if delayer["cpu_us_per_packet"] is not None:
            counts += (
                f", {delayer['cpu_us_per_packet']} us CPU each, released "
                f"{delayer['late_us_mean']} us late on average"
            )
        print(f"link delayer: running (pid {delayer['pid']}, {counts})")
    elif delayer is not None:
        when = ""
        if delayer["last_alive"] is not None:
            moment = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(delayer["last_alive"]))
            when = f", last alive {moment}"
        print(
            f"link delayer: DIED (pid {delayer['pid']}{when}): the links have no latency "
            "since (gradcode cluster up again remakes the cluster)"
        )


def cmd_exec(args: argparse.Namespace, rest: list[str]) -> int:
    """``gradcode cluster exec [--node NODE] -- CMD ...``: ``CMD`` in the node's namespaces."""
    argv = exec_argv(args.node, given_command(rest))
    os.execvp(argv[0], argv)
    return 127  # not reached
