"""Fixtures of the capability tests: a small prepared data set (made once per session)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.data import small_logistic


@pytest.fixture(scope="session")
def logistic_data(tmp_path_factory) -> Path:
    return small_logistic(tmp_path_factory.mktemp("data") / "logistic")
