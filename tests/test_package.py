"""Package metadata has one home: the version is pyproject.toml's, the licence file matches it."""

from __future__ import annotations

import tomllib
from importlib.metadata import version
from pathlib import Path

import gradcode

ROOT = Path(__file__).resolve().parents[1]


def test_the_version_is_pyprojects_as_installed():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert gradcode.__version__ == version("gradcode") == declared


def test_the_licence_file_is_the_licence_pyproject_declares():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["license"]["text"]
    assert declared == "MIT"
    assert (ROOT / "LICENSE").read_text().startswith("MIT License\n")
