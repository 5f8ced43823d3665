"""``gradcode cluster ulfm -n N -- CMD ...``: a fault-tolerant MPI job (Open MPI with ULFM)
over the emulated nodes, one rank per node, that survives a lost node.

Open MPI's launcher runs on the master's node alone: inside a SLURM job, PRRTE's SLURM
components are switched off (``PRTE_MCA_ras=^slurm``, ``PRTE_MCA_plm=^slurm``) so that it
starts no daemon on the other nodes (a lost daemon ends the whole job:
``gradcode.cluster.mpi.noderank``), and every rank moves itself to its node
(``python -m gradcode.cluster.mpi.noderank``: rank ``r`` to the ``r``-th of the job's nodes, or
of the cluster's outside SLURM). Messages go over the links (the TCP BTL on ``gc-veth``).

A killed rank is the launcher's child, so ULFM hears of it at once. A node cut off is silent:
ULFM's heartbeat detector (``mpi_ft_detector``; every rank observes the previous one in a
ring) declares a rank dead when ``--detector-timeout`` seconds pass without its heartbeat
(sent every ``--detector-period``; ULFM wants timeout > 3 periods). Heartbeats go out from
MPI's progress engine, so a rank that spends longer than the timeout outside MPI (loading a
large data set, an injected delay of seconds) is declared dead too: give such runs a longer
timeout. ULFM can beat from a thread of its own (``mpi_ft_detector_thread``), but with it
Open MPI 5.0.11 never leaves ``MPI_Finalize`` (every rank in
``ompi_comm_failure_detector_finalize``, measured with and without a failure), so it is off.

What SLURM controls then: the allocation (the nodes, held ``--exclusive``), the time limit
and cancellation (the ranks are children of the launcher in the job's batch step, which
SLURM tracks by parentage), and the node list the ranks follow. What it does not: a step on
each worker's node (no task prolog records there, ``sstat`` sees the batch step only).
A node SLURM finds dead (slurmd silent for ``SlurmdTimeout``, 300 s here) ends the job unless
it was submitted with ``--no-kill``; with it, SLURM drops the node from the job and lets the
job finish (measured: "Removing failed node gc-node3 from JobId=4", the run completed).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence

from gradcode.blas import single_thread_environment
from gradcode.cluster.during.command import given_command
from gradcode.cluster.mpi.noderank import LIFELINE
from gradcode.cluster.network.rerate import job_nodes
from gradcode.cluster.network.running import current_spec, exec_argv
from gradcode.cluster.spec import NODE_IFACE, ClusterSpec
from gradcode.errors import CLIError
from gradcode.launch.mpilib import ulfm_command, ulfm_environment

#: seconds between heartbeats, and without one before a rank counts as dead
DETECTOR_PERIOD = 0.5
DETECTOR_TIMEOUT = 2.0
#: PRRTE: no SLURM allocation, no srun-started daemons (one launcher on the master's node)
LAUNCHER_ENV = {"PRTE_MCA_ras": "^slurm", "PRTE_MCA_plm": "^slurm"}


def check_detector(period: float, timeout: float) -> None:
    if not period > 0:
        raise ValueError(f"--detector-period: seconds > 0 (got {period!r})")
    if not timeout > 3 * period:
        raise ValueError(
            f"--detector-timeout: more than 3 periods ({3 * period:g} s; got {timeout!r})"
        )


def mca(
    period: float = DETECTOR_PERIOD, timeout: float = DETECTOR_TIMEOUT
) -> list[tuple[str, str]]:
    """The MCA parameters of a fault-tolerant job on the cluster."""
    check_detector(period, timeout)
    return [
        ("btl_tcp_if_include", NODE_IFACE),
        ("mpi_ft_detector", "true"),
        ("mpi_ft_detector_thread", "false"),
        ("mpi_ft_detector_period", f"{period:g}"),
        ("mpi_ft_detector_timeout", f"{timeout:g}"),
    ]


def command(
    nodes: Sequence[str],
    ranks: int,
    argv: Sequence[str],
    *,
    period: float = DETECTOR_PERIOD,
    timeout: float = DETECTOR_TIMEOUT,
) -> list[str]:
    """Open MPI's launcher line: ``ranks`` ranks, each moved to its node of ``nodes``."""
    if not nodes:
        raise ValueError("no node to run on")
    # a cut-off rank is killed by its relay only well after its heartbeats stopped counting
    lifeline = max(LIFELINE, 2 * timeout)
    moved = [sys.executable, "-m", "gradcode.cluster.mpi.noderank", "--nodes", ",".join(nodes)]
    moved += ["--lifeline", f"{lifeline:g}", "--"]
    return ulfm_command(ranks, [*moved, *argv], mca=mca(period, timeout))


def environment(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """What the launcher needs (``ulfm_environment``, one BLAS thread, no SLURM for PRRTE)."""
    merged = ulfm_environment(single_thread_environment(env))
    merged.update(LAUNCHER_ENV)
    return merged


def rank_nodes(spec: ClusterSpec) -> list[str]:
    """Where ``gradcode cluster ulfm`` puts rank ``r``: the ``r``-th of these, the SLURM job's
    nodes (the allocation's order) in a job, else every node of the cluster."""
    return job_nodes() or [node.name for node in spec.nodes]


def cmd_ulfm(args: argparse.Namespace, rest: list[str]) -> int:
    """``gradcode cluster ulfm -n N [--print] -- CMD ...``: Open MPI's launcher on the master's
    node, every rank moved to its node (``--print``: the environment and the line only)."""
    spec = current_spec()
    if args.n < 1:
        raise CLIError(f"-n must be at least 1, got {args.n}")
    nodes = rank_nodes(spec)
    try:
        line = command(
            nodes,
            args.n,
            given_command(rest),
            period=args.detector_period,
            timeout=args.detector_timeout,
        )
    except ValueError as error:
        raise CLIError(str(error)) from None
    argv = exec_argv(spec.master.name, line)
    if args.print:
        print(" ".join(f"{k}={v}" for k, v in LAUNCHER_ENV.items()), " ".join(argv))
        return 0
    os.execvpe(argv[0], argv, environment())
    return 127  # not reached
