"""Starting a training job from Python (tests, benchmarks): ``mpiexec`` with a sane environment.

The ``mpich`` wheel puts ``mpiexec`` next to the interpreter. Every rank gets one BLAS thread
(``OPENBLAS_NUM_THREADS`` and friends): threaded BLAS on oversubscribed cores is 3-100x
slower. Hydra's ``mpiexec`` runs any number of ranks on one machine (oversubscription).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from gradcode.blas import single_thread_environment


def mpiexec() -> str:
    """The ``mpiexec`` beside this interpreter (the ``mpich`` wheel's), else on ``PATH``."""
    beside = Path(sys.executable).parent / "mpiexec"
    if beside.exists():
        return str(beside)
    found = shutil.which("mpiexec")
    if found is None:
        raise FileNotFoundError("mpiexec not found (pip install mpich)")
    return found


def job_environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = single_thread_environment()
    env.update(extra or {})
    return env


def command(ranks: int, run_file: str | os.PathLike[str], *args: str) -> list[str]:
    """``mpiexec -n RANKS python -m gradcode.train RUN_FILE ARGS...``."""
    return [
        mpiexec(),
        "-n",
        str(ranks),
        sys.executable,
        "-m",
        "gradcode.train",
        str(run_file),
        *args,
    ]


def run_job(
    ranks: int,
    run_file: str | os.PathLike[str],
    args: Sequence[str] = (),
    *,
    timeout: float = 300,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run a training job to completion (``run_command`` of ``command``)."""
    return run_command(command(ranks, run_file, *args), timeout=timeout, env=env)


def run_command(
    argv: Sequence[str], *, timeout: float = 300, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run an MPI job's command line to completion; stdout and stderr captured as text.

    The job runs in its own session with ``job_environment(env)``; on timeout the whole
    process group (mpiexec, its proxies and every rank) is killed, so no rank outlives a hung
    job, then ``subprocess.TimeoutExpired`` is raised.
    """
    process = subprocess.Popen(
        list(argv),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=job_environment(env),
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(process)
        process.communicate()
        raise
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def kill_group(process: subprocess.Popen) -> None:
    """SIGKILL the process group of ``process`` (started with ``start_new_session``)."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
