"""``gradcode codes recommend --spec SPEC.yaml --n N [limits] [--out FILE.csv] [--json]``.

Ranks every registered code for ``N`` workers under the spec's timing model by expected time
per iteration (``gradcode.recommend.rank``) and prints the table and the run-file lines of
the best. The spec is a simulation spec as ``gradcode simulate`` reads it (same validation,
same one-line errors); its ``schemes`` are not used, its ``confidence`` and ``length`` are.
Per-worker parameter lists must describe ``N`` workers.

Two stages: every candidate is screened with ``--screen-trials`` trials, the leaders (the
``--finalists`` fastest per section, and every code whose screening interval reaches the
leader's) get ``--trials``; the output says which row had how many.

Exact times: under the master-worker model with identical workers, every code that declares
its decodability rule (``completion_rule``: any r of the n workers, or one of each group) and
sends one message per worker also gets its exact expected time per iteration (column
``exact``; the model's overhead included) beside the Monte Carlo mean and interval. Rows are
ordered by the exact time where known, else by the Monte Carlo mean; ``-`` marks a code with
no closed form (``gradcode.recommend.exact``).

Time to a target loss: with ``--run RUN.yaml --target-loss L`` (both or neither) the codes are
also ranked by expected time to training loss ``L`` on the run file's problem (its data, model
and optimizer; its scheme and stragglers are not used): the ``--finalists`` fastest exact
codes and the reference as ``I x`` time per iteration (``I``: exact gradient descent's
iterations), and per approximate scheme ``--finalists`` codes at evenly spaced places by time
per iteration, each simulated ``--replicates`` times (default 5) for at most
``--max-iterations`` (default 300) iterations (``gradcode.recommend.target``).

Hooked below ``gradcode codes`` by ``add_parser(codes_subparsers)`` (``gradcode.cli``).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from gradcode.errors import CLIError, UserError

if TYPE_CHECKING:
    from gradcode.recommend.target import TargetLoss


def _option_checks(args: argparse.Namespace, rest: list[str]) -> None:
    if rest:
        raise CLIError(f"unrecognized arguments: {' '.join(rest)}")
    for name, value, minimum in (
        ("--n", args.n, 1),
        ("--trials", args.trials, 2),
        ("--screen-trials", args.screen_trials, 2),
        ("--finalists", args.finalists, 1),
        ("--seed", args.seed, 0),
        ("--top", args.top, 1),
        ("--stragglers", args.stragglers, 0),
    ):
        if value is not None and value < minimum:
            raise CLIError(f"{name} must be >= {minimum} (got {value})")
    if args.confidence is not None and not 0 < args.confidence < 1:
        raise CLIError(f"--confidence must be in (0, 1) (got {args.confidence})")
    if args.target_loss is not None and args.run is None:
        raise CLIError("--target-loss needs --run RUN.yaml (the training problem)")
    if args.run is not None and args.target_loss is None:
        raise CLIError("--run needs --target-loss L (the training loss to reach)")
    for name, value in (
        ("--max-iterations", args.max_iterations),
        ("--replicates", args.replicates),
    ):
        if value is not None and args.run is None:
            raise CLIError(f"{name} needs --run RUN.yaml and --target-loss L")
        if value is not None and value < 1:
            raise CLIError(f"{name} must be >= 1 (got {value})")
    if args.target_loss is not None and not math.isfinite(args.target_loss):
        raise CLIError(f"--target-loss must be a finite number (got {args.target_loss})")


def _target(args: argparse.Namespace) -> TargetLoss | None:
    """The ``TargetLoss`` of ``--run`` and ``--target-loss`` (``None``: not asked for)."""
    from gradcode.recommend.target import DEFAULT_MAX_ITERATIONS, DEFAULT_REPLICATES, TargetLoss

    if args.run is None:
        return None
    if not Path(args.run).is_file():
        raise CLIError(f"--run: no such file {args.run}")
    try:
        return TargetLoss.from_run_file(
            args.run,
            args.target_loss,
            max_iterations=args.max_iterations or DEFAULT_MAX_ITERATIONS,
            replicates=args.replicates or DEFAULT_REPLICATES,
        )
    except UserError as error:
        raise CLIError(f"--run {Path(args.run).name}: {error}") from None


def cmd_recommend(args: argparse.Namespace, rest: list[str]) -> int:
    """Read the spec, rank the codes, print (and write) the result."""
    from gradcode.recommend.errors import RecommendError
    from gradcode.recommend.limits import Limits, fraction
    from gradcode.recommend.rank import recommend
    from gradcode.recommend.report import as_json, format_text, write_csv
    from gradcode.recommend.workers import check_workers
    from gradcode.sim.spec import misfit_warning, read_spec

    _option_checks(args, rest)
    started = time.perf_counter()
    spec = read_spec(args.spec)  # SpecError: one line naming file and key
    warning = misfit_warning(spec.raw, args.spec)
    if warning:  # also with --quiet: the ranking rests on it
        print(warning, file=sys.stderr)
    try:
        check_workers(spec.model, args.n, label="--n")
    except RecommendError as error:
        raise CLIError(f"{Path(args.spec).name}: {error}") from None
    schemes = None
    if args.schemes is not None:
        schemes = tuple(name.strip() for name in args.schemes.split(",") if name.strip())
        if not schemes:
            raise CLIError("--schemes must name at least one scheme")
    limits = Limits(
        max_load=None if args.max_load is None else fraction("--max-load", args.max_load),
        max_message=(
            None if args.max_message is None else fraction("--max-message", args.max_message)
        ),
        stragglers=args.stragglers,
        schemes=schemes,
        exact_only=args.exact_only,
        model_kind=args.model_kind,
    )

    target = _target(args)

    def progress(line: str) -> None:
        if not args.quiet:
            print(line, file=sys.stderr, flush=True)

    if target is not None:
        try:
            target.problem.split(args.n)  # the data load (or fail) before the long part
        except UserError as error:
            raise CLIError(f"--run {Path(args.run).name}: {error}") from None
    rec = recommend(
        spec.model,
        args.n,
        limits=limits,
        trials=args.trials,
        screen_trials=args.screen_trials,
        finalists=args.finalists,
        seed=args.seed,
        confidence=spec.confidence if args.confidence is None else args.confidence,
        length=spec.length,
        progress=progress,
        target=target,
    )
    if args.out is not None:
        try:
            write_csv(args.out, rec)
        except OSError as error:
            raise CLIError(f"cannot write {args.out} ({error.strerror})") from None
        progress(f"wrote {args.out}")
    if args.json:
        print(json.dumps(as_json(rec), indent=2))
    else:
        print(format_text(rec, top=args.top), end="")
    progress(f"took {time.perf_counter() - started:.1f} s")
    return 0


def add_parser(codes_subparsers: argparse._SubParsersAction) -> None:
    """Add ``recommend`` below ``gradcode codes``."""
    from gradcode.recommend.rank import DEFAULT_FINALISTS, DEFAULT_SCREEN_TRIALS, DEFAULT_TRIALS

    parser = codes_subparsers.add_parser(
        "recommend",
        help="rank the codes for a cluster's timing model by expected time per iteration",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    parser.add_argument("--spec", required=True, metavar="SPEC.yaml", help="simulation spec")
    parser.add_argument("--n", type=int, required=True, help="number of workers")
    limits = parser.add_argument_group("limits")
    limits.add_argument(
        "--max-load", type=float, metavar="FRACTION", help="largest share of the data per worker"
    )
    limits.add_argument(
        "--max-message",
        type=float,
        metavar="FRACTION",
        help="largest message as a share of the gradient (1/m)",
    )
    limits.add_argument(
        "--stragglers", type=int, metavar="S", help="only codes with s >= S (code.s)"
    )
    limits.add_argument("--schemes", metavar="A,B", help="only these schemes")
    limits.add_argument("--exact-only", action="store_true", help="no approximate codes")
    limits.add_argument(
        "--model-kind",
        metavar="KIND",
        help="the model trained (logistic, linear): drops codes of the data not exact for it",
    )
    parser.add_argument(
        "--trials", type=int, default=DEFAULT_TRIALS, help="trials of the final stage"
    )
    parser.add_argument(
        "--screen-trials",
        type=int,
        default=DEFAULT_SCREEN_TRIALS,
        help="trials of the screening stage (every candidate)",
    )
    parser.add_argument(
        "--finalists",
        type=int,
        default=DEFAULT_FINALISTS,
        help="fastest codes per section that always get the final trials",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the random draws")
    parser.add_argument(
        "--confidence", type=float, help="level of the intervals (default: the spec's, 0.95)"
    )
    target = parser.add_argument_group("time to a target loss")
    target.add_argument(
        "--run",
        metavar="RUN.yaml",
        help="run file of the training problem (data, model, optimizer)",
    )
    target.add_argument(
        "--target-loss", type=float, metavar="L", help="training loss to reach (with --run)"
    )
    target.add_argument(
        "--max-iterations", type=int, metavar="M", help="iterations at most (default 300)"
    )
    target.add_argument(
        "--replicates",
        type=int,
        metavar="R",
        help="simulated runs per approximate code (default 5)",
    )
    parser.add_argument("--top", type=int, default=15, help="ranked rows printed")
    parser.add_argument("--out", metavar="FILE.csv", help="write every row as CSV")
    parser.add_argument("--json", action="store_true", help="print JSON instead of the table")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    parser.set_defaults(func=cmd_recommend)
