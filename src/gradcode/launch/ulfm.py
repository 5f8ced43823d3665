"""``python -m gradcode.launch.ulfm -n N [--mca KEY VALUE]... CMD ...``: start an MPI job that
survives dead ranks (Open MPI with ULFM, ``gradcode.launch.mpilib.ulfm_command``).

It replaces itself with the launcher (``exec``), so its exit status is the job's and signals
reach the launcher; the workflow's fault-tolerant rules and ``gradcode train command`` use it
where a run file has ``faults.tolerate``.

Ranks may oversubscribe the cores (stragglers are emulated by sleeping ranks), except inside a
SLURM allocation of several nodes: there ``--oversubscribe`` made Open MPI's launcher put every
rank on the first node (measured in a 5-node ``salloc`` on the emulated cluster), so the ranks
follow the allocation's slots instead.

Inside a SLURM job, Open MPI's launcher reads the allocation from ``SLURM_NODELIST`` and
``SLURM_TASKS_PER_NODE``. Snakemake's SLURM job-step executor strips every ``SLURM_*``
variable but the job's identity before it runs a rule (measured: PRRTE then stopped with
"unable to find ... SLURM_NODELIST", exit 250), so when they are missing they are asked of
SLURM (``scontrol show job``); an allocation whose tasks are not spread evenly over its nodes
is an error naming it, not a guess.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Mapping, Sequence

from gradcode.blas import single_thread_environment
from gradcode.launch.mpilib import LauncherMissing, ulfm_command, ulfm_environment
from gradcode.slurmjob import AllocationError, job_fields

PROGRAM = "python -m gradcode.launch.ulfm"


def oversubscribe(refused: bool, environ: Mapping[str, str]) -> bool:
    """Whether to pass ``--oversubscribe``: unless ``refused`` or inside a multi-node SLURM
    allocation (``SLURM_JOB_NUM_NODES`` > 1)."""
    nodes = environ.get("SLURM_JOB_NUM_NODES") or environ.get("SLURM_NNODES") or "1"
    return not refused and not (nodes.isdigit() and int(nodes) > 1)


def allocation_environment(
    environ: Mapping[str, str], show_job: Callable[[str], str] | None = None
) -> dict[str, str]:
    """``SLURM_NODELIST``, ``SLURM_TASKS_PER_NODE`` and ``SLURM_JOB_NUM_NODES`` for a job whose
    environment lost them (``show_job(job_id)``: ``scontrol show job``'s text); empty outside
    SLURM or when they are there."""
    job = environ.get("SLURM_JOB_ID") or environ.get("SLURM_JOBID")
    if job is None or ("SLURM_NODELIST" in environ and "SLURM_TASKS_PER_NODE" in environ):
        return {}
    fields = job_fields(job, show_job)
    try:
        nodes, tasks, count = fields["NodeList"], int(fields["NumTasks"]), int(fields["NumNodes"])
    except (KeyError, ValueError):
        raise AllocationError(
            f"SLURM job {job}: scontrol show job gave no NodeList, NumTasks and NumNodes"
        ) from None
    if tasks % count:
        raise AllocationError(
            f"SLURM job {job}: {tasks} tasks on {count} nodes are not spread evenly; start it "
            "with --ntasks-per-node"
        )
    per_node = str(tasks // count) if count == 1 else f"{tasks // count}(x{count})"
    return {
        "SLURM_NODELIST": nodes,
        "SLURM_TASKS_PER_NODE": per_node,
        "SLURM_JOB_NUM_NODES": str(count),
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=PROGRAM,
        description="Start an MPI job on Open MPI with ULFM (fault tolerant).",
        allow_abbrev=False,
    )
    parser.add_argument("-n", type=int, required=True, metavar="N", help="number of ranks")
    parser.add_argument(
        "--mca",
        nargs=2,
        action="append",
        default=[],
        metavar=("KEY", "VALUE"),
        help="an extra Open MPI MCA parameter (repeatable)",
    )
    parser.add_argument("--no-oversubscribe", action="store_true", help="at most one rank per slot")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the program and its arguments")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no command to run")
    if args.n < 1:
        parser.error(f"-n must be >= 1 (got {args.n})")
    try:
        allocation = allocation_environment(os.environ)
        line = ulfm_command(
            args.n,
            command,
            mca=[tuple(pair) for pair in args.mca],
            oversubscribe=oversubscribe(args.no_oversubscribe, {**os.environ, **allocation}),
        )
    except (LauncherMissing, AllocationError) as error:
        print(f"{PROGRAM}: error: {error}", file=sys.stderr)
        return 2
    env = ulfm_environment(single_thread_environment()) | allocation
    os.execve(line[0], line, env)
    return 127  # not reached


if __name__ == "__main__":
    sys.exit(main())
