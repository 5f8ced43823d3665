"""``gradcode cluster up|down|status|exec|mpiexec|ulfm|measure|cut|lose|rate|latency``: an emulated
multi-node cluster.

Hooked into the main parser by ``add_parser(subparsers)``; handlers return an exit status and
raise ``gradcode.errors.UserError`` subclasses for bad input or a machine that cannot host the
cluster (printed as one line, exit 2).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

from gradcode.errors import CLIError


def _spec(args: argparse.Namespace):
    from gradcode.cluster.spec import (
        ClusterSpecError,
        build_spec,
        parse_node_latency,
        parse_node_rate,
    )
    from gradcode.yamlfile import read_yaml

    options: dict[str, Any] = {}
    names: dict[str, str] = {}  # how a bad value's message names its key: file or option
    if args.spec:
        loaded = read_yaml(args.spec, ClusterSpecError)
        if not isinstance(loaded, dict):
            raise ClusterSpecError(f"{args.spec}: expected a mapping of cluster options")
        options.update(loaded)
        names.update((key, f"{args.spec}: {key}") for key in loaded)
    for key in ("nodes", "subnet", "cpus", "rate", "egress", "ingress", "dilation"):
        if getattr(args, key) is not None:
            options[key] = getattr(args, key)
            names[key] = f"--{key}"
    for key in ("rate", "egress", "ingress"):
        if getattr(args, f"master_{key}") is not None:
            options[f"master_{key}"] = getattr(args, f"master_{key}")
            names[f"master_{key}"] = f"--master-{key}"
    if args.node_rate:
        node_rates = dict(options.get("node_rates") or {})
        node_rates.update(parse_node_rate(text) for text in args.node_rate)
        options["node_rates"] = node_rates
    for key in ("latency", "jitter", "master_latency", "master_jitter"):
        if getattr(args, key) is not None:
            options[key] = getattr(args, key)
            names[key] = f"--{key.replace('_', '-')}"
    if args.node_latency:
        node_latency = dict(options.get("node_latency") or {})
        node_latency.update(parse_node_latency(text) for text in args.node_latency)
        options["node_latency"] = node_latency
        names["node_latency"] = "--node-latency"
    return build_spec(options, names)


def _no_rest(rest: list[str]) -> None:
    if rest:
        raise CLIError(f"unrecognized arguments: {' '.join(rest)}")


def cmd_up(args: argparse.Namespace, rest: list[str]) -> int:
    _no_rest(rest)
    from gradcode.cluster import control

    done = control.up(_spec(args), with_slurm=not args.no_slurm)
    print(f"gradcode cluster: {done}")
    return _print_status(False)


def cmd_down(_: argparse.Namespace, rest: list[str]) -> int:
    _no_rest(rest)
    from gradcode.cluster import control

    left = control.down()
    if left:
        print(f"gradcode cluster: down, but left behind: {', '.join(left)}", file=sys.stderr)
        return 1
    print("gradcode cluster: down (no namespace, link, mount, daemon or delayer left)")
    return 0


def _print_status(as_json: bool) -> int:
    from gradcode.cluster import control

    status = control.status()
    if as_json:
        print(json.dumps(status, indent=1))
        return 0 if status else 1
    if status is None:
        print("gradcode cluster: no cluster is up")
        return 1
    state = "up" if status["complete"] and not status["missing"] else "BROKEN (run down)"
    print(f"cluster {state}, subnet {status['subnet']}")
    head = f"{'node':10s} {'role':7s} {'address':14s} {'egress':>10s} {'ingress':>10s}"
    print(f"{head} {'latency':>9s} {'jitter':>9s}  slurm")
    for node in status["nodes"]:
        print(
            f"{node['name']:10s} {node['role']:7s} {node['address']:14s} "
            f"{node['egress']:>10s} {node['ingress']:>10s} {node['latency']:>9s} "
            f"{node['jitter']:>9s}  {node['slurm']}"
        )
    delayer = status["delayer"]
    if delayer is not None and delayer["running"]:
        counts = f"{delayer['packets']} packets"
        if delayer["cpu_us_per_packet"] is not None:
            counts += (
                f", {delayer['cpu_us_per_packet']} us CPU each, released "
                f"{delayer['late_us_mean']} us late on average"
            )
        print(f"link delayer: running (pid {delayer['pid']}, {counts})")
    elif delayer is not None:
        when = ""
        if delayer["last_alive"] is not None:
            moment = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(delayer["last_alive"]))
            when = f", last alive {moment}"
        print(
            f"link delayer: DIED (pid {delayer['pid']}{when}): the links have no latency "
            "since (gradcode cluster up again remakes the cluster)"
        )
    if status["missing"]:
        print(f"missing: {', '.join(status['missing'])}")
    return 0


def cmd_status(args: argparse.Namespace, rest: list[str]) -> int:
    _no_rest(rest)
    return _print_status(args.json)


def _command(rest: list[str]) -> list[str]:
    command = rest[1:] if rest[:1] == ["--"] else rest
    if not command:
        raise CLIError("give the command to run after --, e.g. -- hostname")
    return command


def cmd_exec(args: argparse.Namespace, rest: list[str]) -> int:
    from gradcode.cluster import control

    argv = control.exec_argv(args.node, _command(rest))
    os.execvp(argv[0], argv)
    return 127  # not reached


def cmd_mpiexec(args: argparse.Namespace, rest: list[str]) -> int:
    from gradcode.cluster import control
    from gradcode.cluster.mpi import hydra

    spec = control.current_spec()
    if args.n < 1:
        raise CLIError(f"-n must be at least 1, got {args.n}")
    argv = control.exec_argv(
        spec.master.name,
        hydra.mpiexec_command(spec, args.n, _command(rest)),
    )
    if args.print:
        print(" ".join(argv))
        return 0
    os.execvp(argv[0], argv)
    return 127  # not reached


def cmd_ulfm(args: argparse.Namespace, rest: list[str]) -> int:
    from gradcode.cluster import control
    from gradcode.cluster.mpi import ulfm

    spec = control.current_spec()
    if args.n < 1:
        raise CLIError(f"-n must be at least 1, got {args.n}")
    nodes = _rank_nodes(spec)
    try:
        line = ulfm.command(
            nodes,
            args.n,
            _command(rest),
            period=args.detector_period,
            timeout=args.detector_timeout,
        )
    except ValueError as error:
        raise CLIError(str(error)) from None
    argv = control.exec_argv(spec.master.name, line)
    if args.print:
        print(" ".join(f"{k}={v}" for k, v in ulfm.LAUNCHER_ENV.items()), " ".join(argv))
        return 0
    os.execvpe(argv[0], argv, ulfm.environment())
    return 127  # not reached


def cmd_measure(args: argparse.Namespace, rest: list[str]) -> int:
    _no_rest(rest)
    from gradcode.cluster import control
    from gradcode.cluster.network import probe
    from gradcode.cluster.spec import format_limit
    from gradcode.rate import Rate

    spec = control.current_spec()
    source, target = spec.node(args.source), spec.node(args.target)
    result = probe.measure(spec, source.name, target.name, args.bytes)
    limits = [r for r in (source.egress, target.ingress) if r is not None]
    expected = min(limits) if limits else None
    line = {
        "from": source.name,
        "to": target.name,
        "bytes": result.bytes,
        "seconds": round(result.seconds, 4),
        "mbit_per_s": round(result.bits_per_second / 1e6, 2),
        "configured": format_limit(expected),
    }
    if expected is not None:
        line["ratio"] = round(result.bits_per_second / expected.bits_per_second, 4)
    print(json.dumps(line))
    if args.within is not None and expected is not None:
        tolerance = args.within
        if abs(line["ratio"] - 1) > tolerance:
            print(
                f"gradcode cluster: measured {Rate.from_bits(result.bits_per_second):.4g}, "
                f"configured {expected}: off by more than {tolerance:.0%}",
                file=sys.stderr,
            )
            return 1
    return 0


def cmd_cut(args: argparse.Namespace, rest: list[str]) -> int:
    from gradcode.cluster import control
    from gradcode.cluster.faults import cut

    plan = cut.plan_cut(args.node, args.seconds, args.after, args.at_iteration, args.log)
    control.current_spec().node(plan.node)  # a node of the cluster that is up
    command = _command(rest) if rest else []
    return cut.run_cut(plan, command, args.record)


def _rank_nodes(spec) -> list[str]:
    """Where ``gradcode cluster ulfm`` puts rank ``r``: the ``r``-th of these, the SLURM job's
    nodes (the allocation's order) in a job, else every node of the cluster."""
    from gradcode.cluster.network import rerate

    return rerate.job_nodes() or [node.name for node in spec.nodes]


def cmd_lose(args: argparse.Namespace, rest: list[str]) -> int:
    from gradcode.cluster import control
    from gradcode.cluster.faults import lose
    from gradcode.cluster.network import namespaces
    from gradcode.cluster.state import State

    spec = control.current_spec()
    plan = lose.plan_lose(
        args.node,
        args.how,
        args.after,
        args.at_iteration,
        args.log,
        args.tcp_retries,
        rank=args.rank,
        nodes=_rank_nodes(spec) if args.rank is not None else (),
    )
    spec.node(plan.node)  # a node of the cluster that is up
    if plan.node == spec.master.name:
        raise CLIError(f"{plan.node} is the master's node (slurmctld, the launcher): not lost")
    namespaces.require_privileges()
    command = _command(rest) if rest else []
    if args.give_back and not command:
        raise CLIError("--return: gives the node back after a command (-- CMD ...); none given")
    nodes = [node.name for node in spec.nodes]
    state = State.load()
    give_back = (lambda plan: lose.return_node(plan, spec, state)) if args.give_back else None
    return lose.run_lose(plan, command, args.record, nodes=nodes, give_back=give_back)


def cmd_rate(args: argparse.Namespace, rest: list[str]) -> int:
    from gradcode.cluster import control
    from gradcode.cluster.network import namespaces, rerate

    rerate.parse_sweep_rate(args.rate, "--rate")  # a bad rate first, before the cluster
    if args.master_rate is not None:
        rerate.parse_sweep_rate(args.master_rate, "--master-rate")
    command = _command(rest)
    spec = control.current_spec()
    # in a SLURM job only its own nodes, which it holds alone (--exclusive); else every node
    plan = rerate.plan_rates(spec, args.rate, args.master_rate, rerate.job_nodes())
    namespaces.require_privileges()
    return rerate.run_rates(plan, command, args.record)


def cmd_latency(args: argparse.Namespace, rest: list[str]) -> int:
    from gradcode.cluster import control
    from gradcode.cluster.latency import relatency
    from gradcode.cluster.network import namespaces
    from gradcode.cluster.state import State

    spec = control.current_spec()
    # checked before the command is looked at: a bad value is the first thing to hear about
    plan = relatency.plan_latency(
        spec,
        args.latency,
        args.jitter,
        args.master_latency,
        args.master_jitter,
        _latency_nodes(),
    )
    command = _command(rest)
    namespaces.require_privileges()
    state = State.load()
    if state is None:
        raise CLIError("no emulated cluster is up: gradcode cluster up --nodes N first")
    return relatency.run_latency(plan, state, command, args.record)


def _latency_nodes() -> list[str] | None:
    """In a SLURM job only its own nodes, which it holds alone (--exclusive); else every
    node."""
    from gradcode.cluster.network import rerate

    return rerate.job_nodes()


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
    """``cluster up`` and the cluster's options (``_spec``)."""
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
