"""The one policy for BLAS threads.

Threaded BLAS on busy or oversubscribed cores is 3-100x slower than one thread: MPI ranks
already take every core, and OpenBLAS's spinning threads fight them. So every MPI rank, every
level-1 pass of a decoder and every computation that must be bit-for-bit reproducible runs BLAS
on one thread. Nothing is set on import: a process that imports gradcode keeps its environment.

- ``single_threaded_blas()``: a context manager limiting BLAS to one thread in this process
  (``threadpoolctl``), for code that runs inside someone else's process;
- ``single_thread_environment(env)``: ``env`` with ``BLAS_VARIABLES`` set to ``1``, for child
  processes (the MPI launcher; the workflow's MPI rule sets the same variables);
- ``daxpy(x, y, a)``: ``y += a * x`` in place, SciPy's BLAS loaded on first use (or by
  ``load_daxpy``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import numpy as np
from threadpoolctl import ThreadpoolController

#: the variables BLAS and OpenMP libraries read for their thread count at start-up
BLAS_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")

_CONTROLLER: ThreadpoolController | None = None
_DAXPY: Any = None


def _controller() -> ThreadpoolController:
    # inspecting the loaded libraries costs milliseconds: once per process
    global _CONTROLLER
    if _CONTROLLER is None:
        _CONTROLLER = ThreadpoolController()
    return _CONTROLLER


def single_threaded_blas(*, openmp: bool = False) -> AbstractContextManager[Any]:
    """Limit BLAS (and with ``openmp``, OpenMP too) to one thread inside the ``with`` block.

    Nothing to do where every such library already runs one thread (every MPI rank, by
    ``single_thread_environment``): asking each library costs 2 us, while a ``limit`` that
    sets and restores them costs 26 us, and several times that on cores shared with other
    ranks (the MPI master decodes through this every iteration).
    """
    controller = _controller()
    if all(
        lib.num_threads == 1
        for lib in controller.lib_controllers
        if openmp or lib.user_api == "blas"
    ):
        return nullcontext()
    return controller.limit(limits=1, user_api=None if openmp else "blas")


def single_thread_environment(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """A copy of ``env`` (default: this process's) in which every BLAS uses one thread."""
    result = dict(os.environ if env is None else env)
    for variable in BLAS_VARIABLES:
        result[variable] = "1"
    return result


def load_daxpy() -> None:
    """Load SciPy's BLAS for ``daxpy`` now: a process that will combine messages calls this
    before its clock starts, so the import (0.3 s) does not land in a timed iteration."""
    global _DAXPY, _CONTROLLER
    if _DAXPY is None:
        from scipy.linalg.blas import daxpy as loaded

        _DAXPY = loaded
        # the controller saw the libraries loaded before; SciPy brings its own BLAS
        _CONTROLLER = None


def daxpy(x: np.ndarray, y: np.ndarray, a: float) -> None:
    """``y += a * x`` in place, ``x`` and ``y`` float64 ``(l,)``: one pass, no temporary.

    SciPy's BLAS loads on the first call (or ``load_daxpy``), not on import: SciPy costs a
    process 0.26 s to import, and only a process that combines messages ever calls this.
    """
    if _DAXPY is None:
        load_daxpy()
    _DAXPY(x, y, a=a)
