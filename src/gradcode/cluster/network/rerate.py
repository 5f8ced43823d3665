"""``gradcode cluster rate --rate R [--master-rate R] [--record FILE] -- CMD ...``: the links
at another rate for the length of one command.

Why: issue 11 asks for message time against size *and rate*, and bringing a cluster down and
up again for every rate would restart SLURM and every node between measurements. Instead,
while ``CMD`` runs, every node's two tbf qdiscs (in a SLURM job: those of the job's nodes, see
below) are replaced (``namespaces.limit_command``, the same ``tc`` calls ``up`` makes): the
node's egress on its own ``gc-veth`` in its namespace, its ingress on the switch's port to it
in ``gc-switch``; the workers' at ``--rate``, the master's node's (``gc-node0``) at
``--master-rate`` (default ``--rate``), both directions, whatever heterogeneous rates the
cluster was brought up with. Afterwards the cluster's own rates, from
the spec in its state file, are put back (a direction that was unlimited has its qdisc
deleted), whatever happens once the first qdisc changed: a normal exit, an exception, Ctrl-C,
or SIGTERM/SIGHUP (passed on to ``CMD`` first). ``CMD``'s exit status is returned.

Only safe when nothing else uses the links meanwhile: any other job on a node whose rate
changed would be timed at the wrong rate. So inside a SLURM job (``SLURM_JOB_NODELIST`` set)
only the job's own nodes change, and the job must have them to itself: in the workflow (rule
``cluster_link_rates``) the probe job runs one rank per node with ``--exclusive``, and the
other nodes' links, hence their jobs, are left alone (the switch itself is not limited).
Outside SLURM every node changes. With the master's rate equal to the workers' (as the
workflow sweeps), which node rank 0 lands on does not matter.

``--record FILE`` writes what was done as JSON (atomically): the rates and every ``tc`` command
set and restored, the moments on the monotonic and wall clocks, the command and its status.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gradcode import slurmjob
from gradcode.cluster.during.command import given_command, run_during
from gradcode.cluster.network import namespaces
from gradcode.cluster.network.running import current_spec
from gradcode.cluster.spec import (
    ClusterSpec,
    ClusterSpecError,
    dilated_rate,
    format_limit,
    limit_bits,
    parse_limit,
)
from gradcode.errors import UserError
from gradcode.rate import Rate


class RateError(UserError):
    """A bad rate request, or links that could not be put back (one line)."""


@dataclass(frozen=True)
class Limit:
    """One direction of one node's link at ``rate`` (``None``: unlimited, no qdisc)."""

    node: str
    direction: str
    rate: Rate | None

    def as_dict(self, spec: ClusterSpec) -> dict[str, Any]:
        return {
            "node": self.node,
            "direction": self.direction,
            "rate": limit_bits(self.rate),
            "stated": format_limit(self.rate),
            "command": " ".join(self.command(spec)),
        }

    def command(self, spec: ClusterSpec) -> list[str]:
        node = spec.node(self.node)
        return namespaces.limit_command(node, self.direction, self.rate, spec.enforced_queue_us)


@dataclass(frozen=True)
class RatePlan:
    """What is set while the command runs (``during``) and put back after it (``after``, the
    cluster's own rates, in reverse order)."""

    spec: ClusterSpec
    rate: Rate
    master_rate: Rate
    during: tuple[Limit, ...]
    after: tuple[Limit, ...]


def parse_sweep_rate(value: object, option: str) -> Rate:
    """A rate to measure at (``spec.parse_limit``); ``RateError`` naming ``option`` when it is
    bad or unlimited (an unlimited link has no rate to check)."""
    try:
        rate = parse_limit(value, option)
    except ClusterSpecError as error:
        raise RateError(str(error)) from None
    if rate is None:
        raise RateError(f"{option}: a rate like 100mbit (got {value!r}: unlimited)")
    return rate


def plan_rates(
    spec: ClusterSpec,
    rate: object,
    master_rate: object = None,
    nodes: Sequence[str] | None = None,
) -> RatePlan:
    """Both directions of every node (or of ``nodes``) at ``rate`` (the master's node at
    ``master_rate``, default ``rate``), and the spec's rates to restore."""
    workers = parse_sweep_rate(rate, "--rate")
    master = workers if master_rate is None else parse_sweep_rate(master_rate, "--master-rate")
    # asked in the runs' (virtual) time: a dilated cluster enforces them k times slower
    workers = dilated_rate(workers, spec.dilation, "--rate")
    master = dilated_rate(master, spec.dilation, "--master-rate")
    chosen = spec.nodes if nodes is None else [spec.node(name) for name in nodes]
    during = tuple(
        Limit(node.name, direction, master if node.master else workers)
        for node in sorted(set(chosen), key=lambda node: node.index)
        for direction in namespaces.DIRECTIONS
    )
    after = tuple(
        Limit(limit.node, limit.direction, getattr(spec.node(limit.node), limit.direction))
        for limit in reversed(during)
    )
    return RatePlan(spec, workers, master, during, after)


def job_nodes(environ: Mapping[str, str] | None = None) -> list[str] | None:
    """The nodes of the SLURM job this runs in (``gradcode.slurmjob.job_nodes``, ``scontrol``
    run as the cluster runs its commands); ``None`` outside a job."""
    try:
        return slurmjob.job_nodes(environ, namespaces.run)
    except slurmjob.JobNodesError as error:
        raise RateError(str(error)) from None


def _moment() -> dict[str, float]:
    return {"clock": time.perf_counter(), "wall": time.time()}


def run_rates(plan: RatePlan, command: Sequence[str], record: str | Path | None = None) -> int:
    """Set ``plan.during``, run ``command``, put back ``plan.after`` (only the directions that
    were changed); the command's exit status. The command, signals and the record are
    ``gradcode.cluster.during.command.run_during``'s. A restore that fails is tried for every other
    direction first, then raised as one ``RateError``."""
    if not command:
        raise RateError("give the command to run at the new rates after --, e.g. -- hostname")
    result: dict[str, Any] = {
        "rate": limit_bits(plan.rate),
        "master_rate": limit_bits(plan.master_rate),
        "stated": {"rate": str(plan.rate), "master_rate": str(plan.master_rate)},
        "set": [],
        "restored": [],
    }
    changed: set[tuple[str, str]] = set()

    def set_rates(result: dict[str, Any]) -> None:
        for limit in plan.during:
            # counted as changed before the call: an interrupt may come while tc runs; a tc
            # that fails has changed nothing (replace is atomic), so it is not restored
            key = (limit.node, limit.direction)
            changed.add(key)
            try:
                namespaces.run(limit.command(plan.spec))
            except namespaces.ClusterError:
                changed.discard(key)
                raise
            result["set"].append(limit.as_dict(plan.spec))
        result["rates_set"] = _moment()

    def restore_rates(result: dict[str, Any]) -> None:
        failed = []
        for limit in plan.after:
            if (limit.node, limit.direction) not in changed:
                continue
            try:
                namespaces.run(limit.command(plan.spec))
                result["restored"].append(limit.as_dict(plan.spec))
            except namespaces.ClusterError as error:
                failed.append(str(error))
        result["rates_restored"] = _moment()
        if failed:
            result["restore_failed"] = failed

    status = run_during(None, command, record, result, setup=set_rates, cleanup=restore_rates)
    failed = result.get("restore_failed")
    if failed:
        raise RateError(
            f"could not restore {len(failed)} of the cluster's rates (gradcode cluster "
            f"status shows them; down and up again restores all): {failed[0]}"
        )
    return status


def cmd_rate(args: argparse.Namespace, rest: list[str]) -> int:
    """``gradcode cluster rate --rate R [--master-rate R] -- CMD ...``: the rates checked before
    the cluster is looked at, then set for the command's length."""
    parse_sweep_rate(args.rate, "--rate")  # a bad rate first, before the cluster
    if args.master_rate is not None:
        parse_sweep_rate(args.master_rate, "--master-rate")
    command = given_command(rest)
    spec = current_spec()
    # in a SLURM job only its own nodes, which it holds alone (--exclusive); else every node
    plan = plan_rates(spec, args.rate, args.master_rate, job_nodes())
    namespaces.require_privileges()
    return run_rates(plan, command, args.record)
