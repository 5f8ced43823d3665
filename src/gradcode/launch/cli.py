"""``gradcode train check|command|run``.

Hooked into the main parser by ``gradcode.launch.cli.add_parser(subparsers)``; handlers have the
signature ``handler(args, rest) -> exit status`` and raise ``CLIError`` for user errors.

- ``check RUN.yaml``: validate the run file, the scheme and the data (preparing it if needed)
  without MPI, and print the plan, including the number of MPI ranks the job needs;
- ``command RUN.yaml``: print the ``mpiexec`` (or, with ``--srun``, ``srun``) command line
  that runs it;
- ``inject RUN.yaml --out DIR [--record FILE] -- CMD``: run CMD (the job's command line) and
  SIGKILL the workers of the run file's ``faults.kill`` at their iterations, from outside;
- ``run RUN.yaml``: the training job itself, to be started under MPI
  (``mpiexec -n N gradcode train run RUN.yaml``, the same as ``python -m gradcode.train``).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import Any

from gradcode.errors import CLIError


def _cli_error(message: str) -> Exception:
    return CLIError(message)


def _no_rest(rest: list[str]) -> None:
    if rest:
        raise _cli_error(f"unrecognized arguments: {' '.join(rest)}")


def _plan(run_file: str):
    from gradcode.runfile.config import ConfigError, load_config
    from gradcode.runfile.plan import build_plan

    try:
        return build_plan(load_config(run_file))
    except ConfigError as error:
        raise _cli_error(str(error)) from None


def cmd_check(args: argparse.Namespace, rest: list[str]) -> int:
    """Validate a run file and its data; print the plan."""
    _no_rest(rest)
    from gradcode.runfile.dataset import load_training_data

    plan = _plan(args.run_file)
    config = plan.config
    try:
        data = load_training_data(config.data, plan.partitions, config.model.kind)
        plan.check_features(data.features)
    except ValueError as error:
        raise _cli_error(str(error)) from None
    print(f"scheme       {config.scheme.name} {plan.scheme_params()} ({plan.topology})")
    print(f"workers      n = {plan.workers}, k = {plan.partitions} partitions")
    print(f"MPI ranks    {plan.world_size}")
    described = data.describe()
    print(
        f"data         {described['dataset']} ({described['variant']}): {data.rows} rows "
        f"({described['rows_dropped']} dropped), {data.features} features, "
        f"{described['test_rows']} test rows"
    )
    print(f"model        {config.model.kind}, l2 = {config.model.l2_value(data.rows):g}")
    print(f"optimizer    {config.optimizer.kind}, {config.iterations} iterations")
    print(f"stragglers   {plan.delay_source().describe()['model']}")
    if config.network is not None:
        print(f"network      {_network_line(plan, data.features)}")
    if config.faults is not None:
        print(f"faults       {_faults_line(plan)}")
    return 0


def _faults_line(plan) -> str:
    """How the run meets failures: its MPI, the failures caused on purpose, and whether the
    code decodes without the workers they take (else the run stops there, resumable)."""
    from gradcode.runfile.plan import alive_decodable

    faults = plan.config.faults
    launcher = "gradcode cluster ulfm" if faults.lose_node else "python -m gradcode.launch.ulfm"
    mpi = f"Open MPI with ULFM ({launcher})" if faults.tolerate else "MPICH"
    events = [f"kill worker {e.worker} at iteration {e.iteration}" for e in faults.kill]
    events += [f"worker {e.worker} silent from iteration {e.iteration}" for e in faults.silent]
    if faults.lose_node is not None:
        loss = faults.lose_node
        what = "every process on it killed" if loss.how == "kill" else "its link down"
        events.append(
            f"worker {loss.worker}'s node lost at iteration {loss.iteration} ({what}: gradcode "
            "cluster lose on the emulated cluster)"
        )
    line = f"{mpi}; " + ("; ".join(events) if events else "no failure caused")
    if faults.spares:
        line += f"; {faults.spares} spare ranks take the first dead workers' places"
    lost = plan.config.lost_workers()
    if lost and not alive_decodable(plan.code, lost):
        line += f"; the code cannot decode without workers {lost}: the run will stop"
    return line


def _network_line(plan, features: int) -> str:
    """Real links: their parameters and what the ``shared-links`` timing model predicts for one
    result message, alone and with every child's arriving together at the master."""
    links = plan.config.network.links
    if links is None:
        return "real links (parameters not stated), no communication emulated"
    from gradcode.livecluster.links import stated_links_mismatch
    from gradcode.message_header import H
    from gradcode.rate import Rate
    from gradcode.timing.fair_share import message_time

    nbytes = 8 * (plan.code.message_length(features) + H)
    alone = message_time(nbytes, links.rate, links.master_rate, links.latency)
    children = len(list(plan.code.all_message_keys())) if plan.topology.direct else None
    line = (
        f"real links, rate {links.rate_text} ({links.rate:.4g} B/s), master "
        f"{links.master_rate_text} ({links.master_rate:.4g} B/s); a result message "
        f"({nbytes} B) takes {alone * 1e3:.3g} ms alone"
    )
    if children:
        together = links.latency + nbytes / min(links.rate, links.master_rate / children)
        line += f", {together * 1e3:.3g} ms when all {children} arrive together"
    # the command is printed on the host, for the cluster that is up
    mismatch = stated_links_mismatch(
        Rate(links.rate), Rate(links.master_rate), links.latency, anywhere=True
    )
    if mismatch is not None:
        line += f"; warning: {mismatch}"
    return line


def cmd_command(args: argparse.Namespace, rest: list[str]) -> int:
    """Print the command line that runs a run file with the right number of ranks."""
    _no_rest(rest)
    from gradcode.launch.jobs import command

    plan = _plan(args.run_file)
    faults = plan.config.faults
    tolerant = faults is not None and faults.tolerate
    if args.srun and not tolerant:
        line = ["srun", "--mpi=pmi2", "-n", str(plan.world_size), sys.executable]
        line += ["-m", "gradcode.train", args.run_file]
    else:
        # a fault-tolerant job starts the same way inside a SLURM allocation: Open MPI's
        # launcher reads the allocation (srun --mpi=pmi2 would start MPICH, which dies with
        # its first dead rank)
        line = command(plan.world_size, args.run_file, tolerant=tolerant)
    print(shlex.join(line))
    return 0


def cmd_run(args: argparse.Namespace, rest: list[str]) -> int:
    """Train (every MPI rank runs this)."""
    _no_rest(rest)
    from gradcode.extras import require
    from gradcode.mpilibrary import select_for_launcher

    require("mpi", "gradcode train run")

    select_for_launcher()  # before mpi4py loads a library
    from gradcode.train.run import main

    argv = [args.run_file]
    if args.out:
        argv += ["--out", args.out]
    if args.fresh:
        argv.append("--fresh")
    return main(argv)


def cmd_inject(args: argparse.Namespace, rest: list[str]) -> int:
    """Run a job's command and kill workers from outside at their iterations."""
    from gradcode.launch.inject import main
    from gradcode.runfile.config import ConfigError

    command = rest[1:] if rest[:1] == ["--"] else rest
    try:
        return main(args.run_file, args.out, args.record, command)
    except ConfigError as error:
        raise _cli_error(str(error)) from None


def add_parser(subparsers: Any) -> None:
    """Add the ``train`` command group to the main parser's ``subparsers``."""
    train = subparsers.add_parser(
        "train",
        help="distributed training runs: check, command, run",
        description="Coded distributed gradient descent as MPI jobs (see gradcode.train).",
        allow_abbrev=False,
    )
    sub = train.add_subparsers(dest="train_action", required=True)
    check = sub.add_parser(
        "check", help="validate a run file and its data, print the plan", allow_abbrev=False
    )
    check.add_argument("run_file", metavar="RUN.yaml")
    check.set_defaults(func=cmd_check)
    cmd = sub.add_parser(
        "command", help="print the mpiexec/srun command line of a run", allow_abbrev=False
    )
    cmd.add_argument("run_file", metavar="RUN.yaml")
    cmd.add_argument("--srun", action="store_true", help="srun --mpi=pmi2 instead of mpiexec")
    cmd.set_defaults(func=cmd_command)
    inject = sub.add_parser(
        "inject",
        help="run a job's command, killing the workers of faults.kill from outside",
        allow_abbrev=False,
    )
    inject.add_argument("run_file", metavar="RUN.yaml")
    inject.add_argument("--out", metavar="DIR", help="the job's output directory")
    inject.add_argument("--record", metavar="FILE", help="write the kills done as JSON")
    inject.set_defaults(func=cmd_inject)
    run = sub.add_parser(
        "run", help="train (start under mpiexec with n + 1 ranks)", allow_abbrev=False
    )
    run.add_argument("run_file", metavar="RUN.yaml")
    run.add_argument("--out", metavar="DIR", help="output directory (default: the file's)")
    run.add_argument("--fresh", action="store_true", help="discard previous outputs")
    run.set_defaults(func=cmd_run)
