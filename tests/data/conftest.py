"""Shared fixtures: generated files in the real formats, and the real data where present."""

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from .make_fixtures import generate

FIXTURES = generate(Path(tempfile.mkdtemp(prefix="gradcode-fixtures-")))
atexit.register(shutil.rmtree, FIXTURES, ignore_errors=True)
DATA_DIR_ENV = "GRADCODE_DATA_DIR"


def real_file(*parts: str) -> Path:
    """A file under $GRADCODE_DATA_DIR, or skip the test saying what is missing."""
    root = os.environ.get(DATA_DIR_ENV)
    if not root:
        pytest.skip(f"{DATA_DIR_ENV} is not set: the real data files are not available")
    path = Path(root, *parts)
    if not path.is_file():
        pytest.skip(f"{path} is absent ({DATA_DIR_ENV}={root})")
    return path


@pytest.fixture
def amazon_fixture() -> Path:
    return FIXTURES / "amazon"


@pytest.fixture
def gisette_fixture() -> Path:
    return FIXTURES / "gisette"


def assert_nothing_written(out: Path) -> None:
    """After a failure: no output directory and no temporary leftovers beside it."""
    assert not out.exists()
    if out.parent.exists():
        assert [p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.")] == []
