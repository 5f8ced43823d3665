"""Runs without SLURM: hydra's ``mpiexec`` across the emulated nodes.

Hydra starts its proxies through a launcher (``-launcher ssh -launcher-exec SCRIPT``); the
script written here plays ssh: it drops ssh's options, takes the host (a node's name) and runs
the proxy's command line in that node's namespaces with ``nsenter``. ``mpiexec`` itself runs
on the master's node with ``-iface gc-veth``, so the proxies call it back on the master's
address (node names resolve nowhere: the host's /etc/hosts is not touched).

Every rank gets MPICH on TCP over its node's link (``gradcode.cluster.mpi.mpich.MPICH_ENV``, which
says why) as ``-genv`` options.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence

from gradcode.cluster.during.command import given_command
from gradcode.cluster.mpi.mpich import MPICH_ENV
from gradcode.cluster.network.namespaces import NETNS_DIR
from gradcode.cluster.network.running import current_spec, exec_argv
from gradcode.cluster.spec import NODE_IFACE, ClusterSpec
from gradcode.errors import CLIError
from gradcode.launch.mpilib import hydra
from gradcode.livecluster.files import RUN_DIR

LAUNCHER = RUN_DIR / "launch"


def launcher_script(spec: ClusterSpec) -> str:
    """The ``-launcher-exec`` script: ``SCRIPT [ssh options] NODE COMMAND...``."""
    nodes = "|".join(node.name for node in spec.nodes)
    return f"""#!/bin/sh
# Written by gradcode cluster up: hydra's ssh launcher for the emulated nodes
# (mpiexec -launcher ssh -launcher-exec {LAUNCHER}). Drops ssh's options, then runs the
# command line, as ssh would, in the named node's network and UTS namespaces.
while [ $# -gt 0 ]; do
    case $1 in
        -[oiplF]) shift 2 ;;
        -*) shift ;;
        *) break ;;
    esac
done
node=$1
shift
case $node in
    {nodes}) ;;
    *) echo "gradcode cluster launcher: unknown node '$node' (nodes: {nodes})" >&2; exit 255 ;;
esac
exec nsenter "--net={NETNS_DIR}/$node" "--uts={RUN_DIR}/uts/$node" -- sh -c "$*"
"""


def mpiexec_command(
    spec: ClusterSpec, ranks: int, command: Sequence[str], *, mpiexec: str | None = None
) -> list[str]:
    """``mpiexec`` (default: MPICH's, ``gradcode.launch.mpilib.hydra``) over the nodes, one
    rank per node in turn from the master's (rank 0 on ``gc-node0``); run it on the master's
    node (``enter(spec.master.name)``)."""
    hosts = ",".join(node.name for node in spec.nodes)
    env = [part for key, value in MPICH_ENV.items() for part in ("-genv", key, value)]
    return [
        hydra() if mpiexec is None else mpiexec,
        "-launcher",
        "ssh",
        "-launcher-exec",
        str(LAUNCHER),
        "-iface",
        NODE_IFACE,
        "-hosts",
        hosts,
        *env,
        "-n",
        str(ranks),
        *command,
    ]


def cmd_mpiexec(args: argparse.Namespace, rest: list[str]) -> int:
    """``gradcode cluster mpiexec -n N [--print] -- CMD ...``: hydra's launcher on the master's
    node (``--print``: the line only)."""
    spec = current_spec()
    if args.n < 1:
        raise CLIError(f"-n must be at least 1, got {args.n}")
    argv = exec_argv(spec.master.name, mpiexec_command(spec, args.n, given_command(rest)))
    if args.print:
        print(" ".join(argv))
        return 0
    os.execvp(argv[0], argv)
    return 127  # not reached
