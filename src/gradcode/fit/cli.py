"""``gradcode timing fit RUN_DIR... --out fitted.yaml``: paper 000's model fitted to runs.

Reads every run directory's ``summary.json`` and ``log.jsonl`` (local, SLURM or emulated-
cluster runs with the same number of workers, uncoded runs included; a tree run's
``nodes.jsonl`` too), fits
``T1 = t1 + Exp(lambda1)`` per data subset and ``T2 = t2 + Exp(lambda2)`` per full-length
vector by maximum likelihood with the stragglers' censoring, per worker where the workers
differ, and the runtime's own cost per iteration (on real links: the links' rates and
latency, ``gradcode.fit.latency``); prints the estimates with their intervals and goodness of
fit and writes a simulation spec (``gradcode.fit.runs``) that ``gradcode
simulate`` and ``gradcode codes recommend --spec`` read.

If a Kolmogorov-Smirnov test rejects the model (bootstrap p-value below ``--level``), nothing
is written and the command fails naming the component, unless ``--accept-misfit`` (the spec
then says so in ``fit.misfit``). On real links the same holds for the links' latency: when one
message size does not identify it, or the transfers' envelope gives it no interval, nothing is
written and the command fails in one line, unless ``--accept-misfit`` (the point estimate is
written, ``fit.latency_misfit`` says why, and ``simulate``, ``predict`` and ``recommend``
warn) or ``--latency DURATION`` (``1ms``, ``250us``: the links' one-way latency as you set or
know it, written as given).

``overhead`` is printed as the spec writes it, what its model adds to every iteration: on
real links (``shared-links``) what followed the decodable set, the model's download being in
``starts``; the time beyond the workers' own, download included (``master-worker``'s
overhead), is printed below it, marked as not written.
"""

from __future__ import annotations

import argparse
import sys

import yaml

from gradcode.atomic import write_atomic
from gradcode.duration import Duration
from gradcode.errors import CLIError
from gradcode.fit.runs import (
    DEFAULT_LEVEL,
    MODEL_CHOICES,
    PER_WORKER_CHOICES,
    FittedModel,
    MisfitError,
    describe,
    fit_runs,
)


def cmd_fit(args: argparse.Namespace, rest: list[str]) -> int:
    if rest:
        raise CLIError(f"unrecognized arguments: {' '.join(rest)}")
    if args.skip < 0:
        raise CLIError(f"--skip must be >= 0 (got {args.skip})")
    if args.bootstrap < 20:
        raise CLIError(f"--bootstrap must be >= 20 (got {args.bootstrap})")
    latency = None if args.latency is None else Duration.parse(args.latency, "--latency").seconds
    fitted = fit_runs(
        args.runs,
        skip=args.skip,
        confidence=args.confidence,
        level=args.level,
        per_worker=args.per_worker,
        bootstrap=args.bootstrap,
        seed=args.seed,
        model=args.model,
        latency=latency,
    )
    lines = [
        f"runs          {len(fitted.runs)} ({fitted.workers} workers, first {fitted.skip} "
        "iteration(s) of each left out)",
        f"observations  {fitted.pooled.observations} ({fitted.pooled.censored} censored)",
        f"T1 per subset {describe(fitted.pooled.compute)}",
    ]
    if fitted.pooled.comm is not None:
        lines.append(f"T2 per vector {describe(fitted.pooled.comm)}")
    else:
        lines.append("T2 per vector not observed (no shared clock and nothing injected)")
    lines += _overhead_lines(fitted)
    lines.append(f"model         {fitted.model}")
    if fitted.model == "shared-links":
        links, master = fitted.link_rates()
        level = f"{fitted.confidence:.0%}"
        for worker, link in enumerate(links.workers):
            lines.append(f"link {worker:<8} {link.describe()} ({link.measured} transfers)")
        lines.append(
            f"master port   {master.describe()} ({master.measured} iterations; payload; "
            f"intervals at {level}; T2 not used)"
        )
        lines.append(f"latency       {links.latency.describe()}")
        if fitted.head_start > 0:
            lines.append(
                f"              transfers lengthened by the emulated links' token-bucket head "
                f"start (up to {fitted.head_start * 1e3:.3g} ms a worker)"
            )
    homogeneity = fitted.homogeneity
    if homogeneity.get("tested"):
        verdict = "fitted per worker" if fitted.per_worker is not None else "pooled"
        pvalue = homogeneity["pvalue"]  # None where the test had no finite value
        shown = "n/a" if pvalue is None else f"{pvalue:.3g}"
        lines.append(f"workers       differ: p = {shown} ({verdict})")
    else:
        lines.append(f"workers       pooled (not tested: {homogeneity['reason']})")
    print("\n".join(lines))
    spec = fitted.spec(name=args.name, accept_misfit=args.accept_misfit)
    if "latency_misfit" in spec["fit"]:
        written = spec["parameters"]["latency"]
        print(
            f"warning: {spec['fit']['latency_misfit']}; latency {written:.4g} s written anyway "
            "(--accept-misfit)",
            file=sys.stderr,
        )
    misfit = fitted.rejected()
    if misfit:
        message = (
            f"the shifted exponential does not fit: KS rejects {', '.join(misfit)} at level "
            f"{fitted.level} (see the QQ plots; --accept-misfit writes the spec anyway)"
        )
        if not args.accept_misfit:
            raise MisfitError(message)
        print(f"warning: {message}", file=sys.stderr)
        spec["fit"]["misfit"] = misfit
    text = yaml.safe_dump(spec, sort_keys=False, default_flow_style=None, width=100)
    try:
        write_atomic(args.out, text)
    except OSError as error:
        raise CLIError(f"cannot write {args.out} ({error.strerror})") from None
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


def _overhead_lines(fitted: FittedModel) -> list[str]:
    """The overhead the spec writes, labelled, and on real links the other one too (they are
    different quantities: the module docstring)."""
    written = fitted.written_overhead
    if fitted.model == "shared-links":
        low, high = fitted.finish_interval
        after = f"{fitted.finish:.4g} s [{low:.4g}, {high:.4g}] per iteration"
        low, high = fitted.overhead_interval
        beyond = f"{fitted.overhead:.4g} s [{low:.4g}, {high:.4g}]"
        lines = [
            f"overhead      {after} after the decodable set (decoding, the update): written",
            f"              {beyond} with the model's download and polling: not written "
            "(starts time the download)",
        ]
        mean = fitted.finish
    else:
        low, high = fitted.overhead_interval
        lines = [
            f"overhead      {fitted.overhead:.4g} s [{low:.4g}, {high:.4g}] per iteration beyond "
            "the workers' own times (the model's download, polling, decoding, the update)"
        ]
        mean = fitted.overhead
    if written != mean:
        lines.append(f"              written as {written:.4g} s: a negative mean is no cost")
    return lines


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Add ``gradcode timing fit`` to ``gradcode``'s subparsers."""
    timing = subparsers.add_parser(
        "timing", help="timing models from runs: fit", allow_abbrev=False
    )
    actions = timing.add_subparsers(dest="action", required=True)
    parser = actions.add_parser(
        "fit",
        help="fit paper 000's model to runs' logs, write a simulation spec",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    parser.add_argument("runs", nargs="+", metavar="RUN_DIR", help="run directories")
    parser.add_argument("--out", required=True, help="the spec to write (YAML)")
    parser.add_argument("--name", default="fitted", help="the spec's name")
    parser.add_argument(
        "--skip", type=int, default=1, help="leading iterations of each run left out (start-up)"
    )
    parser.add_argument(
        "--per-worker",
        choices=PER_WORKER_CHOICES,
        default="auto",
        help="one fit per worker: when a likelihood-ratio test says they differ (auto)",
    )
    parser.add_argument(
        "--model",
        choices=MODEL_CHOICES,
        default="auto",
        help="the spec's timing model (auto: shared-links for runs over real links)",
    )
    parser.add_argument("--confidence", type=float, default=0.95, help="level of the intervals")
    parser.add_argument(
        "--level", type=float, default=DEFAULT_LEVEL, help="significance of the KS and LR tests"
    )
    parser.add_argument(
        "--bootstrap", type=int, default=200, help="replicates of the KS tests' p-values"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the bootstrap")
    parser.add_argument(
        "--accept-misfit",
        action="store_true",
        help="write the spec even if KS rejects or the links' latency has no interval",
    )
    parser.add_argument(
        "--latency",
        metavar="DURATION",
        help="the links' one-way latency as set (1ms, 250us), not fitted (shared-links)",
    )
    parser.set_defaults(func=cmd_fit)
