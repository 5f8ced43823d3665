"""``gradcode cluster cut NODE --for S (--after S | --at-iteration K --log FILE)``: a straggling
link. One node's link goes down (``ip -n NODE link set gc-veth down``: the node's own end of
its link, in its namespace) for ``S`` seconds, then up again.

When, and the command around it: ``gradcode.cluster.during.command`` (``--after`` seconds, or once
the run's ``log.jsonl`` holds ``K`` lines; a command that ends before the trigger is never cut).

The link is put back up whatever happens once it was cut: at the end of the duration, or on
an exception, Ctrl-C or SIGTERM (which are passed on to the command). ``--record FILE`` writes
what was done as JSON: the node and interface, the trigger, the moments the link went down and
up on the monotonic clock the MPI runtime logs with (``time.perf_counter``, one clock for every
namespace of a kernel) and on the wall clock, the log's lines at both moments, and the
command's exit status.

While the link is down the node's TCP connections stay open (no route: their retransmissions
fail and back off), so a message in flight is delayed, not lost: it goes on once the link is
back and the next retransmission is due (TCP's backoff may add up to about as long again as
the cut).
"""

from __future__ import annotations

import argparse
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gradcode.cluster.during.command import (
    POLL,
    Trigger,
    complete_lines,
    finite,
    given_command,
    moment,
    plan_trigger,
    run_during,
)
from gradcode.cluster.network.running import current_spec
from gradcode.cluster.spec import NODE_IFACE
from gradcode.errors import UserError

__all__ = ["CutError", "CutPlan", "complete_lines", "link_command", "plan_cut", "run_cut"]


class CutError(UserError):
    """A bad cut request (one line naming the option)."""


@dataclass(frozen=True)
class CutPlan:
    """Which node, for how long, and when."""

    node: str
    seconds: float
    when: Trigger

    def trigger(self) -> dict[str, Any]:
        return self.when.describe()


def plan_cut(
    node: str,
    seconds: float,
    after: float | None = None,
    at_iteration: int | None = None,
    log: str | Path | None = None,
) -> CutPlan:
    """A checked ``CutPlan``; ``CutError`` naming the option otherwise."""
    if not node:
        raise CutError("NODE: give the node whose link is cut, e.g. gc-node3")
    if not finite(seconds) or seconds <= 0:
        raise CutError(f"--for: seconds > 0 (got {seconds!r})")
    return CutPlan(node, float(seconds), plan_trigger(after, at_iteration, log, CutError))


def link_command(node: str, state: str) -> list[str]:
    """``ip`` setting ``node``'s end of its link ``up`` or ``down``."""
    if state not in ("up", "down"):
        raise ValueError(f"state: up or down (got {state!r})")
    return ["ip", "-n", node, "link", "set", NODE_IFACE, state]


def run_cut(
    plan: CutPlan,
    command: Sequence[str] = (),
    record: str | Path | None = None,
    *,
    set_link: Callable[[str, str], None] | None = None,
) -> int:
    """Run ``command`` (if any), cut ``plan.node``'s link at the trigger for ``plan.seconds``,
    put it back, wait for the command; the command's exit status (0 without one).
    ``set_link(node, state)`` changes the link (default: ``ip``)."""
    set_link = set_link or ip_set_link
    result: dict[str, Any] = {
        "node": plan.node,
        "interface": NODE_IFACE,
        "how": f"ip -n {plan.node} link set {NODE_IFACE} down, then up",
        "seconds": plan.seconds,
        "down": None,
        "up": None,
    }

    def cut(result: dict[str, Any]) -> None:
        result["down"] = moment(plan.when)
        try:
            set_link(plan.node, "down")
            until = time.perf_counter() + plan.seconds
            while (left := until - time.perf_counter()) > 0:
                time.sleep(min(left, POLL))
        finally:
            set_link(plan.node, "up")
            result["up"] = moment(plan.when)

    return run_during(plan.when, command, record, result, cut, "not_cut")


def ip_set_link(node: str, state: str) -> None:
    """``link_command``, run; ``CutError`` with ip's message when it fails."""
    argv = link_command(node, state)
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise CutError(f"{' '.join(argv)} failed: {(done.stderr or done.stdout).strip()}")


def cmd_cut(args: argparse.Namespace, rest: list[str]) -> int:
    """``gradcode cluster cut NODE --for S ...``: checked, then cut (during ``-- CMD`` if
    given)."""
    plan = plan_cut(args.node, args.seconds, args.after, args.at_iteration, args.log)
    current_spec().node(plan.node)  # a node of the cluster that is up
    command = given_command(rest) if rest else []
    return run_cut(plan, command, args.record)
