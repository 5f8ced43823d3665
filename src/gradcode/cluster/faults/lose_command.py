"""The handler of ``gradcode cluster lose`` (``gradcode.cluster.faults.lose``): the node named or
found from ``--rank``, checked against the cluster that is up, lost during the command, and
given back after it with ``--return``."""

from __future__ import annotations

import argparse

from gradcode.cluster.during.command import given_command
from gradcode.cluster.faults import lose
from gradcode.cluster.mpi.ulfm import rank_nodes
from gradcode.cluster.network import namespaces
from gradcode.cluster.network.running import current_spec
from gradcode.cluster.state import State
from gradcode.errors import CLIError


def cmd_lose(args: argparse.Namespace, rest: list[str]) -> int:
    """``gradcode cluster lose (NODE | --rank R) (--kill | --link) ... [--return] [-- CMD]``."""
    spec = current_spec()
    plan = lose.plan_lose(
        args.node,
        args.how,
        args.after,
        args.at_iteration,
        args.log,
        args.tcp_retries,
        rank=args.rank,
        nodes=rank_nodes(spec) if args.rank is not None else (),
    )
    spec.node(plan.node)  # a node of the cluster that is up
    if plan.node == spec.master.name:
        raise CLIError(f"{plan.node} is the master's node (slurmctld, the launcher): not lost")
    namespaces.require_privileges()
    command = given_command(rest) if rest else []
    if args.give_back and not command:
        raise CLIError("--return: gives the node back after a command (-- CMD ...); none given")
    nodes = [node.name for node in spec.nodes]
    state = State.load()
    give_back = (lambda plan: lose.return_node(plan, spec, state)) if args.give_back else None
    return lose.run_lose(plan, command, args.record, nodes=nodes, give_back=give_back)
