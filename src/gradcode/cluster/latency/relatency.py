"""``gradcode cluster latency --latency L [--jitter J] [--master-latency L] [--record FILE]
-- CMD ...``: the links at another latency for the length of one command.

Like ``gradcode cluster rate`` (``network.rerate``), and for the same reason: a sweep over latencies
without bringing the cluster down and up (SLURM and every node restarted) between points.
While ``CMD`` runs, the delayer holds what is sent to each node (in a SLURM job: to the job's
nodes only, which it holds alone) for ``--latency`` (``--master-latency`` for the master's
node, default ``--latency``) with ``--jitter``; afterwards the cluster's own latencies are put
back, whatever happens once they changed (``during.command.run_during``'s cleanup). A new setting
applies to packets that arrive after it; packets already held keep their release times.

A cluster brought up without latency has no delayer (its packets never leave the kernel):
then one is started for the command, with its rules, and removed after it (unless no node is
asked for any latency: then the command runs on the links as they are); meanwhile every
port's packets pass through it, the other nodes' (outside a SLURM job's) at no delay, which
still costs them the delayer's own path (about 0.15 ms a pass, ``docs/measurements``). A
delayer that died is refused (``cluster status`` says so): its links would not have the
latency asked for.

``--record FILE`` writes what was done as JSON: the latencies as set (nanoseconds and as
stated), the moments they held and were put back on the monotonic and wall clocks, the CPU
seconds the delayer used meanwhile (``delayer_cpu_seconds``: on one machine it shares the
cores with the nodes), the command and its exit status.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gradcode.cluster.during.command import given_command, run_during
from gradcode.cluster.latency import delay
from gradcode.cluster.network import namespaces
from gradcode.cluster.network.rerate import job_nodes
from gradcode.cluster.network.running import current_spec
from gradcode.cluster.spec import ClusterSpec, check_jitter, dilated_delay, parse_delay
from gradcode.cluster.state import State
from gradcode.duration import Duration
from gradcode.errors import CLIError, UserError

Setting = dict[int, tuple[Duration, Duration]]


class LatencyError(UserError):
    """A bad latency request, or latencies that could not be put back (one line)."""


@dataclass(frozen=True)
class LatencyPlan:
    """What is set while the command runs (``during``, per node's queue) and put back after
    it (``after``, the cluster's own)."""

    spec: ClusterSpec
    latency: Duration
    jitter: Duration
    master_latency: Duration
    master_jitter: Duration
    during: Setting
    after: Setting


def plan_latency(
    spec: ClusterSpec,
    latency: object,
    jitter: object = None,
    master_latency: object = None,
    master_jitter: object = None,
    nodes: Sequence[str] | None = None,
) -> LatencyPlan:
    """Every node (or ``nodes``) at ``latency`` and ``jitter`` (the master's node at
    ``master_latency`` and ``master_jitter``, default the workers'), checked, one line naming
    the option otherwise."""
    try:
        workers = parse_delay(latency, "--latency")
        spread = parse_delay(0 if jitter is None else jitter, "--jitter")
        check_jitter(workers, spread, "--jitter")
        master = (
            workers if master_latency is None else parse_delay(master_latency, "--master-latency")
        )
        master_spread = (
            spread if master_jitter is None else parse_delay(master_jitter, "--master-jitter")
        )
        check_jitter(master, master_spread, "--master-jitter")
        # asked in the runs' (virtual) time: a dilated cluster enforces them k times longer
        k = spec.dilation
        workers = dilated_delay(workers, k, "--latency")
        spread = dilated_delay(spread, k, "--jitter")
        master = dilated_delay(master, k, "--master-latency")
        master_spread = dilated_delay(master_spread, k, "--master-jitter")
        chosen = spec.nodes if nodes is None else [spec.node(name) for name in nodes]
    except UserError as error:
        raise LatencyError(str(error)) from None
    during = {
        node.index: (master, master_spread) if node.master else (workers, spread)
        for node in sorted(set(chosen), key=lambda node: node.index)
    }
    after = {index: delay.delays(spec)[index] for index in during}
    return LatencyPlan(spec, workers, spread, master, master_spread, during, after)


def _moment(generation: int | None = None) -> dict[str, Any]:
    found: dict[str, Any] = {"clock": time.perf_counter(), "wall": time.time()}
    if generation is not None:
        found["generation"] = generation
    return found


def _as_record(setting: Setting) -> list[dict[str, Any]]:
    return [
        {"queue": q, "latency_ns": lat.nanoseconds, "jitter_ns": jit.nanoseconds}
        for q, (lat, jit) in sorted(setting.items())
    ]


def _delayer_cpu(state: State) -> float | None:
    entry = delay.entry_of(state)
    return None if entry is None else delay.cpu_seconds(entry.get("pid"))


def run_latency(
    plan: LatencyPlan, state: State, command: Sequence[str], record: str | Path | None = None
) -> int:
    """Set ``plan.during``, run ``command``, put back ``plan.after``; the command's exit
    status. A restore that fails is raised as one ``LatencyError`` after the record is
    written."""
    if not command:
        raise LatencyError("give the command to run at the new latency after --, e.g. -- hostname")
    entry = delay.entry_of(state)
    if entry is not None and not delay.running(entry.get("pid")):
        raise LatencyError(
            f"the cluster's link delayer (pid {entry.get('pid')}) died: gradcode cluster up "
            "again remakes the cluster"
        )
    temporary = entry is None
    # nothing to hold: a delayer at zero would still cost every packet its path through it
    untouched = temporary and not any(lat or jit for lat, jit in plan.during.values())
    result: dict[str, Any] = {
        "latency_ns": plan.latency.nanoseconds,
        "jitter_ns": plan.jitter.nanoseconds,
        "master_latency_ns": plan.master_latency.nanoseconds,
        "master_jitter_ns": plan.master_jitter.nanoseconds,
        "stated": {
            "latency": str(plan.latency),
            "jitter": str(plan.jitter),
            "master_latency": str(plan.master_latency),
            "master_jitter": str(plan.master_jitter),
        },
        "set": _as_record(plan.during),
        "delayer": (
            "none: the cluster has no latency and none was asked"
            if untouched
            else "started for the command"
            if temporary
            else "the cluster's"
        ),
    }
    if untouched:
        return run_during(None, command, record, result)
    changed = []

    def set_latency(result: dict[str, Any]) -> None:
        changed.append(True)  # before: an interrupt may come while it is being set
        if temporary:
            everyone = {node.index: (Duration(0), Duration(0)) for node in plan.spec.nodes}
            delay.start(plan.spec, state, {**everyone, **plan.during})
            result["latency_set"] = _moment(1)
        else:
            result["latency_set"] = _moment(delay.reconfigure(plan.during, state))
        result["latency_set"]["delayer_cpu_seconds"] = _delayer_cpu(state)

    def restore_latency(result: dict[str, Any]) -> None:
        if not changed:
            return
        # what delaying cost the machine meanwhile: on one host it takes the ranks' cores
        used = _delayer_cpu(state), result.get("latency_set", {}).get("delayer_cpu_seconds")
        if None not in used:
            result["delayer_cpu_seconds"] = round(used[0] - used[1], 3)
        try:
            if temporary:
                delay.remove(plan.spec, state)
                result["latency_restored"] = _moment()
            else:
                result["latency_restored"] = _moment(delay.reconfigure(plan.after, state))
            result["restored"] = _as_record(plan.after)
        except UserError as error:
            result["restore_failed"] = str(error)

    status = run_during(None, command, record, result, setup=set_latency, cleanup=restore_latency)
    if "restore_failed" in result:
        raise LatencyError(
            "could not restore the cluster's latencies (gradcode cluster up again remakes the "
            f"cluster): {result['restore_failed']}"
        )
    return status


def cmd_latency(args: argparse.Namespace, rest: list[str]) -> int:
    """``gradcode cluster latency --latency D [--jitter J] ... -- CMD ...``: the latencies
    checked before the command is looked at, then set for the command's length."""
    spec = current_spec()
    # checked before the command is looked at: a bad value is the first thing to hear about
    plan = plan_latency(
        spec,
        args.latency,
        args.jitter,
        args.master_latency,
        args.master_jitter,
        # in a SLURM job only its own nodes, which it holds alone (--exclusive); else every node
        job_nodes(),
    )
    command = given_command(rest)
    namespaces.require_privileges()
    state = State.load()
    if state is None:
        raise CLIError("no emulated cluster is up: gradcode cluster up --nodes N first")
    return run_latency(plan, state, command, args.record)
