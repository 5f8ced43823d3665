"""``gradcode analyze NAME --trials T --seed S --out FILE.csv`` (``--list`` names them)."""

from __future__ import annotations

import argparse
import sys

from gradcode.analysis.registry import ANALYSES, available_analyses, run_analysis
from gradcode.errors import CLIError

DEFAULT_TRIALS = 1000


def cmd_analyze(args: argparse.Namespace, rest: list[str]) -> int:

    if rest:
        raise CLIError(f"unrecognized arguments: {' '.join(rest)}")
    if args.list:
        for name in available_analyses():
            print(f"{name:28s} {ANALYSES[name][1]}")
        return 0
    if args.name is None:
        raise CLIError("analyze needs a NAME (see --list)")
    if args.name not in ANALYSES:
        raise CLIError(f"unknown analysis {args.name!r} (known: {', '.join(available_analyses())})")
    if args.out is None:
        raise CLIError("analyze needs --out FILE.csv")
    if args.trials < 1:
        raise CLIError(f"--trials must be >= 1 (got {args.trials})")

    def progress(line: str) -> None:
        if not args.quiet:
            print(f"{args.name}: {line}", file=sys.stderr, flush=True)

    result = run_analysis(args.name, trials=args.trials, seed=args.seed, progress=progress)
    try:
        csv_path, sidecar = result.write(args.out)
    except OSError as error:
        raise CLIError(f"cannot write {args.out} ({error.strerror})") from None
    progress(f"wrote {csv_path} and {sidecar}")
    return 0


ANALYZE_DESCRIPTION = """\
The exact and Monte Carlo analyses behind the papers' figures (loads, communication costs,
decoding errors, scaling); --list names them. Each writes a CSV table and, beside
it, FILE.csv.json saying what was computed.

example:
  gradcode analyze coded-reduce-scaling --out scaling.csv

documentation: docs/guide/workflow.md
"""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Add the top-level ``analyze`` command to ``gradcode``'s subparsers."""
    parser = subparsers.add_parser(
        "analyze",
        help="exact and Monte Carlo analyses behind the papers' figures (loads, costs, errors)",
        description=ANALYZE_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    parser.add_argument("name", nargs="?", metavar="NAME")
    parser.add_argument(
        "--trials", type=int, default=DEFAULT_TRIALS, help="Monte Carlo work per point"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the random draws")
    parser.add_argument("--out", help="CSV file to write (a FILE.csv.json sidecar goes beside)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    parser.add_argument("--list", action="store_true", help="list the analyses and exit")
    parser.set_defaults(func=cmd_analyze)
