"""``gradcode cluster lose (NODE | --rank R) (--kill | --link) (--after S | --at-iteration K
--log FILE) [--record FILE] [--return] [-- CMD ...]``: a node lost for good during a run.

- ``--kill``: every process on the node (in its network namespace: slurmd, a job step's
  slurmstepd, the MPI rank) gets ``SIGKILL``, again until none is left (one forked meanwhile
  included), as a crash or a power cut would leave it;
- ``--link``: the node's link goes down (``ip -n NODE link set gc-veth down``) and stays
  down; its processes live on, cut off. While CMD runs, every other node's kernel gives up on
  a connection whose segments go unanswered after ``--tcp-retries`` retransmissions
  (``net.ipv4.tcp_retries2`` of its namespace, 15 by default: about 15 minutes; the old values
  are put back when CMD ends). That does not detect anything for MPI (ULFM's heartbeat does,
  in seconds); it lets a survivor that still has bytes queued to the lost node get an error
  instead of waiting for them: Open MPI 5.0.11's ``MPI_Finalize`` closes every TCP endpoint
  with a blocking send and spins on the lost node's full socket until the kernel gives up
  (measured: the run's outputs written, the master in ``mca_btl_tcp_endpoint_close``, the job
  ended 8 s after ``tcp_retries2`` went from 15 to 3).

With ``--link`` under ``gradcode cluster ulfm``, a rank's PMIx connection to the launcher is
relayed on the master's node (``gradcode.cluster.mpi.noderank``), and the relay carries nothing
while the node's link is down, as the connection would on real nodes: the cut-off rank can
neither tell the launcher that it hears no one (before, its detector got the healthy rank it
watches declared dead: 1 run in 3) nor learn anything, and once the link has been down for the
relay's lifeline (twice the heartbeat timeout, at least 5 s) the relay kills it, as a node's
runtime daemon kills its processes when it loses the launcher.

``--return`` (the workflow's rule ``train_lost``) gives the node back once the command ended
(``return_node``): with SLURM it is marked DOWN first, which drops it from a ``--no-kill``
job, then whatever is left on it is killed, its link comes up and its slurmd starts again.

When, the command and the record are ``gradcode.cluster.during.command``'s (as for ``cut``); the
record adds the node (and ``rank`` with ``--rank R``: the node ``gradcode cluster ulfm`` puts
rank R on, the R-th of a SLURM job's nodes), how it was lost, ``lost`` (the moment on the
runtime's monotonic clock: a run's ``failures[].monotonic`` minus ``lost.clock`` is the
detection time), for ``--kill`` every process killed (pid and name), and with ``--return``
what ``returned`` the node. Without ``--return`` nothing is put back: to have the node again,
``gradcode cluster down`` and ``up``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gradcode.atomic import write_json
from gradcode.cluster import slurm
from gradcode.cluster.during.command import Trigger, moment, plan_trigger, run_during
from gradcode.cluster.faults.cut import ip_set_link
from gradcode.cluster.mpi.noderank import node_of
from gradcode.cluster.network.namespaces import netns_path, processes_in
from gradcode.cluster.spec import NODE_IFACE, ClusterSpec
from gradcode.cluster.state import State
from gradcode.errors import UserError
from gradcode.runfile.words import NODE_LOSS as HOW

#: seconds of repeated SIGKILL before a node that keeps spawning counts as not killed; a killed
#: process exits only once the kernel schedules it, which on a loaded machine takes far longer
#: than the signal (CI saw 200 ms pass with a nice-19 child still alive)
KILL_WAIT_S = 10.0
#: retransmissions before the other nodes' TCP gives up on the lost node (Linux: 15)
TCP_RETRIES = 5
TCP_RETRIES_KEY = "net.ipv4.tcp_retries2"


class LoseError(UserError):
    """A bad or failed node loss (one line naming the option or what failed)."""


@dataclass(frozen=True)
class LosePlan:
    """Which node (``rank``: the MPI rank it was chosen by, if any), how (``kill`` or
    ``link``), and when."""

    node: str
    how: str
    when: Trigger
    tcp_retries: int = TCP_RETRIES
    rank: int | None = None


def plan_lose(
    node: str | None,
    how: str,
    after: float | None = None,
    at_iteration: int | None = None,
    log: str | Path | None = None,
    tcp_retries: int = TCP_RETRIES,
    *,
    rank: int | None = None,
    nodes: Sequence[str] = (),
) -> LosePlan:
    """A checked ``LosePlan``; ``LoseError`` naming the option otherwise. ``rank``: lose the
    node MPI rank ``rank`` runs on instead of ``node``, the ``rank``-th of ``nodes`` (the
    job's nodes in a SLURM job, else the cluster's: where ``gradcode cluster ulfm`` puts it)."""
    if (node is None) == (rank is None):
        raise LoseError("give the node to lose (e.g. gc-node3) or --rank R (its MPI rank)")
    if rank is not None:
        if isinstance(rank, bool) or not isinstance(rank, int) or rank < 1:
            raise LoseError(f"--rank: a worker's rank >= 1 (rank 0 is the master; got {rank!r})")
        if not nodes:
            raise LoseError("--rank: no nodes to choose from (is the cluster up?)")
        node = node_of(rank, nodes)
    if not node:
        raise LoseError("NODE: give the node to lose, e.g. gc-node3")
    if how not in HOW:
        raise LoseError("give one of --kill (every process on the node) and --link (its link)")
    if isinstance(tcp_retries, bool) or not isinstance(tcp_retries, int) or tcp_retries < 1:
        raise LoseError(f"--tcp-retries: an integer >= 1 (got {tcp_retries!r})")
    when = plan_trigger(after, at_iteration, log, LoseError)
    return LosePlan(node, how, when, tcp_retries, rank)


def kill_node(node: str, pids: Callable[[str], list[int]] = processes_in) -> list[dict[str, Any]]:
    """``SIGKILL`` every process in ``node``'s namespace until none is left alive; each one
    killed (pid, name)."""
    killed: list[dict[str, Any]] = []
    seen: set[int] = set()
    deadline = time.monotonic() + KILL_WAIT_S
    while time.monotonic() < deadline:
        alive = [pid for pid in pids(node) if pid not in seen or _running(pid)]
        if not alive:
            return killed
        for pid in alive:
            name = _name(pid)
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                continue
            if pid not in seen:
                seen.add(pid)
                killed.append({"pid": pid, "name": name})
        time.sleep(0.01)
    left = [pid for pid in pids(node) if _running(pid)]
    if left:
        raise LoseError(f"{node}: processes {left} still alive after {KILL_WAIT_S:g} s of SIGKILL")
    return killed


def _name(pid: int) -> str | None:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return None


def _running(pid: int) -> bool:
    """Alive and not a zombie (a killed process its parent has not reaped yet)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def sysctl_command(node: str, value: int | None = None) -> list[str]:
    """Read (``value`` None) or set ``net.ipv4.tcp_retries2`` in ``node``'s namespace."""
    prefix = ["nsenter", f"--net={netns_path(node)}", "--", "sysctl"]
    if value is None:
        return [*prefix, "-n", TCP_RETRIES_KEY]
    return [*prefix, "-q", "-w", f"{TCP_RETRIES_KEY}={value}"]


def _sysctl(node: str, value: int | None = None) -> int | None:
    argv = sysctl_command(node, value)
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise LoseError(f"{' '.join(argv)} failed: {(done.stderr or done.stdout).strip()}")
    return int(done.stdout) if value is None else None


def run_lose(
    plan: LosePlan,
    command: Sequence[str] = (),
    record: str | Path | None = None,
    *,
    nodes: Sequence[str] = (),
    kill: Callable[[str], list[dict[str, Any]]] = kill_node,
    set_link: Callable[[str, str], None] = ip_set_link,
    sysctl: Callable[..., int | None] = _sysctl,
    give_back: Callable[[LosePlan], dict[str, Any]] | None = None,
) -> int:
    """Run ``command`` (if any), lose ``plan.node`` at the trigger, wait for the command; the
    command's exit status (0 without one). ``nodes``: the cluster's nodes (with ``--link``
    the others' ``tcp_retries2`` is lowered while the command runs, then put back).
    ``give_back`` (``--return``): once the command ended, the lost node is given back by it
    (``return_node``), its record under ``returned``."""
    result: dict[str, Any] = {"node": plan.node, "how": plan.how, "lost": None}
    if plan.rank is not None:
        result["rank"] = plan.rank
    if plan.how == "kill":
        result["what"] = f"SIGKILL to every process in {plan.node}'s network namespace"
    else:
        result["what"] = f"ip -n {plan.node} link set {NODE_IFACE} down, for good"

    def lose(result: dict[str, Any]) -> None:
        result["lost"] = moment(plan.when)
        if plan.how == "kill":
            result["killed"] = kill(plan.node)
        else:
            set_link(plan.node, "down")
        result["done"] = moment(plan.when)

    # with give_back the record is written once the node is back (or failed to come back)
    during_record = record if give_back is None else None
    try:
        if plan.how != "link" or not command:
            status = run_during(plan.when, command, during_record, result, lose, "not_lost")
        else:
            status = _with_tcp_retries(
                plan,
                nodes,
                sysctl,
                result,
                lambda: run_during(plan.when, command, during_record, result, lose, "not_lost"),
            )
    finally:
        if give_back is not None:
            try:
                if result["lost"] is not None:
                    result["returned"] = give_back(plan)
            finally:
                if record is not None:
                    write_json(record, result)
    return status


def _with_tcp_retries(
    plan: LosePlan,
    nodes: Sequence[str],
    sysctl: Callable[..., int | None],
    result: dict[str, Any],
    run: Callable[[], int],
) -> int:
    """``run()`` with every other node's ``tcp_retries2`` at ``plan.tcp_retries``."""
    survivors = [name for name in nodes if name != plan.node]
    before = {node: sysctl(node) for node in survivors}
    result["tcp_retries2"] = {"during": plan.tcp_retries, "before": before}
    try:
        for node in survivors:
            sysctl(node, plan.tcp_retries)
        return run()
    finally:
        for node, value in before.items():
            sysctl(node, value)


def return_node(plan: LosePlan, spec: ClusterSpec, state: State) -> dict[str, Any]:
    """Give the lost node back once the run is over, as an operator reboots a failed node:
    with SLURM, the node is first marked DOWN (what slurmctld does once its slurmd has been
    silent for ``SlurmdTimeout``; a job submitted with ``--no-kill`` drops the node and goes
    on, any other job ends), then whatever is left on it is killed, its link comes up, its
    slurmd starts again and SLURM has it idle (``ReturnToService=2``). What was done, with
    moments on the runtime's clock."""
    done: dict[str, Any] = {}
    with_slurm = slurm.uses_slurm(state)
    if with_slurm:
        slurm.scontrol(
            spec, "update", f"NodeName={plan.node}", "State=DOWN", "Reason=lost-by-gradcode"
        )
        done["slurm_down"] = moment(plan.when)
    done["killed"] = kill_node(plan.node)
    if plan.how == "link":
        ip_set_link(plan.node, "up")
    if with_slurm:
        slurm.start_slurmd(state, plan.node)
        slurm.wait_idle(spec, plan.node)
    done["back"] = moment(plan.when)
    return done
