"""The simulation specs a workflow config asks for (``simulate.specs``), validated.

A spec file's id is its stem, and its table is ``paths.SPEC_SIMULATION`` of it. Every spec is
read and checked here, at DAG construction (its timing model and every scheme are built, so a
plug-in's name is resolved and an unknown one fails with the list of known names), and errors
name the config key and the file.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from gradcode.errors import UserError
from gradcode.pipeline.paths import SPEC_SIMULATION
from gradcode.sim.spec import read_spec


def spec_table(spec_id: str) -> str:
    """The table the workflow writes for spec ``spec_id``."""
    return SPEC_SIMULATION.format(spec=spec_id)


def collect_specs(files: Sequence[str], root: str | Path) -> dict[str, str]:
    """Spec id -> file (as given, relative to ``root`` unless absolute), each spec validated.

    ``UserError`` naming ``simulate.specs[i]`` for a missing or invalid file, or for two
    files with one stem (their tables would collide).
    """
    specs: dict[str, str] = {}
    for index, name in enumerate(files):
        where = f"config simulate.specs[{index}] ({name})"
        path = Path(name) if Path(name).is_absolute() else Path(root, name)
        if not path.is_file():
            raise UserError(f"{where}: no such file")
        try:
            read_spec(path)
        except ValueError as error:  # SpecError, a scheme's ParameterError, UnknownNameError
            raise UserError(f"{where}: {error}") from None
        if path.stem in specs:
            raise UserError(f"{where}: another spec is also named {path.stem!r}")
        specs[path.stem] = name
    return specs
