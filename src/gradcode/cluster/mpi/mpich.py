"""MPICH on the emulated cluster: its transport pinned to TCP on each node's link.

``MPICH_ENV`` pins MPICH's netmod to libfabric's tcp provider on the node's link, and that is
what keeps messages on the links: with the wheel's default netmod (UCX), ranks in different
namespaces of one kernel reach each other through shared memory whatever their hostnames
(20 MB in 0.053 s with a hostname per node, 0.086 s with one for all, through 100 Mbit/s
links); with ofi/tcp it takes 1.66 s (96 Mbit/s) either way. Each node's own hostname still
matters to slurmd, to the runtime's record of where ranks ran, and to MPICH's notion of a
host (``MPIR_CVAR_NOLOCAL`` is not needed). README, "A multi-node cluster on one machine".

Both ways of starting MPICH on the cluster take it from here: hydra's ``mpiexec`` as ``-genv``
options (``gradcode.cluster.mpi.hydra``), and ``srun`` under the slurm-cluster profile through
``python -m gradcode.cluster.mpi.mpich CMD ...``, which runs ``CMD`` (``srun --mpi=pmi2 ...``) with
this environment added: the profile's ``mpi`` resource is a command prefix, and an ``exec``
leaves no process between the job's shell and ``srun`` (signals reach it as before).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence

from gradcode.cluster.spec import NODE_IFACE

#: the transport between nodes: libfabric's tcp provider through the node's link
MPICH_ENV = {
    "MPIR_CVAR_CH4_NETMOD": "ofi",
    "FI_PROVIDER": "tcp",
    "FI_TCP_IFACE": NODE_IFACE,
}

USAGE = "usage: python -m gradcode.cluster.mpi.mpich CMD [ARG ...] (e.g. srun --mpi=pmi2 -n 4 ...)"


def environment(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """``env`` (default: this process's) with MPICH on TCP over the node links."""
    return {**(os.environ if env is None else env), **MPICH_ENV}


def main(argv: Sequence[str] | None = None) -> int:
    """Replace this process with ``argv`` run in ``environment()``."""
    command = list(sys.argv[1:] if argv is None else argv)
    if not command:
        print(USAGE, file=sys.stderr)
        return 2
    try:
        os.execvpe(command[0], command, environment())
    except OSError as error:
        print(f"gradcode.cluster.mpi.mpich: cannot run {command[0]}: {error}", file=sys.stderr)
        return 127
    return 127  # not reached: exec replaced this process


if __name__ == "__main__":
    sys.exit(main())
