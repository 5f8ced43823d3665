"""Read a YAML file into Python objects, failing with one line that names the file."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def read_yaml(path: str | Path, error: type[Exception]) -> Any:
    """The parsed content of ``path``; ``error("<path>: ...")`` when unreadable or not YAML."""
    # PyYAML loads on the first file read (10 ms): the MPI ranks that only receive their
    # run's config import the modules that read run files, but never read one
    import yaml

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as failure:
        raise error(f"{path}: cannot read ({failure.strerror or failure})") from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as failure:
        mark = getattr(failure, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark is not None else ""
        raise error(f"{path}: not valid YAML{where}") from None
