"""Starting a training job from Python (tests, benchmarks): ``mpiexec`` with a sane environment.

The ``mpich`` wheel puts its ``mpiexec.hydra`` next to the interpreter (``bin/mpiexec`` may be
Open MPI's: ``gradcode.train.mpilib``). Every rank gets one BLAS thread
(``OPENBLAS_NUM_THREADS`` and friends): threaded BLAS on oversubscribed cores is 3-100x
slower. Hydra runs any number of ranks on one machine (oversubscription). A run file with
``faults.tolerate`` starts on Open MPI with ULFM instead (``command(..., tolerant=True)``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Sequence

from gradcode.blas import single_thread_environment
from gradcode.train.mpilib import hydra


def mpiexec() -> str:
    """MPICH's launcher (``mpiexec.hydra``) beside this interpreter, else on ``PATH``."""
    return hydra()


def job_environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = single_thread_environment()
    env.update(extra or {})
    return env


def command(
    ranks: int, run_file: str | os.PathLike[str], *args: str, tolerant: bool = False
) -> list[str]:
    """``mpiexec -n RANKS python -m gradcode.train RUN_FILE ARGS...``; ``tolerant``: on Open
    MPI with ULFM (``python -m gradcode.train.ulfm -n RANKS ...``)."""
    program = [sys.executable, "-m", "gradcode.train", str(run_file), *args]
    if tolerant:
        return [sys.executable, "-m", "gradcode.train.ulfm", "-n", str(ranks), *program]
    return [mpiexec(), "-n", str(ranks), *program]


def run_job(
    ranks: int,
    run_file: str | os.PathLike[str],
    args: Sequence[str] = (),
    *,
    timeout: float = 300,
    env: dict[str, str] | None = None,
    tolerant: bool = False,
) -> subprocess.CompletedProcess[str]:
    """Run a training job to completion (``run_command`` of ``command``)."""
    line = command(ranks, run_file, *args, tolerant=tolerant)
    return run_command(line, timeout=timeout, env=env)


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
