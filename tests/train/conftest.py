"""Fixtures of the runtime tests: small prepared data sets (made once per session).

The MPI job runner and the run helpers are in ``tests.helpers.mpi``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.data import small_digits, small_linear, small_logistic


@pytest.fixture(scope="session")
def logistic_data(tmp_path_factory) -> Path:
    """480 training rows (divisible by every k the tests use), 16 features, 100 test rows."""
    return small_logistic(tmp_path_factory.mktemp("data") / "logistic")


@pytest.fixture(scope="session")
def linear_data(tmp_path_factory) -> Path:
    return small_linear(tmp_path_factory.mktemp("data") / "linear")


@pytest.fixture(scope="session")
def digits_data(tmp_path_factory) -> Path:
    """scikit-learn's digits, labels 0..9: 480 training rows, 200 test rows."""
    return small_digits(tmp_path_factory.mktemp("data") / "digits")
