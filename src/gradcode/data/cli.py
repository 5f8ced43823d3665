"""``gradcode data list|prepare|info|verify|download``.

Hooked into the main parser by ``gradcode.data.cli.add_parser(subparsers)``; every handler has
the signature ``handler(args, rest) -> exit status`` and turns ``DataError`` / ``OptionError``
into the one-line ``CLIError``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any

from gradcode.data.errors import DataError, OptionError
from gradcode.data.location import DATA_DIR_ENV, raw_dirs
from gradcode.errors import CLIError

Handler = Callable[[argparse.Namespace, list[str]], int]


def _cli_error(message: str) -> Exception:
    return CLIError(message)


def _guarded(handler: Handler) -> Handler:
    """Reject stray tokens and turn the library's user errors into ``CLIError``."""

    def run(args: argparse.Namespace, rest: list[str]) -> int:
        if rest:
            raise _cli_error(f"unrecognized arguments: {' '.join(rest)}")
        try:
            return handler(args, rest)
        except (DataError, OptionError) as error:
            raise _cli_error(str(error)) from None

    run.__name__ = handler.__name__
    run.__doc__ = handler.__doc__
    return run


@_guarded
def cmd_list(args: argparse.Namespace, rest: list[str]) -> int:
    """Print the data sets, their variants (default first) and options."""
    from gradcode.data.registry import DATASETS

    for name, spec in sorted(DATASETS.items()):
        print(f"{name:20s} {spec.summary}")
        for variant, help_text in spec.variant_help.items():
            default = " (default)" if variant == spec.default_variant else ""
            print(f"    --variant {variant:22s} {help_text}{default}")
        if spec.seed_default is not None:
            print(f"    {f'--seed (default {spec.seed_default})':32s} {spec.seed_help}")
        for option, meta in spec.options.items():
            flag = "--" + option.replace("_", "-")
            print(f"    {flag:32s} {meta.help}")
        inputs = sorted({n for names in spec.variants.values() for n in names})
        if inputs:
            print(f"    inputs: {', '.join(inputs)}")
    return 0


def _default_raw(name: str) -> list[str]:
    return [str(path) for path in raw_dirs(name)]


@_guarded
def cmd_prepare(args: argparse.Namespace, rest: list[str]) -> int:
    """Prepare a data set into --out and print a summary."""
    from gradcode.data.prepare import prepare

    options: dict[str, Any] = {}
    for key in ("rows", "features", "test_rows", "noise_std"):
        if getattr(args, key) is not None:
            options[key] = getattr(args, key)
    raw = args.raw if args.raw is not None else _default_raw(args.name)
    data = prepare(
        args.name,
        args.out,
        raw=raw,
        variant=args.variant,
        seed=args.seed,
        trim_to_multiple=args.trim_to_multiple,
        partitions=args.partitions,
        verify_checksums=not args.no_verify_checksums,
        overwrite=args.overwrite,
        **options,
    )
    print(f"prepared {data.name} (variant {data.variant}) in {args.out}")
    print(_summary(data.meta))
    return 0


def _shape(meta: dict[str, Any], key: str) -> str:
    rows, cols = meta["shapes"][key]
    return f"{rows:,} x {cols:,}  ({meta['nnz'][key]:,} non-zeros, {meta['storage']})"


def _summary(meta: dict[str, Any]) -> str:
    lines = []
    if meta["stand_in"]:
        lines.append("STAND-IN     synthetic substitute: never report it as the real data set")
    lines += [
        f"dataset      {meta['dataset']} (variant {meta['variant']})",
        f"description  {meta['description']}",
        f"task         {meta['task']}",
        f"X_train      {_shape(meta, 'X_train')}",
        f"X_test       {_shape(meta, 'X_test')}",
    ]
    if "labels" in meta:
        parts = [
            f"{split} {counts['1']:,} (+1) / {counts['-1']:,} (-1)"
            if meta["task"] == "classification"
            else f"{split} " + " / ".join(f"{n:,} ({label})" for label, n in counts.items())
            for split, counts in sorted(meta["labels"].items(), reverse=True)
        ]
        lines.append(f"labels       {'; '.join(parts)}")
    lines.append(f"seed         {meta['seed']}")
    if meta["options"]:
        lines.append(f"options      {', '.join(f'{k}={v}' for k, v in meta['options'].items())}")
    trim = meta["trim"]
    if trim:
        lines.append(
            f"trim         to a multiple of {trim['multiple']}: dropped {trim['rows_dropped']} "
            f"of {trim['rows_before']:,} training rows"
        )
    partition = meta["partitions"]
    if partition:
        sizes = partition["sizes"]
        lines.append(f"partitions   k = {partition['k']}, sizes {min(sizes)}..{max(sizes)}")
    for record in meta["inputs"]:
        status = "verified" if record["verified"] else "NOT verified"
        lines.append(f"input        {record['file']}  sha256 {record['sha256'][:16]}...  {status}")
    if not meta["verify_checksums"]:
        lines.append("checksums    verification was switched off (--no-verify-checksums)")
    for name, output in meta["outputs"].items():
        lines.append(f"output       {name}  {output['bytes']:,} bytes  sha256 {output['sha256']}")
    comparison = meta.get("comparison")
    if comparison:
        lines.append(
            f"paper        {comparison['paper']}: reported {comparison['reported_features']:,} "
            f"features / {comparison['reported_train_rows']:,} training rows; here "
            f"{comparison['features']:,} / {comparison['train_rows']:,} (differences "
            f"{comparison['feature_difference']:+,} / {comparison['train_row_difference']:+,})"
        )
    for note in meta["notes"]:
        lines.append(f"note         {note}")
    return "\n".join(lines)


@_guarded
def cmd_info(args: argparse.Namespace, rest: list[str]) -> int:
    """Print the summary of a prepared directory's meta.json (or the JSON itself)."""
    from gradcode.data.provenance import dumps, read_meta

    meta = read_meta(args.directory)
    if args.json:
        print(dumps(meta), end="")
    else:
        print(_summary(meta))
    return 0


@_guarded
def cmd_verify(args: argparse.Namespace, rest: list[str]) -> int:
    """Check data.npz against meta.json; exit 1 when it differs."""
    from gradcode.data.prepared import verify_prepared

    try:
        meta = verify_prepared(args.directory)
    except DataError as error:
        print(f"gradcode: verify: {error}", file=sys.stderr)
        return 1
    sha = meta["outputs"]["data.npz"]["sha256"]
    print(f"data.npz matches meta.json (sha256 {sha})")
    return 0


@_guarded
def cmd_download(args: argparse.Namespace, rest: list[str]) -> int:
    """Fetch the raw inputs of a data set, accepted only with matching checksums."""
    from gradcode.data.download import download

    for path in download(args.name, args.to, overwrite=args.overwrite):
        print(f"wrote {path}")
    return 0


def add_parser(subparsers: Any) -> None:
    """Add the ``data`` command group to the main parser's ``subparsers``."""
    data = subparsers.add_parser(
        "data",
        help="data sets: list, prepare, info, verify, download",
        description="Prepare the experiments' data sets reproducibly, with provenance.",
        allow_abbrev=False,
    )
    sub = data.add_subparsers(dest="data_action", required=True)

    listing = sub.add_parser("list", help="data sets, variants and options", allow_abbrev=False)
    listing.set_defaults(func=cmd_list)

    prep = sub.add_parser(
        "prepare",
        help="write DIR/data.npz and DIR/meta.json",
        description=(
            "Prepare data set NAME into --out. Inputs are files or directories (--raw); "
            f"without --raw, ${DATA_DIR_ENV}/<amazon|gisette> is used when set."
        ),
        allow_abbrev=False,
    )
    prep.add_argument("name", help="data set (see `gradcode data list`)")
    prep.add_argument(
        "--raw", action="extend", nargs="+", metavar="PATH", help="input files or directories"
    )
    prep.add_argument("--out", required=True, metavar="DIR", help="output directory (new)")
    prep.add_argument("--variant", help="recipe variant (default: the data set's first)")
    prep.add_argument("--seed", type=int, help="seed (default per data set)")
    prep.add_argument(
        "--trim-to-multiple",
        type=int,
        metavar="M",
        help="drop the last training rows so that their number is a multiple of M",
    )
    prep.add_argument(
        "--partitions", type=int, metavar="K", help="record K contiguous training partitions"
    )
    prep.add_argument(
        "--no-verify-checksums",
        action="store_true",
        help="accept inputs that differ from the published files (recorded in meta.json)",
    )
    prep.add_argument("--overwrite", action="store_true", help="replace an existing --out")
    prep.add_argument("--rows", type=int, help="training rows (synthetic, variant custom)")
    prep.add_argument("--features", type=int, help="features (synthetic, variant custom)")
    prep.add_argument("--test-rows", type=int, help="test rows (synthetic)")
    prep.add_argument("--noise-std", type=float, help="noise standard deviation (linear)")
    prep.set_defaults(func=cmd_prepare)

    info = sub.add_parser("info", help="summary of a prepared directory", allow_abbrev=False)
    info.add_argument("directory", metavar="DIR")
    info.add_argument("--json", action="store_true", help="print meta.json")
    info.set_defaults(func=cmd_info)

    check = sub.add_parser(
        "verify", help="check data.npz against the sha256 in meta.json", allow_abbrev=False
    )
    check.add_argument("directory", metavar="DIR")
    check.set_defaults(func=cmd_verify)

    fetch = sub.add_parser(
        "download",
        help="fetch raw inputs (network), verified by checksum",
        allow_abbrev=False,
    )
    fetch.add_argument("name", choices=["amazon", "gisette"])
    fetch.add_argument("--to", required=True, metavar="DIR", help="directory for the files")
    fetch.add_argument("--overwrite", action="store_true", help="replace existing files")
    fetch.set_defaults(func=cmd_download)
