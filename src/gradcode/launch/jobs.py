"""Starting a training job from Python (tests, benchmarks): ``mpiexec`` with a sane environment.

The ``mpich`` wheel puts its ``mpiexec.hydra`` next to the interpreter (``bin/mpiexec`` may be
Open MPI's: ``gradcode.launch.mpilib``). Every rank gets one BLAS thread
(``OPENBLAS_NUM_THREADS`` and friends): threaded BLAS on oversubscribed cores is 3-100x
slower. Hydra runs any number of ranks on one machine (oversubscription). A run file with
``faults.tolerate`` starts on Open MPI with ULFM instead (``command(..., tolerant=True)``).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path

from gradcode.blas import single_thread_environment
from gradcode.launch.mpilib import hydra

#: seconds a hung job's ranks get to print their stacks before the job is killed
STACK_DUMP_WAIT = 3.0
#: characters of a hung job's stderr its error message ends with
HUNG_TAIL = 8000


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
    MPI with ULFM (``python -m gradcode.launch.ulfm -n RANKS ...``)."""
    program = [sys.executable, "-m", "gradcode.train", str(run_file), *args]
    if tolerant:
        return [sys.executable, "-m", "gradcode.launch.ulfm", "-n", str(ranks), *program]
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


class HungJob(subprocess.TimeoutExpired):
    """A job that outlived its timeout; its message ends with what it printed last (the
    ranks' stacks) and the processes it had left."""

    def __init__(
        self, argv: Sequence[str], timeout: float, stdout: str, stderr: str, processes: str
    ) -> None:
        super().__init__(list(argv), timeout, output=stdout, stderr=stderr)
        self.processes = processes

    def __str__(self) -> str:
        tail = (self.stderr or "")[-HUNG_TAIL:]
        return f"{super().__str__()}\n{tail}\nprocesses of the hung job:\n{self.processes}"


def run_command(
    argv: Sequence[str], *, timeout: float = 300, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run an MPI job's command line to completion; stdout and stderr captured as text.

    The job runs in its own session with ``job_environment(env)``; on timeout every rank is
    asked where it is (``SIGUSR1``: ``gradcode.train`` dumps its Python stacks), then the whole
    process group (mpiexec, its proxies and every rank) is killed, so no rank outlives a hung
    job, and ``subprocess.TimeoutExpired`` is raised with the stacks and the group's processes
    in its ``stderr``.
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
        # a launcher may start the ranks in sessions of their own, and a process that outlived
        # the launcher keeps our pipes open: find them by descent and by the pipes they hold
        family = left_by(process)
        # the launcher forwards what the ranks print: give their dumps time to come through
        wait = STACK_DUMP_WAIT if dump_stacks(family) else 0.0
        try:
            stdout, stderr = process.communicate(timeout=wait)
        except subprocess.TimeoutExpired:
            kill_group(process, family)
            stdout, stderr = process.communicate()
        kill_group(process, family)
        raise HungJob(process.args, timeout, stdout, stderr, describe_processes(family)) from None
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def _table() -> dict[int, tuple[int, str, list[str]]]:
    """Every live process: its parent, state letter and command line."""
    table: dict[int, tuple[int, str, list[str]]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        words = [a.decode(errors="replace") for a in argv if a]
        table[int(entry.name)] = (int(stat[1]), stat[0], words)
    return table


def left_by(process: subprocess.Popen) -> dict[int, tuple[str, list[str]]]:
    """What a job left: ``process``, its live descendants and every process holding the other
    end of its stderr pipe (one that outlived its parent); each one's state and command line."""
    table = _table()
    family, grew = {process.pid}, True
    while grew:
        grew = False
        for child, (parent, _, _) in table.items():
            if parent in family and child not in family:
                family.add(child)
                grew = True
    if process.stderr is not None:
        family |= _pipe_holders(process.stderr.fileno(), table)
    return {pid: table[pid][1:] for pid in sorted(family & table.keys())}


def _pipe_holders(fd: int, pids: Iterable[int]) -> set[int]:
    """Those of ``pids`` (but this process) with a descriptor on the pipe ``fd`` reads."""
    pipe = f"pipe:[{os.fstat(fd).st_ino}]"
    found = set()
    for pid in pids:
        if pid == os.getpid():
            continue
        try:
            if any(os.readlink(link) == pipe for link in Path(f"/proc/{pid}/fd").iterdir()):
                found.add(pid)
        except OSError:
            continue
    return found


def dump_stacks(processes: dict[int, tuple[str, list[str]]]) -> int:
    """``SIGUSR1`` to the ranks (``python -m gradcode.train ...``) among ``processes``
    (``left_by``); returns how many were asked."""
    asked = 0
    for pid, (_, words) in processes.items():
        if words[1:3] == ["-m", "gradcode.train"]:
            try:
                os.kill(pid, signal.SIGUSR1)
                asked += 1
            except ProcessLookupError:
                pass
    return asked


def describe_processes(processes: dict[int, tuple[str, list[str]]]) -> str:
    """One ``pid state command`` line per process."""
    return "\n".join(
        f"{pid} {state} {' '.join(words)}" for pid, (state, words) in sorted(processes.items())
    )


def kill_group(process: subprocess.Popen, others: Iterable[int] = ()) -> None:
    """SIGKILL the process group of ``process`` (started with ``start_new_session``) and the
    processes ``others``."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    for pid in others:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
