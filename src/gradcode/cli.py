"""Command line: ``gradcode codes list|show|verify|recommend``.

Scheme parameters are given as ``--name value`` after the scheme name; values are read as YAML
scalars or lists, so ``--n 8 --points chebyshev --placement '[[0, 1], [1, 2]]'`` all work.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence
from typing import Any

import numpy as np
import yaml

from gradcode.errors import CLIError, UserError
from gradcode.jsonable import to_jsonable
from gradcode.plugins import one_line_plugin_warnings


def parse_scheme_params(tokens: Sequence[str]) -> dict[str, Any]:
    """``['--n', '8', '--s', '2']`` -> ``{'n': 8, 's': 2}``."""
    params: dict[str, Any] = {}
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if not token.startswith("--") or len(token) == 2:
            raise CLIError(f"expected a scheme parameter like --n 8, got {token!r}")
        key, _, inline = token[2:].partition("=")
        key = key.replace("-", "_")
        if inline:
            raw = inline
            index += 1
        else:
            if index + 1 >= len(tokens):
                raise CLIError(f"parameter --{key} needs a value")
            raw = tokens[index + 1]
            index += 2
        if key in params:
            raise CLIError(f"parameter --{key} given twice")
        try:
            params[key] = yaml.safe_load(raw)
        except yaml.YAMLError:
            raise CLIError(f"parameter --{key}: cannot read value {raw!r}") from None
    return params


def _build(name: str, params: dict[str, Any]):
    from gradcode.codes import build

    try:
        return build(name, **params)
    except UserError:
        raise
    except ValueError as error:  # a constructor's own check of a parameter's value
        raise CLIError(str(error)) from None


def _format_report(conformance, passed: bool) -> str:
    from gradcode.codes.conformance import describe

    report = conformance.verification
    lines = [
        f"scheme               {conformance.code}",
        f"parameters           {', '.join(f'{k}={v}' for k, v in conformance.params.items())}",
    ]
    if report is not None:
        lines += [
            f"exact                {report.exact}",
            f"patterns checked     {report.patterns_checked} of {report.patterns_total}"
            f" ({'exhaustive' if report.exhaustive else 'random'})",
            f"max relative error   {report.max_relative_error:.3e}",
            f"worst condition no.  {report.worst_condition_number:.3e}",
            f"load per worker      {_compact(report.loads)}",
            f"message length       {report.message_fraction:.4g} of the gradient",
            f"messages per worker  {_compact(report.messages_per_worker)}",
            f"support matches      {report.support_ok}",
        ]
        if report.attack is not None:
            params = ", ".join(f"{k}={v}" for k, v in report.attack["params"].items())
            lines.append(f"attack               {report.attack['name']} ({params})")
        if report.patterns_with_liars:
            lines.append(
                f"liars named          {report.liars_named} of {report.patterns_with_liars}"
                " patterns with liars"
            )
        lines += [f"FAILED  {failure}" for failure in report.failures[:10]]
    lines.append("conformance")
    for check in conformance.checks:
        lines.append(f"  {describe(check)}")
        lines += [f"        {detail}" for detail in (check.details if not check.passed else ())]
    lines.append("verdict              " + ("PASS" if passed else "FAIL"))
    return "\n".join(lines)


def _compact(values: Sequence[int]) -> str:
    if values and len(set(values)) == 1:
        return f"{values[0]} (all {len(values)} workers)"
    return " ".join(str(v) for v in values)


def cmd_codes_list(_: argparse.Namespace, __: list[str]) -> int:
    from gradcode.codes import available, scheme_class
    from gradcode.codes.registry import source

    for name in available():
        doc = sys.modules[scheme_class(name).__module__].__doc__ or ""
        summary = doc.strip().splitlines()[0] if doc.strip() else ""
        origin = source(name)
        print(f"{name:20s} {summary}" + ("" if origin == "built-in" else f"  [{origin}]"))
    return 0


def cmd_codes_verify(args: argparse.Namespace, rest: list[str]) -> int:
    from gradcode.codes.conformance import check_conformance

    code = _build(args.scheme, parse_scheme_params(rest))
    conformance = check_conformance(
        code,
        exhaustive=True if args.exhaustive else None,
        limit=args.max_patterns,
        length=args.gradient_length,
        seed=args.check_seed,
        attack=_attack(args),
    )
    report = conformance.verification  # None when the harness itself crashed on the code
    passed = conformance.passed() and report is not None and report.passed()
    if args.json:
        basics = {"scheme": code.name, "params": code.params()}
        payload = (report.as_dict() if report is not None else basics) | {
            "conformance": conformance.as_dict()["checks"],
            "passed": passed,
        }
        print(json.dumps(to_jsonable(payload, finite_only=True), indent=2))
    else:
        print(_format_report(conformance, passed))
    return 0 if passed else 1


def _attack(args: argparse.Namespace):
    """The attack of ``--attack`` and ``--attack-params`` (``None`` without ``--attack``)."""
    if args.attack is None:
        if args.attack_params is not None:
            raise CLIError("--attack-params needs --attack NAME")
        return None
    from gradcode.attacks import build as build_attack

    params: Any = {}
    if args.attack_params is not None:
        try:
            params = yaml.safe_load(args.attack_params)
        except yaml.YAMLError:
            raise CLIError(f"--attack-params: cannot read {args.attack_params!r}") from None
        if not isinstance(params, dict):
            raise CLIError(f"--attack-params: a mapping like '{{z: 1.5}}' (got {params!r})")
    return build_attack(args.attack, params)


def cmd_codes_show(args: argparse.Namespace, rest: list[str]) -> int:
    from gradcode.codes import LinearCode

    code = _build(args.scheme, parse_scheme_params(rest))
    print(repr(code))
    print(f"n={code.n} workers, k={code.k} partitions, s={code.s}, a={code.a}, m={code.m}")
    print("\nassignment (rows: workers, columns: partitions)")
    mask = code.assignment_matrix()
    for worker, row in enumerate(mask):
        cells = "".join("#" if v else "." for v in row)
        print(
            f"  W{worker:<3d} {cells}  load {int(row.sum())}  partitions {code.partitions(worker)}"
        )
    caps = code.capabilities
    print(
        f"capabilities: topology {caps.topology}, messages {caps.message}"
        + (f", codes the data (exact for {', '.join(caps.codes_data)})" if caps.codes_data else "")
        + (", corrects adversaries" if caps.corrects_adversaries else "")
        + (", estimates its error" if caps.estimates_error else "")
        + ("" if code.exact else ", approximate")
    )
    if isinstance(code, LinearCode):
        tensor = code.encoding_matrix()
        keys = code.all_message_keys()
        print("\nencoding (rows: messages; columns: partition[.chunk] coefficients)")
        with np.printoptions(precision=4, suppress=True, linewidth=160):
            for key, row in zip(keys, tensor, strict=True):
                flat = row.T.reshape(-1) if code.m > 1 else row[:, 0]
                print(f"  {key!s:>8}  {np.array2string(flat, max_line_width=150)}")
    return 0


def cmd_codes_stability(args: argparse.Namespace, _: list[str]) -> int:
    from gradcode.codes.stability import FAMILIES, stability_rows, write_stability_csv

    if not 2 <= args.n_min <= args.n_max:
        raise CLIError(f"need 2 <= --n-min <= --n-max (got {args.n_min}, {args.n_max})")
    families = FAMILIES
    if args.families:
        wanted = set(args.families.split(","))
        known = {family.scheme for family in FAMILIES}
        if not wanted <= known:
            raise CLIError(f"unknown --families {sorted(wanted - known)} (known: {sorted(known)})")
        families = tuple(f for f in FAMILIES if f.scheme in wanted)
    rows = stability_rows(
        range(args.n_min, args.n_max + 1),
        families,
        patterns=args.patterns,
        seed=args.check_seed,
        progress=lambda line: print(line, file=sys.stderr, flush=True),
    )
    write_stability_csv(args.out, rows)
    return 0


#: the sub-CLIs below ``codes``: modules with ``add_parser(subparsers)``. Registration runs one
#: way, from here down: they take their error type from ``gradcode.errors`` and never import
#: this module (a test checks it).
SUBCOMMANDS = (
    "gradcode.data.cli",
    "gradcode.sim.cli",
    "gradcode.launch.cli",
    "gradcode.analysis.cli",
    "gradcode.cluster.cli",
    "gradcode.fit.cli",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="gradcode", description=__doc__, allow_abbrev=False)
    sub = parser.add_subparsers(dest="command", required=True)
    codes = sub.add_parser(
        "codes", help="gradient codes: list, show, verify, recommend", allow_abbrev=False
    )
    codes_sub = codes.add_subparsers(dest="action", required=True)
    listing = codes_sub.add_parser("list", help="the available schemes", allow_abbrev=False)
    listing.set_defaults(func=cmd_codes_list)
    show = codes_sub.add_parser(
        "show", help="print the assignment and encoding matrix", allow_abbrev=False
    )
    show.add_argument("scheme")
    show.set_defaults(func=cmd_codes_show)
    check = codes_sub.add_parser(
        "verify", help="decode straggler patterns against an independent sum", allow_abbrev=False
    )
    check.add_argument("scheme")
    check.add_argument("--exhaustive", action="store_true", help="every pattern, however many")
    check.add_argument("--json", action="store_true", help="machine-readable output")
    # harness options are long and distinct so they never shadow a scheme parameter (crc's seed)
    check.add_argument(
        "--max-patterns", type=int, default=500, help="random patterns when not exhaustive"
    )
    check.add_argument("--gradient-length", type=int, default=37, help="gradient length used")
    check.add_argument("--check-seed", type=int, default=0, help="seed of the random partials")
    check.add_argument(
        "--attack",
        help="what the liars send (gradcode.attacks: noise, reversed, constant, alie, ipm, "
        "plug-ins); default: Gaussian noise",
    )
    check.add_argument("--attack-params", help="the attack's parameters, e.g. '{z: 1.5}'")
    check.set_defaults(func=cmd_codes_verify)
    study = codes_sub.add_parser(
        "stability", help="max decode error versus n, as CSV", allow_abbrev=False
    )
    study.add_argument("--n-min", type=int, default=5)
    study.add_argument("--n-max", type=int, default=40)
    study.add_argument("--patterns", type=int, default=30, help="random patterns per (scheme, n)")
    study.add_argument("--families", help="comma-separated schemes (default: all)")
    study.add_argument("--check-seed", type=int, default=0)
    study.add_argument("--out", required=True, help="CSV file to write")
    study.set_defaults(func=cmd_codes_stability)
    # ``codes recommend``: its options and command live in gradcode.recommend.cli
    importlib.import_module("gradcode.recommend.cli").add_parser(codes_sub)

    for module in SUBCOMMANDS:  # each sub-CLI adds its parser; none imports this module
        importlib.import_module(module).add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    one_line_plugin_warnings()
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    # what follows the first "--" is a command to run (``-- CMD ...``), never parsed here: an
    # optional positional (``cluster lose [NODE] --rank R``) would take the command's first word
    cut = argv.index("--") if "--" in argv else len(argv)
    args, rest = parser.parse_known_args(argv[:cut])
    rest += argv[cut:]
    if rest and args.func in (cmd_codes_list, cmd_codes_stability):
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    try:
        return args.func(args, rest)
    except UserError as error:  # bad input: one line; a bug keeps its traceback
        print(f"gradcode: error: {' '.join(str(error).split())}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
