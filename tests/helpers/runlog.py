"""A stand-in for a training run's log: a process writing ``log.jsonl`` line by line, for the
commands that act at an iteration (``gradcode cluster cut``, ``gradcode cluster lose``)."""

from __future__ import annotations

import sys
from pathlib import Path

SCRIPT = (
    "import sys, time\n"
    "with open(sys.argv[1], 'w') as f:\n"
    "    for i in range(int(sys.argv[2])):\n"
    "        f.write('{}\\n'); f.flush(); time.sleep(float(sys.argv[3]))\n"
)


def log_writer(log: Path, lines: int = 6, pause: float = 0.05) -> list[str]:
    """The command: ``lines`` lines to ``log``, ``pause`` seconds apart."""
    return [sys.executable, "-c", SCRIPT, str(log), str(lines), str(pause)]
