"""Shared by the benchmarks that time local jobs with the ``fixed`` straggler model: their
options and their synthetic data set."""

from __future__ import annotations

import argparse
import atexit
import shutil
import tempfile
from pathlib import Path

from gradcode.data import prepare


def add_options(parser: argparse.ArgumentParser, *, iterations: int, base: float) -> None:
    """``--iterations``, ``--warmup``, the delays (``--base + --step i`` seconds for worker
    ``i``), ``--features`` and ``--rows``."""
    parser.add_argument("--iterations", type=int, default=iterations)
    parser.add_argument("--warmup", type=int, default=3, help="iterations left out")
    parser.add_argument("--base", type=float, default=base, help="seconds per partition")
    parser.add_argument("--step", type=float, default=0.002, help="extra seconds per worker")
    parser.add_argument("--features", type=int, default=2000)
    parser.add_argument("--rows", type=int, default=4000)


def delays(n: int, args: argparse.Namespace) -> list[float]:
    """Worker ``i``'s fixed delay per partition, seconds."""
    return [round(args.base + args.step * worker, 6) for worker in range(n)]


def synthetic_data(args: argparse.Namespace, prefix: str) -> tuple[Path, Path]:
    """A fresh scratch folder and, in it, the prepared synthetic data set of ``args``; the
    folder is removed when the benchmark's interpreter exits (each left 66 MB in /tmp)."""
    scratch = Path(tempfile.mkdtemp(prefix=prefix))
    atexit.register(shutil.rmtree, scratch, ignore_errors=True)
    data = scratch / "data"
    prepare(
        "synthetic-logistic",
        data,
        variant="custom",
        rows=args.rows,
        features=args.features,
        test_rows=200,
    )
    return scratch, data
