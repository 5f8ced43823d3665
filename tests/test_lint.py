"""Lint is part of the test command: ruff check and ruff format --check."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "args",
    [
        ["check", "src", "tests", "benchmarks", "workflow/scripts"],
        ["format", "--check", "src", "tests", "benchmarks", "workflow/scripts"],
    ],
)
def test_ruff(args):
    ruff = shutil.which("ruff") or str(Path(sys.executable).parent / "ruff")
    result = subprocess.run([ruff, *args], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
