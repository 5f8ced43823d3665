"""Check that a finished training job saw the number of MPI ranks it asked for.

``python -m gradcode.runlogs.world_size SUMMARY.json N`` exits 1 with one line when
``summary.json`` records another world size: under SLURM a wrong PMI type does not fail, it
starts N separate one-rank worlds.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2 or not args[1].isdigit():
        print("usage: python -m gradcode.runlogs.world_size SUMMARY.json RANKS", file=sys.stderr)
        return 2
    path, expected = Path(args[0]), int(args[1])
    try:
        seen = json.loads(path.read_text())["world_size"]
    except (OSError, ValueError, KeyError) as error:
        print(f"{path}: cannot read world_size ({error})", file=sys.stderr)
        return 1
    if seen != expected:
        print(f"{path}: the job saw {seen} MPI ranks, it asked for {expected}", file=sys.stderr)
        return 1
    print(f"{path}: world_size {seen} as requested")
    return 0


if __name__ == "__main__":
    sys.exit(main())
