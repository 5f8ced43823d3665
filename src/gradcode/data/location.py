"""Where the real data sets' raw files are: the one reading of ``GRADCODE_DATA_DIR``.

The real files are never part of this repository (Kaggle's terms for Amazon). A folder named
by ``GRADCODE_DATA_DIR`` holds one subfolder per data set (``amazon/``, ``gisette/``: the
``raw_subdir`` of its registry entry); the CLI, training runs and the workflow all look there
through ``raw_dirs`` when no folder is given explicitly.
"""

from __future__ import annotations

import os
from pathlib import Path

#: environment variable naming the folder that holds amazon/ and gisette/ (CI's datasets)
DATA_DIR_ENV = "GRADCODE_DATA_DIR"


def data_root() -> Path | None:
    """The folder ``GRADCODE_DATA_DIR`` names, or ``None`` when it is unset or empty."""
    root = os.environ.get(DATA_DIR_ENV)
    return Path(root) if root else None


def raw_dirs(name: str) -> list[Path]:
    """Where data set ``name``'s raw files would be: ``[$GRADCODE_DATA_DIR/<raw_subdir>]``,
    or ``[]`` when the variable is unset or the data set has no raw files (synthetic ones)."""
    from gradcode.data.registry import DATASETS

    spec = DATASETS.get(name)
    root = data_root()
    if spec is None or spec.raw_subdir is None or root is None:
        return []
    return [root / spec.raw_subdir]


def describe_raw_dir(name: str) -> str:
    """How messages name the folder of ``name``'s files: ``$GRADCODE_DATA_DIR/amazon``."""
    from gradcode.data.registry import DATASETS

    spec = DATASETS.get(name)
    return f"${DATA_DIR_ENV}/" + (spec.raw_subdir if spec and spec.raw_subdir else name)
