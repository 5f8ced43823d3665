"""Lint is part of the test command: ruff check and ruff format --check, the figure notebooks
(jupytext py:percent files) included."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PATHS = ["src", "tests", "benchmarks", "workflow/scripts", "workflow/notebooks"]


@pytest.mark.parametrize(
    "args",
    [
        ["check", *PATHS],
        ["format", "--check", *PATHS],
    ],
)
def test_ruff(args):
    result = subprocess.run([_ruff(), *args], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_notebook_is_linted():
    """``ruff check .`` reaches the notebooks too (an exclude in the ruff settings would skip
    them silently)."""
    result = subprocess.run(
        [_ruff(), "check", "--show-files", "."],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    checked = {Path(line).name for line in result.stdout.split()}
    notebooks = {path.name for path in (ROOT / "workflow" / "notebooks").glob("*.py")}
    assert notebooks and notebooks <= checked


def _ruff() -> str:
    return shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
