"""Fixtures of the capability tests: a small prepared data set."""

from __future__ import annotations

from pathlib import Path

import pytest

from gradcode.data import prepare


@pytest.fixture(scope="session")
def logistic_data(tmp_path_factory) -> Path:
    """480 training rows, 16 features: divisible by the toy codes' partition counts."""
    out = tmp_path_factory.mktemp("data") / "logistic"
    prepare("synthetic-logistic", out, variant="custom", rows=480, features=16, test_rows=100)
    return out
