"""``gradcode cluster lose NODE (--kill | --link) (--after S | --at-iteration K --log FILE)
[--record FILE] [-- CMD ...]``: a node lost for good during a run.

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

With ``--link`` under ``gradcode cluster ulfm``, a rank's PMIx connection to the launcher
does not cross its link (``gradcode.cluster.noderank``): the cut-off rank learns it was
declared dead and aborts, but its own heartbeat detector may first declare the healthy rank it
watches dead and that report gets out too (1 run in 3 here: two workers lost, README "A node
lost").

When, the command and the record are ``gradcode.cluster.during``'s (as for ``cut``); the
record adds the node, how it was lost, ``lost`` (the moment on the runtime's monotonic clock:
a run's ``failures[].monotonic`` minus ``lost.clock`` is the detection time) and, for
``--kill``, every process killed (pid and name). Nothing is put back: to have the node again,
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

from gradcode.cluster.cut import ip_set_link
from gradcode.cluster.during import Trigger, moment, plan_trigger, run_during
from gradcode.cluster.network import netns_path, processes_in
from gradcode.cluster.spec import NODE_IFACE
from gradcode.errors import UserError

HOW = ("kill", "link")
#: how many rounds of SIGKILL before a node that keeps spawning counts as not killed
ROUNDS = 20
#: retransmissions before the other nodes' TCP gives up on the lost node (Linux: 15)
TCP_RETRIES = 5
TCP_RETRIES_KEY = "net.ipv4.tcp_retries2"


class LoseError(UserError):
    """A bad or failed node loss (one line naming the option or what failed)."""


@dataclass(frozen=True)
class LosePlan:
    """Which node, how (``kill`` or ``link``), and when."""

    node: str
    how: str
    when: Trigger
    tcp_retries: int = TCP_RETRIES


def plan_lose(
    node: str,
    how: str,
    after: float | None = None,
    at_iteration: int | None = None,
    log: str | Path | None = None,
    tcp_retries: int = TCP_RETRIES,
) -> LosePlan:
    """A checked ``LosePlan``; ``LoseError`` naming the option otherwise."""
    if not node:
        raise LoseError("NODE: give the node to lose, e.g. gc-node3")
    if how not in HOW:
        raise LoseError("give one of --kill (every process on the node) and --link (its link)")
    if isinstance(tcp_retries, bool) or not isinstance(tcp_retries, int) or tcp_retries < 1:
        raise LoseError(f"--tcp-retries: an integer >= 1 (got {tcp_retries!r})")
    return LosePlan(node, how, plan_trigger(after, at_iteration, log, LoseError), tcp_retries)


def kill_node(node: str, pids: Callable[[str], list[int]] = processes_in) -> list[dict[str, Any]]:
    """``SIGKILL`` every process in ``node``'s namespace until none is left alive; each one
    killed (pid, name)."""
    killed: list[dict[str, Any]] = []
    seen: set[int] = set()
    for _ in range(ROUNDS):
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
        raise LoseError(f"{node}: processes {left} still alive after {ROUNDS} rounds of SIGKILL")
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
) -> int:
    """Run ``command`` (if any), lose ``plan.node`` at the trigger, wait for the command; the
    command's exit status (0 without one). ``nodes``: the cluster's nodes (with ``--link``
    the others' ``tcp_retries2`` is lowered while the command runs, then put back)."""
    result: dict[str, Any] = {"node": plan.node, "how": plan.how, "lost": None}
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

    if plan.how != "link" or not command:
        return run_during(plan.when, command, record, result, lose, "not_lost")
    survivors = [name for name in nodes if name != plan.node]
    before = {node: sysctl(node) for node in survivors}
    result["tcp_retries2"] = {"during": plan.tcp_retries, "before": before}
    try:
        for node in survivors:
            sysctl(node, plan.tcp_retries)
        return run_during(plan.when, command, record, result, lose, "not_lost")
    finally:
        for node, value in before.items():
            sysctl(node, value)
