"""``gradcode cluster up|down|status|exec|mpiexec|ulfm|measure|cut|lose|rate|latency``: an emulated
multi-node cluster.

Hooked into the main parser by ``add_parser(subparsers)``. This module holds the parser and the
dispatch only: each subcommand's handler lives in the room it drives (``control``, ``mpi.hydra``,
``mpi.ulfm``, ``network.probe``, ``network.rerate``, ``latency.relatency``, ``faults.cut``,
``faults.lose_command``), imported when the subcommand runs, so ``gradcode``'s other commands
load none of them. Handlers return an exit status and raise ``gradcode.errors.UserError``
subclasses for bad input or a machine that cannot host the cluster (printed as one line, exit
2).
"""

from __future__ import annotations

import argparse

from gradcode.errors import CLIError


def _no_rest(rest: list[str]) -> None:
    if rest:
        raise CLIError(f"unrecognized arguments: {' '.join(rest)}")


def cmd_up(args: argparse.Namespace, rest: list[str]) -> int:
    _no_rest(rest)
    from gradcode.cluster.control import cmd_up

    return cmd_up(args)


def cmd_down(args: argparse.Namespace, rest: list[str]) -> int:
    _no_rest(rest)
    from gradcode.cluster.control import cmd_down

    return cmd_down(args)


def cmd_status(args: argparse.Namespace, rest: list[str]) -> int:
    _no_rest(rest)
    from gradcode.cluster.control import cmd_status

    return cmd_status(args)


def cmd_exec(args: argparse.Namespace, rest: list[str]) -> int:
    from gradcode.cluster.control import cmd_exec

    return cmd_exec(args, rest)


def cmd_mpiexec(args: argparse.Namespace, rest: list[str]) -> int:
    from gradcode.cluster.mpi.hydra import cmd_mpiexec

    return cmd_mpiexec(args, rest)


def cmd_ulfm(args: argparse.Namespace, rest: list[str]) -> int:
    from gradcode.cluster.mpi.ulfm import cmd_ulfm

    return cmd_ulfm(args, rest)


def cmd_measure(args: argparse.Namespace, rest: list[str]) -> int:
    _no_rest(rest)
    from gradcode.cluster.network.probe import cmd_measure

    return cmd_measure(args)


def cmd_cut(args: argparse.Namespace, rest: list[str]) -> int:
    from gradcode.cluster.faults.cut import cmd_cut

    return cmd_cut(args, rest)


def cmd_lose(args: argparse.Namespace, rest: list[str]) -> int:
    from gradcode.cluster.faults.lose_command import cmd_lose

    return cmd_lose(args, rest)


def cmd_rate(args: argparse.Namespace, rest: list[str]) -> int:
    from gradcode.cluster.network.rerate import cmd_rate

    return cmd_rate(args, rest)


def cmd_latency(args: argparse.Namespace, rest: list[str]) -> int:
    from gradcode.cluster.latency.relatency import cmd_latency

    return cmd_latency(args, rest)


def _node_action(
    actions: argparse._SubParsersAction, name: str, what: str, node: str
) -> argparse.ArgumentParser:
    """An action on one node, optionally during a command (``-- CMD ...``)."""
    parser = actions.add_parser(
        name, help=f"{what}, optionally during a command (-- CMD ...)", allow_abbrev=False
    )
    parser.add_argument("node", help=f"{node}, e.g. gc-node3")
    return parser


def _trigger_options(parser: argparse.ArgumentParser, what: str) -> None:
    """When ``what`` happens (``gradcode.cluster.during.command``) and where it is recorded."""
    parser.add_argument("--after", type=float, help=f"seconds after the start to {what}")
    parser.add_argument(
        "--at-iteration", type=int, help=f"{what} once --log holds this many lines (iterations)"
    )
    parser.add_argument("--log", help="the run's log.jsonl (with --at-iteration)")
    parser.add_argument("--record", help="write what was done (JSON, timestamps) here")


CLUSTER_DESCRIPTION = """\
An emulated multi-node cluster on this machine (needs root): every node has its own address
and hostname, its links their own rate and latency, with a multi-node SLURM and MPI
launchers on top. Tear it down with 'gradcode cluster down'.

example:
  gradcode cluster up --nodes 5 --rate 100mbit
  gradcode cluster mpiexec -n 5 -- python -m gradcode.train RUN.yaml --out runs/smoke
  gradcode cluster down

documentation: docs/guide/cluster.md
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    """Add ``cluster`` and its actions to the main parser."""
    cluster = sub.add_parser(
        "cluster",
        help="an emulated multi-node cluster on this machine (root)",
        description=CLUSTER_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    actions = cluster.add_subparsers(dest="action", required=True)
    _add_up(actions)
    _add_down(actions)
    _add_status(actions)
    _add_exec(actions)
    _add_mpiexec(actions)
    _add_ulfm(actions)
    _add_measure(actions)
    _add_cut(actions)
    _add_lose(actions)
    _add_rate(actions)
    _add_latency(actions)


def _add_up(actions: argparse._SubParsersAction) -> None:
    """``cluster up`` and the cluster's options (``control.spec_from_arguments``)."""
    up = actions.add_parser(
        "up", help="make the nodes, links and SLURM (idempotent)", allow_abbrev=False
    )
    up.add_argument("--spec", help="YAML file with the options below (options override it)")
    up.add_argument("--nodes", type=int, help="nodes, the master's included (default 3)")
    up.add_argument("--subnet", help="private IPv4 subnet (default 10.251.0.0/24)")
    up.add_argument("--cpus", type=int, help="CPUs each node advertises to SLURM (default 4)")
    up.add_argument("--rate", help="workers' link rate, both directions (default 1gbit)")
    up.add_argument("--egress", help="workers' sending rate (overrides --rate)")
    up.add_argument("--ingress", help="workers' receiving rate (overrides --rate)")
    up.add_argument("--master-rate", help="the master's node's rate (default: the workers')")
    up.add_argument("--master-egress", help="the master's sending rate")
    up.add_argument("--master-ingress", help="the master's receiving rate")
    up.add_argument(
        "--node-rate",
        action="append",
        metavar="NODE=RATE[/INGRESS]",
        help="one node's rate (both directions, or egress/ingress); repeat for more nodes",
    )
    up.add_argument(
        "--latency", help="what a packet to a worker's node pays, e.g. 1ms (default none)"
    )
    up.add_argument("--jitter", help="the latency's spread both ways, e.g. 0.2ms (<= latency)")
    up.add_argument("--master-latency", help="to the master's node (default: the workers')")
    up.add_argument("--master-jitter", help="the master's node's jitter (default: the workers')")
    up.add_argument(
        "--node-latency",
        action="append",
        metavar="NODE=LATENCY[/JITTER]",
        help="one node's latency (and jitter); repeat for more nodes",
    )
    up.add_argument(
        "--dilation",
        type=int,
        metavar="K",
        help="time dilation: every link K times slower and its latency K times longer, for "
        "runs with runtime.dilation K, which report virtual seconds (default 1)",
    )
    up.add_argument(
        "--queue",
        help="how long a packet may wait in a link's queue before it is dropped: the switch "
        "port's buffer as time at the link's rate, e.g. 400ms (default 100ms; times K)",
    )
    up.add_argument("--no-slurm", action="store_true", help="only the network (and launcher)")
    up.set_defaults(func=cmd_up)


def _add_down(actions: argparse._SubParsersAction) -> None:
    """``cluster down``."""
    down = actions.add_parser("down", help="remove everything up made", allow_abbrev=False)
    down.set_defaults(func=cmd_down)


def _add_status(actions: argparse._SubParsersAction) -> None:
    """``cluster status``."""
    status = actions.add_parser(
        "status", help="nodes, addresses, rates, SLURM states", allow_abbrev=False
    )
    status.add_argument("--json", action="store_true")
    status.set_defaults(func=cmd_status)


def _add_exec(actions: argparse._SubParsersAction) -> None:
    """``cluster exec``: a command on one node."""
    run = actions.add_parser(
        "exec", help="run a command on a node (default: the master's)", allow_abbrev=False
    )
    run.add_argument("--node", default="gc-node0")
    run.set_defaults(func=cmd_exec)


def _add_mpiexec(actions: argparse._SubParsersAction) -> None:
    """``cluster mpiexec``: hydra's launcher over the nodes."""
    mpi = actions.add_parser(
        "mpiexec",
        help="hydra mpiexec over the nodes (one rank per node in turn)",
        allow_abbrev=False,
    )
    mpi.add_argument("-n", type=int, required=True, help="MPI ranks")
    mpi.add_argument("--print", action="store_true", help="print the command, run nothing")
    mpi.set_defaults(func=cmd_mpiexec)


def _add_ulfm(actions: argparse._SubParsersAction) -> None:
    """``cluster ulfm``: a fault-tolerant MPI job and its failure detector."""
    fault_tolerant = actions.add_parser(
        "ulfm",
        help="a fault-tolerant MPI job (Open MPI with ULFM), one rank per node, that survives "
        "a lost node",
        allow_abbrev=False,
    )
    fault_tolerant.add_argument("-n", type=int, required=True, help="MPI ranks")
    fault_tolerant.add_argument(
        "--detector-period", type=float, default=0.5, help="seconds between heartbeats (0.5)"
    )
    fault_tolerant.add_argument(
        "--detector-timeout",
        type=float,
        default=2.0,
        help="seconds without a heartbeat before a rank counts as dead (2; > 3 periods)",
    )
    fault_tolerant.add_argument("--print", action="store_true", help="print the command only")
    fault_tolerant.set_defaults(func=cmd_ulfm)


def _add_measure(actions: argparse._SubParsersAction) -> None:
    """``cluster measure``: one TCP stream's rate."""
    measure = actions.add_parser(
        "measure", help="time one TCP stream between two nodes", allow_abbrev=False
    )
    measure.add_argument("source")
    measure.add_argument("target")
    measure.add_argument("--bytes", type=int, default=10_000_000)
    measure.add_argument(
        "--within", type=float, help="fail unless the rate is within this fraction (0.1)"
    )
    measure.set_defaults(func=cmd_measure)


def _add_cut(actions: argparse._SubParsersAction) -> None:
    """``cluster cut``: a node's link down for a while."""
    cutter = _node_action(
        actions,
        "cut",
        "take one node's link down for a while (a straggling link)",
        "the node whose link goes down",
    )
    cutter.add_argument(
        "--for", dest="seconds", type=float, required=True, help="seconds the link stays down"
    )
    _trigger_options(cutter, "cut")
    cutter.set_defaults(func=cmd_cut)


def _add_lose(actions: argparse._SubParsersAction) -> None:
    """``cluster lose``: a node lost for good (which, how, when, and after)."""
    loser = actions.add_parser(
        "lose",
        help="lose one node for good (--kill: every process on it; --link: its link down), "
        "optionally during a command (-- CMD ...)",
        allow_abbrev=False,
    )
    loser.add_argument("node", nargs="?", help="the node to lose, e.g. gc-node3")
    loser.add_argument(
        "--rank",
        type=int,
        help="instead of NODE: the node MPI rank R runs on under gradcode cluster ulfm (the "
        "R-th of a SLURM job's nodes, or of the cluster's)",
    )
    loser.add_argument(
        "--return",
        dest="give_back",
        action="store_true",
        help="once the command ended, give the node back (SLURM: marked DOWN, which drops it "
        "from a --no-kill job, then rebooted: its slurmd again, idle)",
    )
    how = loser.add_mutually_exclusive_group(required=True)
    how.add_argument(
        "--kill",
        dest="how",
        action="store_const",
        const="kill",
        help="SIGKILL every process on the node (its network namespace)",
    )
    how.add_argument(
        "--link",
        dest="how",
        action="store_const",
        const="link",
        help="take the node's link down, with no return",
    )
    _trigger_options(loser, "lose it")
    loser.add_argument(
        "--tcp-retries",
        type=int,
        default=5,
        help="with --link during CMD: the other nodes' net.ipv4.tcp_retries2 meanwhile (5)",
    )
    loser.set_defaults(func=cmd_lose)


def _add_rate(actions: argparse._SubParsersAction) -> None:
    """``cluster rate``: every link at another rate during a command."""
    rerate = actions.add_parser(
        "rate",
        help="every link (in a SLURM job: its nodes') at another rate while a command runs "
        "(-- CMD ...), then the cluster's own rates back",
        allow_abbrev=False,
    )
    rerate.add_argument("--rate", required=True, help="the workers' links, both directions")
    rerate.add_argument("--master-rate", help="the master's node's link (default: --rate)")
    rerate.add_argument("--record", help="write what was set and restored (JSON) here")
    rerate.set_defaults(func=cmd_rate)


def _add_latency(actions: argparse._SubParsersAction) -> None:
    """``cluster latency``: every link at another latency during a command."""
    latency = actions.add_parser(
        "latency",
        help="every link (in a SLURM job: its nodes') at another latency while a command runs "
        "(-- CMD ...), then the cluster's own latencies back",
        allow_abbrev=False,
    )
    latency.add_argument(
        "--latency", required=True, help="what a packet to a worker's node pays, e.g. 1ms"
    )
    latency.add_argument("--jitter", help="the latency's spread both ways (default 0)")
    latency.add_argument("--master-latency", help="to the master's node (default: --latency)")
    latency.add_argument("--master-jitter", help="the master's node's jitter (default: --jitter)")
    latency.add_argument("--record", help="write what was set and restored (JSON) here")
    latency.set_defaults(func=cmd_latency)
