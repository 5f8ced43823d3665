"""Data helpers of the tests: small prepared data sets, files in the real formats, the real
data where present, and checks on what a failed ``prepare`` leaves behind.

The fixtures that wrap these live in ``tests/data/conftest.py`` and ``tests/train/conftest.py``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pytest

from gradcode.data import prepare, provenance
from gradcode.data.cli import add_parser
from gradcode.data.location import DATA_DIR_ENV, data_root
from gradcode.data.prepared import write_prepared
from gradcode.errors import CLIError
from tests.helpers.formats import generate


def small_logistic(out: Path) -> Path:
    """480 training rows (divisible by every k the tests use), 16 features, 100 test rows."""
    prepare("synthetic-logistic", out, variant="custom", rows=480, features=16, test_rows=100)
    return out


def small_linear(out: Path) -> Path:
    """240 training rows, 8 features, no test rows."""
    prepare("synthetic-linear", out, variant="custom", rows=240, features=8, test_rows=0)
    return out


def small_digits(out: Path, train: int = 480, test: int = 200) -> Path:
    """scikit-learn's digits (8 x 8 images scaled to [0, 1], labels 0..9) as a prepared
    ``multiclass`` set: the first ``train`` rows train, the next ``test`` rows test."""
    from sklearn.datasets import load_digits

    x, y = load_digits(return_X_y=True)
    rows = np.arange(train + test)
    arrays = {
        "X_train": x[:train] / 16.0,
        "X_test": x[train : train + test] / 16.0,
        "y_train": y[:train].astype(np.float64),
        "y_test": y[train : train + test].astype(np.float64),
        "train_rows": rows[:train],
        "test_rows": rows[train:],
    }
    meta = {
        "format": provenance.FORMAT,
        "dataset": "digits-test",
        "variant": "test",
        "stand_in": False,
        "task": "multiclass",
        "storage": "dense",
        "shapes": {"X_train": [train, 64], "X_test": [test, 64]},
    }
    write_prepared(out, arrays, meta)
    return out


def format_fixtures(root: Path) -> Path:
    """The small files in the real formats, generated below ``root`` (``amazon/``,
    ``gisette/``; see ``tests.helpers.formats``); returns ``root``."""
    return generate(root)


def real_file(*parts: str) -> Path:
    """A file under $GRADCODE_DATA_DIR, or skip the test saying what is missing."""
    root = data_root()
    if root is None:
        pytest.skip(f"{DATA_DIR_ENV} is not set: the real data files are not available")
    path = Path(root, *parts)
    if not path.is_file():
        pytest.skip(f"{path} is absent ({DATA_DIR_ENV}={root})")
    return path


def assert_nothing_written(out: Path) -> None:
    """After a failure: no output directory and no temporary leftovers beside it."""
    assert not out.exists()
    if out.parent.exists():
        assert [p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.")] == []


def run_data_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``gradcode data ...`` through a parser built like ``gradcode.cli.main``'s: (status,
    stdout, stderr), a ``CLIError`` printed as the main CLI prints it (status 2)."""
    parser = argparse.ArgumentParser(prog="gradcode", allow_abbrev=False)
    add_parser(parser.add_subparsers(dest="command", required=True))
    args, rest = parser.parse_known_args(argv)
    try:
        status = args.func(args, rest)
    except CLIError as error:
        print(f"gradcode: error: {error}", file=sys.stderr)
        status = 2
    out, err = capsys.readouterr()
    return status, out, err
