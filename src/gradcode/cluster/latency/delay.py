"""Latency on the cluster's links: the switch's rules that queue each port's packets, the
delayer process that holds them (``delayer``), started, changed, checked and stopped.

Why user space: this kernel loads no ``netem`` (nor ``fq`` or ``etf``), only ``tbf``, ``htb``
and ``clsact``; the netfilter queue does load. In the switch's namespace the bridge hands its
forwarded IPv4 packets to iptables (``br_netfilter``, ``net.bridge.bridge-nf-call-iptables=1``
there), and one rule per node,
``FORWARD -m physdev --physdev-out gc-nI -j NFQUEUE --queue-num I --queue-bypass``, queues what
leaves the bridge for node I's port; the node's ingress ``tbf`` on that port comes after. The
rules go with the switch's namespace at ``down``; the delayer is recorded in the state file
(pid, command, its config and status files) and stopped by ``down`` before the namespace. If
it dies, ``--queue-bypass`` lets the packets through undelayed (the kernel drops the queues of
a closed socket, and a queue without a listener is bypassed): nothing hangs, and ``cluster
status`` says the delayer died.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from gradcode.atomic import write_json
from gradcode.cluster.network import namespaces
from gradcode.cluster.network.namespaces import ClusterError
from gradcode.cluster.spec import SWITCH, ClusterSpec
from gradcode.cluster.state import State
from gradcode.duration import Duration
from gradcode.livecluster.delayer import MODULE, delayer_entry, read_status, running, stat_fields
from gradcode.livecluster.files import RUN_DIR, delayer_config_path, delayer_status_path

BRIDGE_SYSCTL = Path("/proc/sys/net/bridge/bridge-nf-call-iptables")
#: seconds the delayer has to bind its queues, or to take up a new setting
READY_SECONDS = 20.0


def log_path() -> Path:
    return RUN_DIR / "delayer.log"


def require_netfilter() -> None:
    """iptables and the bridge's netfilter hook, or one line saying what to install."""
    if shutil.which("iptables") is None:
        raise ClusterError("latency needs iptables: apt-get install iptables")
    if not BRIDGE_SYSCTL.parent.exists():
        if shutil.which("modprobe") is not None:
            namespaces.run(["modprobe", "br_netfilter"], check=False)
        if not BRIDGE_SYSCTL.parent.exists():
            raise ClusterError(
                "latency needs the kernel's br_netfilter (modprobe br_netfilter failed): "
                "this kernel cannot delay bridged packets"
            )


def rule(spec: ClusterSpec, index: int, action: str) -> list[str]:
    """The iptables command that adds (``-A``) or deletes (``-D``) node ``index``'s queue
    rule, run in the switch's namespace."""
    node = spec.nodes[index]
    return [
        "nsenter",
        f"--net={namespaces.netns_path(SWITCH)}",
        "--",
        "iptables",
        "-w",
        action,
        "FORWARD",
        "-m",
        "physdev",
        "--physdev-out",
        node.switch_port,
        "-j",
        "NFQUEUE",
        "--queue-num",
        str(node.index),
        "--queue-bypass",
    ]


def delays(spec: ClusterSpec) -> dict[int, tuple[Duration, Duration]]:
    """Each node's queue and its (latency, jitter)."""
    return {node.index: (node.latency, node.jitter) for node in spec.nodes}


def write_config(generation: int, settings: Mapping[int, tuple[Duration, Duration]]) -> None:
    write_json(
        delayer_config_path(),
        {
            "generation": generation,
            "queues": {
                str(q): [lat.nanoseconds, jit.nanoseconds] for q, (lat, jit) in settings.items()
            },
        },
    )


def start(
    spec: ClusterSpec,
    state: State,
    settings: Mapping[int, tuple[Duration, Duration]] | None = None,
) -> dict[str, Any]:
    """Start the delayer with ``spec``'s latencies (or ``settings``: each node's queue and its
    latency and jitter) and queue every port's packets to it (each step recorded first); the
    delayer's state entry."""
    require_netfilter()
    # per namespace since Linux 5.3; a new namespace starts with the host's default, so set
    state.record("bridge-nf", namespace=SWITCH)
    namespaces.run(
        [
            "nsenter",
            f"--net={namespaces.netns_path(SWITCH)}",
            "--",
            "sysctl",
            "-qw",
            "net.bridge.bridge-nf-call-iptables=1",
        ]
    )
    write_config(1, delays(spec) if settings is None else settings)
    delayer_status_path().unlink(missing_ok=True)
    argv = [
        *["nsenter", f"--net={namespaces.netns_path(SWITCH)}", "--"],
        *[sys.executable, "-m", MODULE, "--config", str(delayer_config_path())],
        *["--status", str(delayer_status_path())],
    ]
    entry = state.record("delayer", argv=argv)
    with open(log_path(), "ab") as log:
        process = subprocess.Popen(
            argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True
        )
    state.update(entry, pid=process.pid, started=time.time())
    # its own exit status, not /proc: while nsenter turns into python its command line flickers
    _await_generation(1, process.pid, lambda: process.poll() is None)
    for node in spec.nodes:
        state.record("queue-rule", index=node.index, port=node.switch_port)
        namespaces.run(rule(spec, node.index, "-A"))
    return entry


def _await_generation(generation: int, pid: int, alive: Callable[[], bool]) -> None:
    """Wait until the delayer's status says ``generation`` (it bound its queues or took a new
    setting); a one-line ``ClusterError`` with its last words if it died (``alive`` says
    whether it still runs) or took too long."""
    deadline = time.monotonic() + READY_SECONDS
    while time.monotonic() < deadline:
        status = read_status()
        if status is not None and status.get("generation") == generation:
            return
        if not alive():
            break
        time.sleep(0.02)
    hung = alive()
    where = ""
    if hung:
        where = f" ({_where(pid)})"
        os.kill(pid, signal.SIGUSR1)  # its stack to the log (faulthandler), innermost first
        time.sleep(0.5)
    try:
        lines = log_path().read_text().strip().splitlines()
    except OSError:
        lines = []
    frames = [line.strip() for line in lines if line.strip().startswith("File ")]
    said = frames[:1] if hung and frames else lines[-1:]  # where it hangs, or why it died
    what = f"did not answer in {READY_SECONDS:g} s{where}" if hung else "died"
    raise ClusterError(f"the link delayer (pid {pid}) {what}: {' '.join(said) or 'no output'}")


def _where(pid: int) -> str:
    """A process's program, scheduler state and kernel wait channel: where it hangs."""
    try:
        program = Path(f"/proc/{pid}/comm").read_text().strip()
        state = stat_fields(pid)[0]
        channel = Path(f"/proc/{pid}/wchan").read_text().strip() or "-"
    except OSError as error:
        return str(error)
    return f"{program}, state {state}, waiting in {channel}"


def entry_of(state: State) -> dict[str, Any] | None:
    return delayer_entry(state.resources)


def cpu_seconds(pid: int | None) -> float | None:
    """User and system CPU seconds process ``pid`` has used so far (``None``: no such
    process)."""
    if not pid:
        return None
    try:
        fields = stat_fields(pid)
    except (OSError, IndexError):
        return None
    # utime and stime, fields 14 and 15 of stat(5), counted from the state (field 3)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def reconfigure(settings: Mapping[int, tuple[Duration, Duration]], state: State) -> int:
    """Give the running delayer new (latency, jitter) per queue and wait until it holds them;
    the setting's generation."""
    entry = entry_of(state)
    pid = None if entry is None else entry.get("pid")
    if entry is None or not running(pid):
        raise ClusterError(
            "the cluster's link delayer is not running"
            + (" (it died: gradcode cluster up again remakes the cluster)" if entry else "")
        )
    status = read_status() or {}
    generation = int(status.get("generation", 1)) + 1
    current = {
        int(q): d for q, d in json.loads(delayer_config_path().read_text())["queues"].items()
    }
    unknown = set(settings) - set(current)
    if unknown:
        raise ClusterError(f"the delayer has no queue for node(s) {sorted(unknown)}")
    write_config(
        generation, {**{q: tuple(map(Duration, d)) for q, d in current.items()}, **settings}
    )
    os.kill(int(pid), 1)  # SIGHUP: read the config again
    _await_generation(generation, int(pid), lambda: running(int(pid)))
    return generation


def stop(state: State) -> None:
    """Stop the delayer if it runs (it lets every packet it holds go first); the rules go
    with the switch's namespace."""
    entry = entry_of(state)
    if entry is not None and running(entry.get("pid")):
        namespaces.terminate([int(entry["pid"])])


#: what ``start`` records
KINDS = ("bridge-nf", "delayer", "queue-rule")


def remove(spec: ClusterSpec, state: State) -> None:
    """Undo ``start`` with the cluster still up: the rules out, the delayer stopped (after
    the rules, so nothing is queued with no one to let it go) and forgotten."""
    for entry in state.resources:
        if entry["kind"] == "queue-rule":
            namespaces.run(rule(spec, entry["index"], "-D"), check=False)
    stop(state)
    state.data["resources"] = [e for e in state.resources if e["kind"] not in KINDS]
    state.save()
    for path in (delayer_config_path(), delayer_status_path()):
        path.unlink(missing_ok=True)


def report(state: State) -> dict[str, Any] | None:
    """The delayer as ``cluster status`` shows it: running or died, and its counters."""
    entry = entry_of(state)
    if entry is None:
        return None
    pid = entry.get("pid")
    status = read_status() or {}
    alive = running(pid)
    packets = status.get("packets") or 0
    return {
        "pid": pid,
        "running": alive,
        "realtime": status.get("realtime"),
        "packets": packets,
        "cpu_seconds": status.get("cpu_seconds"),
        # the CPU since the queues were bound: Python's start-up is no packet's
        "cpu_us_per_packet": (
            round((status["cpu_seconds"] - status["cpu_seconds_at_start"]) / packets * 1e6, 1)
            if packets
            else None
        ),
        "late_us_mean": status.get("late_us_mean"),
        # its status is rewritten every second: when it died, to within a second
        "last_alive": status.get("wall"),
    }


def leftovers() -> list[str]:
    """Delayer processes still alive anywhere on the machine."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and entry.name != str(os.getpid()) and running(int(entry.name)):
            found.append(f"process {MODULE} {entry.name}")
    return found
