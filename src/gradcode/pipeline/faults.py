"""Training runs that lose workers on purpose, as the workflow starts and judges them.

A run file with ``faults.tolerate`` must run on Open MPI with ULFM (MPICH ends the whole job
when one rank dies, ``gradcode.launch.mpilib``), inside ``gradcode train inject``, which kills
the workers of ``faults.kill`` from outside at their iterations (a run with
``faults.lose_node`` loses a node of the emulated cluster instead, inside ``gradcode cluster
lose``: rule ``train_lost`` in ``workflow/rules/cluster.smk``). The workflow gives these runs
a rule of their own (``train_faults`` in ``workflow/rules/train.smk``, wildcard constraint
``runs_pattern(tolerant_runs(...))``), whose MPI launcher is ``ULFM_LAUNCHER`` locally and
inside a SLURM allocation alike (``srun --mpi=pmix`` cannot start Open MPI with Debian's
SLURM here; Open MPI's own launcher inside the allocation can).

Such a run may be *meant* to stop: its faults take more workers than its code tolerates (an
uncoded run loses one; a coded one loses more than ``s``, counting the workers whose places
``faults.spares`` refill as alive). It then writes its checkpoint and
``summary.json`` with ``stopped`` and exits ``EXIT_CANNOT_CONTINUE`` (3), which is its result,
not a failure of the workflow. ``python -m gradcode.pipeline.faults RUN.yaml SUMMARY STATUS``
judges a finished job: status 0, or 3 from a stop the run file predicts (the code cannot decode
without the workers its faults take, by the code's own rule ``alive_decodable``, and the
workers the run names as failed are among those killed or lost), passes; any other status, a
stop the faults do not explain, or a run that finished although its faults say it cannot,
fails with one line.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from gradcode.pipeline.runs import TrainingRuns
from gradcode.runfile.config import ConfigError, RunConfig, load_config
from gradcode.runfile.plan import alive_decodable, build_plan

#: how the workflow starts a tolerant run's ranks, locally and inside a SLURM allocation
ULFM_LAUNCHER = "python -m gradcode.launch.ulfm"
#: the job's exit status when its code cannot go on (``gradcode.train.faults.failures``, which this
#: module imports only when judging a job: importing it loads MPI)
EXIT_STOPPED = 3

PROGRAM = "python -m gradcode.pipeline.faults"


def tolerant_runs(runs: TrainingRuns) -> list[str]:
    """Ids of the runs whose run file says ``faults: {tolerate: true}`` (the default with a
    ``faults:`` section) and loses no node, sorted (rule train_faults)."""
    configs = {run: runs.plan(run).config for run in runs.runs}
    return sorted(
        run for run, config in configs.items() if tolerant(config) and not loses_node(config)
    )


def node_loss_runs(runs: TrainingRuns) -> list[str]:
    """Ids of the runs whose run file says ``faults.lose_node``, sorted: they run on the
    emulated cluster inside ``gradcode cluster lose`` (rule train_lost)."""
    return sorted(run for run in runs.runs if loses_node(runs.plan(run).config))


def loses_node(config: RunConfig) -> bool:
    """Whether ``config`` loses a node of the emulated cluster (``faults.lose_node``)."""
    return config.faults is not None and config.faults.lose_node is not None


def lose_arguments(config: RunConfig) -> list[str]:
    """``gradcode cluster lose``'s options for ``config``'s ``faults.lose_node`` (the log,
    record and command come from the rule): the rank of the worker, how, when."""
    loss = config.faults.lose_node
    return ["--rank", str(loss.worker + 1), f"--{loss.how}", "--at-iteration", str(loss.iteration)]


def tolerant(config: RunConfig) -> bool:
    """Whether ``config`` runs on an MPI that survives dead ranks (``faults.tolerate``)."""
    return config.faults is not None and config.faults.tolerate


def runs_pattern(run_ids: Iterable[str]) -> str:
    """A wildcard constraint matching exactly ``run_ids`` (which must not be empty)."""
    ids = list(run_ids)
    if not ids:
        raise ValueError("runs_pattern: no run ids (define the rule only when there are some)")
    return "|".join(re.escape(run) for run in ids)


def expected_stop(config: RunConfig) -> list[int] | None:
    """The workers without which the run's code cannot decode, if its faults take them all
    (the run is meant to stop), else None."""
    lost = config.lost_workers()  # spares counted
    if not lost or config.faults is None:
        return None
    return None if alive_decodable(build_plan(config).code, lost) else lost


def judge(status: int, config: RunConfig, summary: dict[str, Any] | None) -> tuple[int, str]:
    """The workflow's exit status for a tolerant job that exited ``status``, and one line."""
    name = config.name
    expected = expected_stop(config)
    killed = config.faults.failing_workers() if config.faults else []
    stopped = (summary or {}).get("stopped")
    if status == 0:
        if expected is not None:
            return 1, (
                f"{name}: finished although its faults take workers {expected}, without "
                "which its code cannot decode (did the kills land? see kills.json)"
            )
        failed = (summary or {}).get("failed_workers", [])
        return 0, f"{name}: finished through the failures of workers {failed}"
    if status != EXIT_STOPPED:
        return status, f"{name}: the job failed with exit status {status}"
    if stopped is None:
        return status, f"{name}: exit status {status} without a stop in its summary.json"
    if expected is None:
        return status, (
            f"{name}: stopped although its faults leave the code decodable: {stopped['message']}"
        )
    if not set(stopped["failed_workers"]) <= set(killed):
        return status, (
            f"{name}: stopped for workers {stopped['failed_workers']}, not only the killed "
            f"{killed}: {stopped['message']}"
        )
    return 0, (
        f"{name}: stopped as its faults say (the code cannot decode without workers "
        f"{expected}) at iteration {stopped['iteration']}, checkpoint {stopped['checkpoint']}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m gradcode.pipeline.faults RUN.yaml SUMMARY.json STATUS``."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 3 or not args[2].isdigit():
        print(f"usage: {PROGRAM} RUN.yaml SUMMARY.json STATUS", file=sys.stderr)
        return 2
    try:
        config = load_config(args[0])
    except ConfigError as error:
        print(f"{PROGRAM}: {error}", file=sys.stderr)
        return 2
    try:
        summary = json.loads(Path(args[1]).read_text())
    except (OSError, ValueError):
        summary = None
    status, line = judge(int(args[2]), config, summary)
    print(f"gradcode: {line}", file=sys.stderr if status else sys.stdout)
    return status


if __name__ == "__main__":
    sys.exit(main())
