"""What CI's smokes (``GRADCODE_SMOKES=1``, set by ``.ci/run``) do for real, which the test
sessions beside them then leave to them: the same check twice costs CI's cores and adds no
coverage. Outside CI (the smokes need root and SLURM) every test runs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: the figures the workflow smoke draws from config/smoke.yaml and checks as the notebook
#: tests do (``.ci/smoke-figures``)
SMOKE_FIGURES = frozenset(
    line.strip()
    for line in (ROOT / ".ci" / "smoke-figures").read_text().splitlines()
    if line.strip() and not line.startswith("#")
)


def smokes_run() -> bool:
    """Whether CI's smokes run beside this session."""
    return os.environ.get("GRADCODE_SMOKES") == "1"


def leave_to_the_smokes(what: str) -> None:
    """Skip the calling test when the smokes run: ``what`` they do for real."""
    if smokes_run():
        pytest.skip(f"{what} (GRADCODE_SMOKES=1)")
