"""Fixtures of the data tests: generated files in the real formats (made once per session in
a temporary folder). The helpers the tests call are in ``tests.helpers.data``."""

from pathlib import Path

import pytest

from tests.helpers.data import format_fixtures


@pytest.fixture(scope="session")
def data_fixtures(tmp_path_factory) -> Path:
    """Folder holding ``amazon/``, ``gisette/`` and ``cifar-10-batches-py/`` in the real
    formats (random values)."""
    return format_fixtures(tmp_path_factory.mktemp("fixtures"))


@pytest.fixture(scope="session")
def amazon_fixture(data_fixtures) -> Path:
    return data_fixtures / "amazon"


@pytest.fixture(scope="session")
def gisette_fixture(data_fixtures) -> Path:
    return data_fixtures / "gisette"


@pytest.fixture(scope="session")
def cifar10_fixture(data_fixtures) -> Path:
    return data_fixtures / "cifar-10-batches-py"
