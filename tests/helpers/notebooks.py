"""Running a figure notebook of ``workflow/notebooks`` as the workflow's papermill does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jupytext
import papermill

from gradcode.pipeline import kernels

ROOT = Path(__file__).resolve().parents[2]


def execute_notebook(name: str, parameters: dict[str, Any], directory: Path) -> Path:
    """Run notebook ``name`` with ``parameters`` plus ``png: figure.png`` and ``comparison:
    comparison.csv`` in ``directory`` (its working folder); the PNG's path."""
    notebook = jupytext.read(ROOT / "workflow" / "notebooks" / f"{name}.py")
    source = directory / "source.ipynb"
    jupytext.write(notebook, source)
    papermill.execute_notebook(
        str(source),
        str(directory / "executed.ipynb"),
        parameters=parameters | {"png": "figure.png", "comparison": "comparison.csv"},
        kernel_name="python3",
        engine_name=kernels.NAME,  # the figure rule's engine
        cwd=str(directory),
        progress_bar=False,
    )
    png = directory / "figure.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return png
