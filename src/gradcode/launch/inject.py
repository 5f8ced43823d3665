"""``gradcode train inject RUN.yaml --out DIR [--record FILE] -- CMD ...``: kill workers from
outside, at chosen iterations, while CMD (the MPI job) runs.

For every ``faults.kill`` entry ``{worker: w, iteration: K}`` of the run file, once the run's
``log.jsonl`` holds ``K`` iterations (``0 .. K-1`` done, so the failure falls in iteration
``K`` or, when an iteration is shorter than a poll, soon after; the master records where it
noticed it) the worker's process (rank ``w + 1``, its pid from the run's ``ranks.json``)
gets ``SIGKILL``, as a crash or the kernel's OOM killer would send it. Nothing in the job is
told: it learns of the death from MPI alone.

A resumed job (``ranks.json``'s ``start``) fires only the kills after its start, so the
same command resumes a run that stopped. ``--record`` writes what was done as JSON: each
kill's worker, rank, pid, the iteration it was aimed at, the log's lines then, and the moment
on the monotonic clock the runtime logs with (``time.perf_counter``: the master's
``failures[].monotonic`` minus it is the detection time) and on the wall clock. CMD's exit
status is returned; SIGTERM and Ctrl-C are passed on to it.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from gradcode import dilation
from gradcode.atomic import write_json
from gradcode.errors import UserError
from gradcode.runfile.config import FaultEvent, load_config
from gradcode.runlogs.log import LOG_FILE, RANKS_FILE
from gradcode.train.protocol import clock

#: seconds between looks at the run's files
POLL = 0.002


class InjectError(UserError):
    """A kill that cannot be done (one line naming the worker or file)."""


@dataclass
class Kill:
    worker: int
    rank: int
    pid: int
    iteration: int
    log_lines: int
    monotonic: float
    wall: float


def _lines(path: Path) -> int:
    try:
        with path.open("rb") as handle:
            return sum(1 for line in handle if line.endswith(b"\n"))
    except FileNotFoundError:
        return 0


def _ranks(out: Path, since: float) -> dict[str, Any] | None:
    """The job's ``ranks.json`` once this job wrote it (not a previous session's)."""
    path = out / RANKS_FILE
    try:
        if path.stat().st_mtime < since:
            return None
        return json.loads(path.read_text())
    except (FileNotFoundError, ValueError):
        return None


def _pid(ranks: dict[str, Any], worker: int, out: Path) -> int:
    rank = worker + 1
    records = {record["rank"]: record for record in ranks.get("ranks", [])}
    if rank not in records:
        raise InjectError(f"faults.kill: worker {worker} (rank {rank}) is not in {out}/ranks.json")
    record = records[rank]
    here = socket.gethostname()
    boot = Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    if record.get("boot_id") not in (None, boot):
        raise InjectError(
            f"faults.kill: worker {worker} runs on another machine ({record.get('host')}); "
            f"a kill from {here} cannot reach it"
        )
    return int(record["pid"])


def inject(
    events: tuple[FaultEvent, ...], out: Path, command: list[str], record: Path | None = None
) -> int:
    """Run ``command``, killing each event's worker at its iteration; its exit status."""
    started = time.time()
    process = subprocess.Popen(command)
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}

    def forward(signum: int, _frame: Any) -> None:
        process.send_signal(signum)

    for sig in previous:
        signal.signal(sig, forward)
    done: list[Kill] = []
    try:
        pending = list(events)
        ranks: dict[str, Any] | None = None
        while process.poll() is None:
            if pending and ranks is None:
                ranks = _ranks(out, started)
                if ranks is not None:
                    start = int(ranks.get("start", 0))
                    pending = [event for event in pending if event.iteration > start]
            if pending and ranks is not None:
                lines = _lines(out / LOG_FILE)
                for event in [e for e in pending if lines >= e.iteration]:
                    pid = _pid(ranks, event.worker, out)
                    monotonic, wall = clock(), time.time()
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        continue  # already gone
                    finally:
                        pending.remove(event)
                    done.append(
                        Kill(
                            event.worker,
                            event.worker + 1,
                            pid,
                            event.iteration,
                            lines,
                            monotonic,
                            wall,
                        )
                    )
            time.sleep(POLL)
        status = process.wait()
    except BaseException:
        process.kill()
        process.wait()
        raise
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if record is not None:
            write_json(
                record,
                {
                    "kills": [asdict(kill) for kill in done],
                    "command": command,
                    "status": process.returncode,
                },
            )
    return status


def main(run_file: str, out: str | None, record: str | None, command: list[str]) -> int:
    """``gradcode train inject``: the kills of ``run_file``'s ``faults.kill`` around CMD."""
    config = load_config(run_file)
    events = config.faults.kill if config.faults is not None else ()
    directory = Path(out) if out is not None else Path(config.output or f"runs/{config.name}")
    if not command:
        raise InjectError("inject: no command to run (give it after --)")
    if config.faults is not None and config.faults.lose_node is not None:
        raise InjectError(
            f"{run_file}: faults.lose_node loses a node of the emulated cluster: run it inside "
            "gradcode cluster lose --rank (the workflow's rule train_lost), not inject"
        )
    # the kills' moments on the run's own (virtual) clock, comparable with its log's
    dilation.dilate(config.runtime.dilation)
    return inject(events, directory, command, Path(record) if record else None)
