"""The cluster's network: one namespace per node, a switch namespace with a bridge, a veth
pair per node, token-bucket (tbf) rate limits in both directions.

Layout (nothing is added to the host's own namespace, not even an address)::

    gc-node0 [gc-veth 10.251.0.10] --- [gc-n0] \\
    gc-node1 [gc-veth 10.251.0.11] --- [gc-n1] -- gc-br (bridge, in namespace gc-switch)
    ...                                          /

A node's egress is a tbf on its own ``gc-veth``; its ingress is a tbf on the switch's end,
``gc-nI``, which is where traffic to the node leaves the bridge. Each node also has its own UTS
namespace, so its hostname is its name (``gc-node1``): slurmd finds its node name by it, and
MPICH and the runtime's record of where ranks ran tell nodes apart by it (which transport MPICH
uses between nodes is set separately, see ``mpi.mpich``).

Why ``ip``/``tc`` with argument lists rather than pyroute2: the namespaces must also be
entered by programs that are not Python (slurmd, slurmctld, hydra's proxies, through
``nsenter`` on the ``/run/netns`` mounts that ``ip netns`` makes), so iproute2 is needed on the
machine in any case and is already the tool the emulation is checked with; it creates a veth
pair directly into two namespaces in one call, and a qdisc with one ``tc`` call per link. A
netlink library would add a dependency (and pyroute2 has reorganised its API across recent
releases) to replace some twenty subprocess calls made once per ``up``. Every call is an
argument list, never a shell string, and a failure is one line naming the command and what it
printed.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from gradcode.cluster.spec import BRIDGE, NODE_IFACE, PREFIX, SWITCH, ClusterSpec, NodeSpec
from gradcode.cluster.state import State
from gradcode.errors import UserError
from gradcode.livecluster.files import RUN_DIR
from gradcode.livecluster.spec import DEFAULT_QUEUE, bucket_bytes
from gradcode.rate import Rate

NETNS_DIR = Path("/run/netns")
DEFAULT_QUEUE_US = DEFAULT_QUEUE.nanoseconds // 1000
OUR_NAMES = re.compile(rf"^{PREFIX}(switch|node[0-9]+)$")
#: capabilities bits (linux/capability.h): namespaces and mounts need SYS_ADMIN, links NET_ADMIN
CAP_NET_ADMIN, CAP_SYS_ADMIN = 12, 21

SINGLE_HOST_HINT = (
    "use the single-host emulation instead: mpiexec -n N python -m gradcode.train RUN.yaml "
    "(stragglers and bandwidth emulated by the run file)"
)


class ClusterError(UserError):
    """The cluster cannot be made, reached or removed (one line: what and why)."""


def require_privileges() -> None:
    """Refuse early, in one line, where namespaces cannot be made."""
    try:
        status = Path("/proc/self/status").read_text()
        effective = int(
            next(ln for ln in status.splitlines() if ln.startswith("CapEff:")).split()[1], 16
        )
    except (OSError, StopIteration, ValueError):
        effective = 0
    missing = [
        name
        for name, bit in (("CAP_NET_ADMIN", CAP_NET_ADMIN), ("CAP_SYS_ADMIN", CAP_SYS_ADMIN))
        if not effective >> bit & 1
    ]
    if missing:
        raise ClusterError(
            f"an emulated cluster needs root ({' and '.join(missing)} missing): " + SINGLE_HOST_HINT
        )
    for tool in ("ip", "tc", "nsenter", "unshare"):
        if shutil.which(tool) is None:
            raise ClusterError(f"{tool} is not installed: apt-get install iproute2 util-linux")


def run(
    argv: Sequence[str], *, check: bool = True, timeout: float = 60, stdin: str | None = None
) -> str:
    """Run one command (an argument list), ``stdin`` fed to it; its output, or a one-line
    ``ClusterError``."""
    try:
        done = subprocess.run(
            list(argv), input=stdin, capture_output=True, text=True, timeout=timeout, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise ClusterError(f"{' '.join(argv)}: {error}") from None
    if check and done.returncode != 0:
        said = " ".join((done.stderr or done.stdout).split())
        raise ClusterError(f"{' '.join(argv)} failed (exit {done.returncode}): {said}")
    return done.stdout


def netns_path(name: str) -> Path:
    return NETNS_DIR / name


def uts_path(name: str) -> Path:
    return RUN_DIR / "uts" / name


def enter(node: str) -> list[str]:
    """The argument prefix that runs a command on ``node`` (its network and hostname).

    ``nsenter`` rather than ``ip netns exec``: the latter remounts /sys in a new mount
    namespace, where slurmd no longer finds the cgroups it looks for.
    """
    return ["nsenter", f"--net={netns_path(node)}", f"--uts={uts_path(node)}", "--"]


def tbf(rate: Rate, queue_us: int = DEFAULT_QUEUE_US) -> list[str]:
    """tbf arguments for ``rate`` (whole bits per second, ``spec.parse_limit``, spelled so for
    tc) with a small bucket: 0.5 ms of the rate, at least four full frames (tbf cuts a
    segmentation-offloaded packet larger than that into frames).

    A link has no burst above its rate, and a large bucket makes one: measured on this
    kernel at 100 Mbit/s, a 200 kB message after idle went through a 125 kB bucket at 222
    Mbit/s, and through a 6 kB one at 95.9 Mbit/s (TCP's payload share of the rate), as
    long streams do. Less than about 0.5 ms of the rate starves tbf's timer at high rates
    (a 3 kB bucket passed 600 of 1000 Mbit/s; 125 kB passed 959).

    ``queue_us`` is tbf's latency bound: a packet waits at most this long for tokens before
    it is dropped (``ClusterSpec.enforced_queue_us``). Under time dilation it is the asked
    bound times the factor: the queue's bytes, and so the drops that TCP answers in real
    (undilated) time, stay those of the undilated link (measured at N = 84 scattered, K = 8:
    with the bound undilated the master's port dropped 49,000 packets in 5 iterations)."""
    bits = int(rate.bits_per_second)
    bound = f"{queue_us}us"
    return ["tbf", "rate", f"{bits}bit", "burst", str(bucket_bytes(rate)), "latency", bound]


#: a link's two directions, each limited by its own tbf (``NodeSpec`` fields of those names)
DIRECTIONS = ("egress", "ingress")


def limit_command(
    node: NodeSpec, direction: str, rate: Rate | None, queue_us: int = DEFAULT_QUEUE_US
) -> list[str]:
    """``tc`` limiting one direction of ``node``'s link to ``rate``: ``egress`` on the
    node's own ``gc-veth`` (in its namespace), ``ingress`` on the switch's port to it (in the
    switch's namespace). A tbf replaces whatever qdisc is there; ``rate`` None (unlimited)
    deletes it (a link without a limit has no qdisc of ours)."""
    if direction == "egress":
        namespace, device = node.name, NODE_IFACE
    elif direction == "ingress":
        namespace, device = SWITCH, node.switch_port
    else:
        raise ValueError(f"direction: egress or ingress (got {direction!r})")
    if rate is None:
        return ["tc", "-n", namespace, "qdisc", "del", "dev", device, "root"]
    limit = tbf(rate, queue_us)
    return ["tc", "-n", namespace, "qdisc", "replace", "dev", device, "root", *limit]


def _node_network(spec: ClusterSpec, node: NodeSpec, state: State) -> None:
    state.record("netns", name=node.name)
    run(["ip", "netns", "add", node.name])
    uts = uts_path(node.name)
    state.record("uts", name=node.name, path=str(uts))
    uts.parent.mkdir(parents=True, exist_ok=True)
    uts.touch()
    # a persistent UTS namespace bound to the file, its hostname set from inside it
    run(["unshare", f"--uts={uts}", "hostname", node.name])
    pair = ["veth", "peer", "name", node.switch_port, "netns", SWITCH]
    own = ["netns", node.name, "address", node_mac(node)]
    run(["ip", "link", "add", NODE_IFACE, *own, "type", *pair])
    inside = ["ip", "-n", node.name]
    run([*inside, "link", "set", "lo", "up"])
    run([*inside, "addr", "add", f"{node.address}/{spec.prefixlen}", "dev", NODE_IFACE])
    run([*inside, "link", "set", NODE_IFACE, "up"])
    if spec.dilation > 1:
        run(rto_min_command(spec, node))
    run(["ip", "-n", SWITCH, "link", "set", node.switch_port, "master", BRIDGE, "up"])
    for direction in DIRECTIONS:
        rate = getattr(node, direction)
        if rate is not None:  # unlimited: no qdisc at all
            run(limit_command(node, direction, rate, spec.enforced_queue_us))


#: Linux's floor on TCP's retransmission time-out (``TCP_RTO_MIN``, include/net/tcp.h)
TCP_RTO_MIN_MS = 200


def rto_min_command(spec: ClusterSpec, node: NodeSpec) -> list[str]:
    """``ip route change`` giving ``node``'s route to the other nodes TCP's minimum
    retransmission time-out times the dilation (``rto_min``, locked).

    Why: under dilation a segment waits K times longer in a link's queue, while TCP's floor
    of 200 ms stays in real time. At N = 156, K = 64 the nodes counted 69,000 time-outs in a
    run whether or not the queues dropped anything, and the retransmitted segments (6.4 %
    more) took the links' time (docs/measurements/fidelity.md, "CR at N = 156 and the links'
    queue"). With the floor dilated too, TCP's timers keep their place against the links."""
    return [
        *("ip", "-n", node.name, "route", "change", spec.subnet, "dev", NODE_IFACE),
        *("proto", "kernel", "scope", "link", "src", node.address),
        *("rto_min", f"{TCP_RTO_MIN_MS * spec.dilation}ms"),
    ]


def node_mac(node: NodeSpec) -> str:
    """The MAC address of ``node``'s ``gc-veth``: locally administered (``02:``), the rest
    from its index, so every node knows every other's before any of them is made."""
    return "02:67:63:" + ":".join(f"{b:02x}" for b in node.index.to_bytes(3, "big"))


def neighbour_batch(spec: ClusterSpec, node: NodeSpec) -> str:
    """``ip -batch`` lines giving ``node`` a permanent neighbour entry for every other node.

    Why: a kernel has one ARP table for all its network namespaces, and its garbage
    collection thresholds (``net.ipv4.neigh.default.gc_thresh3``, 1024 by default) count the
    entries of every namespace together. An all-to-all among N nodes needs N (N - 1) entries
    (1,482 at N = 39): past the threshold new entries fail ("neighbor table overflow",
    ``table_fulls``), connections wait on ARP, SYNs are retransmitted and connects fail with
    EHOSTUNREACH, which stalled every run above 32 nodes (docs/measurements/cluster-scale.md).
    Permanent entries are exempt from that count and make no ARP traffic; real nodes each
    have a table of their own and do not share this limit."""
    return "".join(
        f"neigh replace {other.address} lladdr {node_mac(other)} dev {NODE_IFACE} nud permanent\n"
        for other in spec.nodes
        if other.name != node.name
    )


def fill_neighbours(spec: ClusterSpec) -> None:
    """Every node's permanent neighbour entries (``neighbour_batch``), one ``ip`` call each."""
    for node in spec.nodes:
        batch = neighbour_batch(spec, node)
        if batch:
            run(["ip", "-n", node.name, "-batch", "-"], stdin=batch)


def create_network(spec: ClusterSpec, state: State) -> None:
    """Make the switch and every node (each step recorded in ``state`` before it is made),
    then every node's neighbour entries."""
    state.record("netns", name=SWITCH)
    run(["ip", "netns", "add", SWITCH])
    run(["ip", "-n", SWITCH, "link", "set", "lo", "up"])
    run(["ip", "-n", SWITCH, "link", "add", BRIDGE, "type", "bridge"])
    run(["ip", "-n", SWITCH, "link", "set", BRIDGE, "up"])
    for node in spec.nodes:
        _node_network(spec, node, state)
    fill_neighbours(spec)


def our_namespaces() -> list[str]:
    """Every network namespace named as the cluster names them (``gc-switch``, ``gc-nodeN``),
    recorded or not."""
    try:
        return sorted(p.name for p in NETNS_DIR.iterdir() if OUR_NAMES.match(p.name))
    except FileNotFoundError:
        return []


def processes_in(namespace: str) -> list[int]:
    """Pids of the processes whose network namespace is ``namespace``."""
    try:
        inode = os.stat(netns_path(namespace)).st_ino
    except OSError:
        return []
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.stat(entry / "ns" / "net").st_ino == inode:
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def terminate(pids: Sequence[int], grace: float = 5.0) -> None:
    """SIGTERM, then SIGKILL what is left after ``grace`` seconds."""
    alive = []
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
            alive.append(pid)
        except ProcessLookupError:
            continue
    deadline = time.monotonic() + grace
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = [pid for pid in alive if _alive(pid)]
    for pid in alive:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            continue


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def remove_namespace(name: str) -> None:
    """Stop everything running in a node's namespace, then delete it (its links and qdiscs go
    with it)."""
    terminate(processes_in(name))
    if netns_path(name).exists():
        run(["ip", "netns", "del", name], check=False)


def remove_uts(path: str) -> None:
    file = Path(path)
    if file.exists():
        run(["umount", str(file)], check=False)
        file.unlink(missing_ok=True)


def leftovers() -> list[str]:
    """What of the cluster is still on the machine: namespaces, host links, UTS mounts."""
    found = [f"netns {name}" for name in our_namespaces()]
    links = run(["ip", "-o", "link", "show"], check=False)
    found += [
        f"link {line.split(':')[1].strip()}"
        for line in links.splitlines()
        if line.split(":")[1].strip().startswith(PREFIX)
    ]
    mounts = Path("/proc/self/mounts").read_text()
    found += [f"mount {line.split()[1]}" for line in mounts.splitlines() if str(RUN_DIR) in line]
    return found
