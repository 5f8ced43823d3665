"""``gradcode cluster cut NODE --for S (--after S | --at-iteration K --log FILE)``: a straggling
link. One node's link goes down (``ip -n NODE link set gc-veth down``: the node's own end of
its link, in its namespace) for ``S`` seconds, then up again.

When: ``--after`` seconds after the command starts, or once a training run's ``log.jsonl``
holds ``K`` complete lines (iterations ``0 .. K-1`` done: the cut falls in iteration ``K``;
the log is flushed at every line), so that two runs are cut at the same iteration however
long each took to start. With ``-- CMD ...`` the command (e.g. the MPI job) runs meanwhile,
the cut is scheduled from its start, and its exit status is returned; a command that ends
before the trigger is never cut.

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

import math
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gradcode.atomic import write_json
from gradcode.cluster import signals
from gradcode.cluster.spec import NODE_IFACE
from gradcode.errors import UserError

#: seconds between looks at the trigger
POLL = 0.02


class CutError(UserError):
    """A bad cut request (one line naming the option)."""


@dataclass(frozen=True)
class CutPlan:
    """Which node, for how long, and when: ``after`` seconds, or ``at_iteration`` lines of
    ``log``."""

    node: str
    seconds: float
    after: float | None = None
    at_iteration: int | None = None
    log: Path | None = None

    def trigger(self) -> dict[str, Any]:
        if self.after is not None:
            return {"after_seconds": self.after}
        return {"at_iteration": self.at_iteration, "log": str(self.log)}


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
    if not _finite(seconds) or seconds <= 0:
        raise CutError(f"--for: seconds > 0 (got {seconds!r})")
    if (after is None) == (at_iteration is None):
        raise CutError("give exactly one of --after SECONDS and --at-iteration K (with --log)")
    if after is not None:
        if not _finite(after) or after < 0:
            raise CutError(f"--after: seconds >= 0 (got {after!r})")
        if log is not None:
            raise CutError("--log goes with --at-iteration, not --after")
        return CutPlan(node, float(seconds), after=float(after))
    if isinstance(at_iteration, bool) or not isinstance(at_iteration, int) or at_iteration < 1:
        raise CutError(f"--at-iteration: an integer >= 1 (got {at_iteration!r})")
    if log is None:
        raise CutError("--at-iteration needs --log: the run's log.jsonl")
    return CutPlan(node, float(seconds), at_iteration=at_iteration, log=Path(log))


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def link_command(node: str, state: str) -> list[str]:
    """``ip`` setting ``node``'s end of its link ``up`` or ``down``."""
    if state not in ("up", "down"):
        raise ValueError(f"state: up or down (got {state!r})")
    return ["ip", "-n", node, "link", "set", NODE_IFACE, state]


def complete_lines(path: Path | None) -> int:
    """Complete lines (ending in a newline) of ``path``; 0 while it does not exist."""
    if path is None:
        return 0
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def _moment(plan: CutPlan) -> dict[str, Any]:
    return {"clock": time.perf_counter(), "wall": time.time(), "log_lines": _lines(plan)}


def _lines(plan: CutPlan) -> int | None:
    return complete_lines(plan.log) if plan.log is not None else None


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
    set_link = set_link or _ip_set_link
    began = time.perf_counter()
    child = subprocess.Popen(list(command)) if command else None
    result: dict[str, Any] = {
        "node": plan.node,
        "interface": NODE_IFACE,
        "how": f"ip -n {plan.node} link set {NODE_IFACE} down, then up",
        "seconds": plan.seconds,
        "trigger": plan.trigger(),
        "command": list(command),
        "started": {"clock": began, "wall": time.time()},
        "down": None,
        "up": None,
    }

    previous = signals.raise_on_stop()
    status = 0
    try:
        if _wait_for_trigger(plan, began, child):
            cut = False
            try:
                result["down"] = _moment(plan)
                cut = True
                set_link(plan.node, "down")
                until = time.perf_counter() + plan.seconds
                while (left := until - time.perf_counter()) > 0:
                    time.sleep(min(left, POLL))
            finally:
                if cut:
                    set_link(plan.node, "up")
                    result["up"] = _moment(plan)
        else:
            result["not_cut"] = "the command ended before the trigger"
        if child is not None:
            status = child.wait()
    except (signals.Stop, KeyboardInterrupt) as error:
        result["interrupted"] = str(error) or "KeyboardInterrupt"
        if child is not None and child.poll() is None:
            child.send_signal(signals.signal_number(error))
            status = child.wait()
        status = status or 128 + signals.signal_number(error)
    finally:
        signals.restore(previous)
        result["returncode"] = status
        if record is not None:
            write_json(record, result)
    return status


def _wait_for_trigger(plan: CutPlan, began: float, child: subprocess.Popen | None) -> bool:
    """Sleep until the trigger; False if the command ended first."""
    while True:
        if plan.after is not None:
            if time.perf_counter() - began >= plan.after:
                return True
        elif complete_lines(plan.log) >= (plan.at_iteration or 0):
            return True
        if child is not None and child.poll() is not None:
            return False
        time.sleep(POLL)


def _ip_set_link(node: str, state: str) -> None:
    argv = link_command(node, state)
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise CutError(f"{' '.join(argv)} failed: {(done.stderr or done.stdout).strip()}")
