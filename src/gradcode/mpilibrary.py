"""Which MPI library this process runs on, asked from inside it: loading Open MPI's when its
launcher started the process, and what ``summary.json`` records of the library (``mpi``).

The launcher's side (finding ``mpiexec.hydra`` and Open MPI's launcher, their command lines and
environments) is ``gradcode.launch.mpilib``; this is the rank's side, below both the launcher
and the rank program, so that the rank program never imports the launcher.
"""

from __future__ import annotations

import os
from typing import Any

MPICH = "mpich"
OPEN_MPI = "openmpi"

#: what Open MPI's launcher (PRRTE) puts in every process it starts
OPEN_MPI_MARKERS = ("OMPI_COMM_WORLD_SIZE", "PRTE_LAUNCHED")


def select_for_launcher(env: dict[str, str] | None = None) -> None:
    """Before mpi4py's ``MPI`` is imported: load Open MPI if its launcher started us.

    Only the entry points call this (``python -m gradcode.train``): importing the package
    changes nothing in the environment.
    """
    target = os.environ if env is None else env
    if "MPI4PY_MPIABI" in target:
        return
    if any(marker in target for marker in OPEN_MPI_MARKERS):
        target["MPI4PY_MPIABI"] = OPEN_MPI


def describe() -> dict[str, Any]:
    """``summary.json``'s ``mpi``: the library that ran and whether it tolerates failures."""
    from mpi4py import MPI

    text = MPI.Get_library_version()
    first = next((line.strip() for line in text.splitlines() if line.strip()), "").strip("\x00 ")
    library = OPEN_MPI if first.startswith("Open MPI") else MPICH
    return {
        "library": library,
        "version": first,
        "fault_tolerant": library == OPEN_MPI and fault_tolerant(),
        "launcher": "ulfm" if library == OPEN_MPI else "hydra or srun --mpi=pmi2",
    }


def fault_tolerant() -> bool:
    """Whether failed processes are reported instead of ending the job: Open MPI started with
    ``--with-ft ulfm``, which sets ``mpi_ft_enable`` for every rank (ULFM's calls answer
    without it too, but a dead rank then aborts the job)."""
    value = os.environ.get("OMPI_MCA_mpi_ft_enable", "")
    return value.strip().lower() in ("1", "true", "yes", "on")
