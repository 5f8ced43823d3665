"""The workflow's jobs cache the bytecode they compile.

Python writes what it compiles to ``__pycache__`` and reads it back in the next interpreter,
unless ``PYTHONDONTWRITEBYTECODE`` is set, as some sandboxes' environments set it. The main job
starts thousands of interpreters (every MPI rank of 58 training runs, every notebook kernel,
every analysis), and with the variable set each of them compiled numpy, scipy, mpi4py and
gradcode from source again, the notebooks matplotlib and IPython too: a rank's imports took
1.0 CPU-second instead of 0.36, a figure job 3.6 instead of 1.6, and the main job 777 s
instead of 525 as a new user runs it (``docs/measurements/ci-time.md``, 2026-11-30). The
Snakefile's ``onstart`` unsets it for the jobs, and says so; the Snakemake process itself keeps
it. An install the user cannot write to is left as it is: Python skips the write silently.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

VARIABLE = "PYTHONDONTWRITEBYTECODE"


def cache_for_jobs(environ: MutableMapping[str, str] = os.environ) -> str | None:
    """Unset ``PYTHONDONTWRITEBYTECODE`` in ``environ`` (the one the jobs inherit); the
    one-line notice to print when it was set, else ``None``."""
    if not environ.pop(VARIABLE, ""):
        return None
    return (
        f"gradcode: {VARIABLE} unset for this workflow's jobs: each of its interpreters "
        "would compile its imports from source again (gradcode.pipeline.bytecode)"
    )
