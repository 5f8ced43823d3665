"""Something done to the cluster at a chosen moment while a command runs (``cut``, ``lose``),
or for as long as it runs (``rate``).

When: ``--after`` seconds after the start, or once a training run's ``log.jsonl`` holds ``K``
complete lines (iterations ``0 .. K-1`` done: the action falls in iteration ``K``; the log is
flushed at every line), so that two runs are hit at the same iteration however long each took
to start. With ``-- CMD ...`` the command (e.g. the MPI job) runs meanwhile, the trigger counts
from its start, and its exit status is returned; a command that ends before the trigger is
never hit.

``run_during`` holds what these actions share: the command, the wait for the trigger,
SIGTERM/SIGHUP/Ctrl-C passed on to the command (``signals``), and the record: the trigger,
the command, its start and exit status, and whatever the action adds (moments on the
monotonic clock the MPI runtime logs with, ``time.perf_counter``: one clock for every
namespace of a kernel), written as JSON whatever happens. An action that holds for the whole
command (``rate``) has no trigger: it changes the cluster before the command starts
(``setup``) and puts it back once the command has ended (``cleanup``, which a second signal
cannot cut short).
"""

from __future__ import annotations

import math
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gradcode.atomic import write_json
from gradcode.cluster.during import signals
from gradcode.errors import CLIError, UserError

#: seconds between looks at the trigger
POLL = 0.02


@dataclass(frozen=True)
class Trigger:
    """``after`` seconds from the start, or ``at_iteration`` complete lines of ``log``."""

    after: float | None = None
    at_iteration: int | None = None
    log: Path | None = None

    def describe(self) -> dict[str, Any]:
        if self.after is not None:
            return {"after_seconds": self.after}
        return {"at_iteration": self.at_iteration, "log": str(self.log)}

    def due(self, began: float) -> bool:
        if self.after is not None:
            return time.perf_counter() - began >= self.after
        return complete_lines(self.log) >= (self.at_iteration or 0)

    def lines(self) -> int | None:
        return complete_lines(self.log) if self.log is not None else None


def plan_trigger(
    after: float | None,
    at_iteration: int | None,
    log: str | Path | None,
    error: type[UserError],
) -> Trigger:
    """A checked ``Trigger``; ``error`` naming the option otherwise."""
    if (after is None) == (at_iteration is None):
        raise error("give exactly one of --after SECONDS and --at-iteration K (with --log)")
    if after is not None:
        if not finite(after) or after < 0:
            raise error(f"--after: seconds >= 0 (got {after!r})")
        if log is not None:
            raise error("--log goes with --at-iteration, not --after")
        return Trigger(after=float(after))
    if isinstance(at_iteration, bool) or not isinstance(at_iteration, int) or at_iteration < 1:
        raise error(f"--at-iteration: an integer >= 1 (got {at_iteration!r})")
    if log is None:
        raise error("--at-iteration needs --log: the run's log.jsonl")
    return Trigger(at_iteration=at_iteration, log=Path(log))


def given_command(rest: list[str]) -> list[str]:
    """The command given after ``--`` on a subcommand's line (the ``--`` itself optional)."""
    command = rest[1:] if rest[:1] == ["--"] else rest
    if not command:
        raise CLIError("give the command to run after --, e.g. -- hostname")
    return command


def finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def complete_lines(path: Path | None) -> int:
    """Complete lines (ending in a newline) of ``path``; 0 while it does not exist."""
    if path is None:
        return 0
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def moment(trigger: Trigger) -> dict[str, Any]:
    """Now, on the runtime's monotonic clock and the wall clock, with the log's lines."""
    return {"clock": time.perf_counter(), "wall": time.time(), "log_lines": trigger.lines()}


#: what a cleanup holds off until it is done (``run_during``)
HELD = {signal.SIGTERM, signal.SIGHUP, signal.SIGINT}

#: an action on the record (``result``) of ``run_during``
Action = Callable[[dict[str, Any]], None]


def run_during(
    trigger: Trigger | None,
    command: Sequence[str],
    record: str | Path | None,
    result: dict[str, Any],
    act: Action | None = None,
    missed: str = "missed",
    *,
    setup: Action | None = None,
    cleanup: Action | None = None,
) -> int:
    """Run ``command`` (if any), call ``act(result)`` at the trigger, wait for the command;
    its exit status (0 without one). ``result`` (what the action is) gets the trigger, the
    command, its start and status, ``missed`` when the command ended first, ``interrupted``
    on a signal; it is written to ``record`` however this ends (an exception from an action
    included, which is raised after).

    Without a trigger there is no ``act``: ``setup(result)`` runs before the command starts
    (a signal or an exception meanwhile: it never starts) and ``cleanup(result)`` once it has
    ended, whatever happened, with SIGTERM, SIGHUP and SIGINT held until the record is
    written (one that came meanwhile then takes its default course)."""
    if (trigger is None) != (act is None):
        raise ValueError("run_during: a trigger and an action at it go together")
    began = time.perf_counter()
    if trigger is not None:
        result["trigger"] = trigger.describe()
    result.update(command=list(command), started={"clock": began, "wall": time.time()})
    previous = signals.raise_on_stop()
    child: subprocess.Popen | None = None
    status = 0
    try:
        if setup is not None:
            setup(result)
        child = subprocess.Popen(list(command)) if command else None
        if trigger is not None and act is not None:  # both or neither, checked above
            if _wait(trigger, began, child):
                act(result)
            else:
                result[missed] = "the command ended before the trigger"
        if child is not None:
            status = child.wait()
    except (signals.Stop, KeyboardInterrupt) as error:
        result["interrupted"] = str(error) or "KeyboardInterrupt"
        if child is not None and child.poll() is None:
            child.send_signal(signals.signal_number(error))
            status = child.wait()
        status = status or 128 + signals.signal_number(error)
    finally:
        held = HELD if cleanup is not None else set()
        signal.pthread_sigmask(signal.SIG_BLOCK, held)
        try:
            status = 128 - status if status < 0 else status  # killed by signal N: 128 + N
            result["returncode"] = status
            try:
                if cleanup is not None:
                    cleanup(result)
            finally:
                if record is not None:
                    write_json(record, result)
        finally:
            signals.restore(previous)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, held)
    return status


def _wait(trigger: Trigger, began: float, child: subprocess.Popen | None) -> bool:
    """Sleep until the trigger; False if the command ended first."""
    while True:
        if trigger.due(began):
            return True
        if child is not None and child.poll() is not None:
            return False
        time.sleep(POLL)
