"""``gradcode simulate PRESET|FILE.yaml --trials T --seed S --out FILE.csv``.

Hooked into the main parser by ``gradcode.sim.cli.add_parser(subparsers)``. Writes the table
(``gradcode.sim.table``) and its JSON sidecar ``FILE.csv.json`` (spec name, description,
source, model and parameters, trials, seed), prints one progress line per scheme configuration
to stderr, and turns spec errors into the one-line ``CLIError`` (exit status 2). ``--list``
names the presets; ``--show`` prints a preset or file as YAML instead of simulating.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import yaml

from gradcode.errors import CLIError
from gradcode.sim.montecarlo import DEFAULT_CHUNK, simulate
from gradcode.sim.presets import PRESETS, available_presets, preset
from gradcode.sim.spec import Spec, SpecError, load_spec, misfit_warning, read_spec
from gradcode.sim.table import write_table

DEFAULT_TRIALS = 100_000


def _cli_error(message: str) -> Exception:
    return CLIError(message)


def resolve(target: str) -> Spec:
    """A preset by name, else a YAML spec file."""
    if target in PRESETS:
        return load_spec(preset(target), origin=f"preset {target}", default_name=target)
    path = Path(target)
    if path.suffix.lower() not in (".yaml", ".yml") and not path.exists():
        raise SpecError(
            f"{target}: neither a preset ({', '.join(available_presets())}) nor a YAML file"
        )
    return read_spec(path)


def metadata(spec: Spec, *, trials: int, seed: int, confidence: float) -> dict[str, Any]:
    """What the sidecar records: enough to rerun and to cite."""
    from gradcode import __version__

    return {
        "name": spec.name,
        "description": spec.description,
        "source": spec.source,
        "model": spec.model_name,
        "parameters": spec.model.params(),
        "length": spec.length,
        "confidence": confidence,
        "trials": trials,
        "seed": seed,
        "gradcode": __version__,
    }


def cmd_simulate(args: argparse.Namespace, rest: list[str]) -> int:
    """Run a preset or spec file and write its table."""
    if rest:
        raise _cli_error(f"unrecognized arguments: {' '.join(rest)}")
    if args.list:
        for name in available_presets():
            summary = preset(name).get("source", "")
            print(f"{name:24s} {summary}")
        return 0
    if args.target is None:
        raise _cli_error("simulate needs a PRESET or FILE.yaml (see --list)")
    try:
        spec = resolve(args.target)
    except SpecError as error:
        raise _cli_error(str(error)) from None
    if args.show:
        print(yaml.safe_dump(spec.raw, sort_keys=False), end="")
        return 0
    warning = misfit_warning(spec.raw, args.target)
    if warning:
        print(warning, file=sys.stderr)
    if args.out is None:
        raise _cli_error("simulate needs --out FILE.csv")
    if args.trials < 2:
        raise _cli_error(f"--trials must be >= 2 (got {args.trials})")
    if args.chunk < 1:
        raise _cli_error(f"--chunk must be >= 1 (got {args.chunk})")
    if args.confidence is not None and not 0 < args.confidence < 1:
        raise _cli_error(f"--confidence must be in (0, 1) (got {args.confidence})")
    confidence = spec.confidence if args.confidence is None else args.confidence

    def progress(line: str) -> None:
        if not args.quiet:
            print(line, file=sys.stderr, flush=True)

    rows = simulate(
        spec,
        trials=args.trials,
        seed=args.seed,
        chunk=args.chunk,
        confidence=confidence,
        progress=progress,
    )
    meta = metadata(spec, trials=args.trials, seed=args.seed, confidence=confidence)
    try:
        csv_path, sidecar = write_table(args.out, rows, meta)
    except OSError as error:
        raise _cli_error(f"cannot write {args.out} ({error.strerror})") from None
    progress(f"wrote {csv_path} and {sidecar}")
    return 0


SIMULATE_DESCRIPTION = """\
Monte Carlo completion times (and communication load) of gradient coding schemes under a
timing model: a preset (--list names them) or your own spec file. Writes a CSV table and,
beside it, FILE.csv.json saying what was simulated.

example:
  gradcode simulate ye-abbe-table3 --trials 10000 --seed 0 --out table3.csv

documentation: docs/guide/simulation.md
"""


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Add the top-level ``simulate`` command to ``gradcode``'s subparsers."""
    parser = subparsers.add_parser(
        "simulate",
        help="Monte Carlo completion times and communication load of schemes under a model",
        description=SIMULATE_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    parser.add_argument("target", nargs="?", metavar="PRESET|FILE.yaml")
    parser.add_argument("--trials", type=int, default=DEFAULT_TRIALS, help="trials per scheme")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random draws")
    parser.add_argument("--out", help="CSV file to write (a FILE.csv.json sidecar goes beside)")
    parser.add_argument(
        "--chunk",
        type=int,
        default=DEFAULT_CHUNK,
        help="trials simulated at once (memory only; results do not depend on it)",
    )
    parser.add_argument(
        "--confidence", type=float, help="confidence level of ci_low/ci_high (default 0.95)"
    )
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    parser.add_argument("--list", action="store_true", help="list the presets and exit")
    parser.add_argument("--show", action="store_true", help="print the spec as YAML and exit")
    parser.set_defaults(func=cmd_simulate)
