"""``python -m gradcode.train.ulfm -n N [--mca KEY VALUE]... CMD ...``: start an MPI job that
survives dead ranks (Open MPI with ULFM, ``gradcode.train.mpilib.ulfm_command``).

It replaces itself with the launcher (``exec``), so its exit status is the job's and signals
reach the launcher; the workflow's fault-tolerant rules and ``gradcode train command`` use it
where a run file has ``faults.tolerate``.

Ranks may oversubscribe the cores (stragglers are emulated by sleeping ranks), except inside a
SLURM allocation of several nodes: there ``--oversubscribe`` made Open MPI's launcher put every
rank on the first node (measured in a 5-node ``salloc`` on the emulated cluster), so the ranks
follow the allocation's slots instead.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping, Sequence

from gradcode.blas import single_thread_environment
from gradcode.train.mpilib import LauncherMissing, ulfm_command, ulfm_environment

PROGRAM = "python -m gradcode.train.ulfm"


def oversubscribe(refused: bool, environ: Mapping[str, str]) -> bool:
    """Whether to pass ``--oversubscribe``: unless ``refused`` or inside a multi-node SLURM
    allocation (``SLURM_JOB_NUM_NODES`` > 1)."""
    nodes = environ.get("SLURM_JOB_NUM_NODES") or environ.get("SLURM_NNODES") or "1"
    return not refused and not (nodes.isdigit() and int(nodes) > 1)


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
        line = ulfm_command(
            args.n,
            command,
            mca=[tuple(pair) for pair in args.mca],
            oversubscribe=oversubscribe(args.no_oversubscribe, os.environ),
        )
    except LauncherMissing as error:
        print(f"{PROGRAM}: error: {error}", file=sys.stderr)
        return 2
    env = ulfm_environment(single_thread_environment())
    os.execve(line[0], line, env)
    return 127  # not reached


if __name__ == "__main__":
    sys.exit(main())
