"""Fixtures of the runtime tests: small prepared data sets (made once per session).

The MPI job runner and the run helpers are in ``tests.helpers.mpi``.
"""

from __future__ import annotations

import os
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


#: JAX's persistent compilation cache, for the network jobs' ranks (environment variables a
#: rank's ``import jax`` reads): a rank that compiles a shape an earlier job of the session
#: compiled loads it instead (about 0.45 s of CPU less per rank, of about 1 s)
JAX_CACHE = {
    "JAX_COMPILATION_CACHE_DIR": None,
    "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
    "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0",
}


@pytest.fixture(scope="session", autouse=True)
def jax_compilation_cache(tmp_path_factory):
    """One compilation cache per test session, for every job it starts; the one the
    environment names when it names one (the README's test command shares one between its
    parallel and serial sessions and their pytest-xdist workers)."""
    folder = os.environ.get("JAX_COMPILATION_CACHE_DIR") or str(tmp_path_factory.mktemp("jax"))
    values = JAX_CACHE | {"JAX_COMPILATION_CACHE_DIR": folder}
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    yield
    for name, value in saved.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
