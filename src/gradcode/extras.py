"""The optional parts of the install, and the one line that names a missing one.

``pip install gradcode`` (the core) builds and verifies codes, simulates, fits timing models
and recommends codes. The rest comes with pyproject.toml's extras:

- ``mpi``: training as MPI jobs (mpi4py, and the MPICH and Open MPI wheels' launchers);
- ``data``: preparing data sets (scikit-learn), also for the digits analysis;
- ``nn``: neural networks as models (JAX on the CPU: ``gradcode.models.nn``), also for the
  digits analysis;
- ``workflow``: the Snakemake workflow, its notebooks and figures (Snakemake, papermill,
  Jupyter's kernel, jupytext, matplotlib);
- ``test``: the test suite's tools, and every extra above (``all``).

What needs an extra calls ``require`` where it starts (a command, an entry point, the library
function every path goes through), so that its absence is one line naming the extra and the
command that installs it, never a traceback from deep inside an import.
"""

from __future__ import annotations

import importlib.util
import sys

from gradcode.errors import UserError

#: extra -> the modules it installs that gradcode imports (tests/test_extras.py keeps this and
#: pyproject.toml's extras together)
MODULES: dict[str, tuple[str, ...]] = {
    "mpi": ("mpi4py",),
    "data": ("sklearn",),
    "nn": ("jax",),
    "workflow": ("snakemake", "papermill", "jupytext", "matplotlib"),
}


class MissingExtra(UserError, ImportError):
    """Something needs an extra that is not installed (one line: which, and how to get it)."""


def missing(what: str, extra: str) -> MissingExtra:
    """The error saying that ``what`` needs ``extra``: the one home of that message."""
    if extra not in MODULES:
        raise ValueError(f"unknown extra {extra!r} (known: {', '.join(MODULES)})")
    return MissingExtra(f"{what} needs the '{extra}' extra: pip install 'gradcode[{extra}]'")


def installed(module: str) -> bool:
    """Whether ``module`` can be imported (without importing it)."""
    if module in sys.modules:
        return sys.modules[module] is not None
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def require(extra: str, what: str) -> None:
    """``missing(what, extra)`` unless every module of ``extra`` can be imported."""
    if not all(installed(module) for module in MODULES[extra]):
        raise missing(what, extra)


def require_or_exit(extra: str, what: str) -> None:
    """``require`` for a ``python -m`` entry point that imports the extra as it starts: the
    line on stderr and exit status 2, as ``gradcode`` reports a user's error."""
    try:
        require(extra, what)
    except MissingExtra as error:
        print(f"gradcode: error: {error}", file=sys.stderr)
        raise SystemExit(2) from None
