"""``gradcode.launch.jobs.run_command``: a job that outlives its timeout leaves nothing behind."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

from gradcode.launch.jobs import HungJob, run_command


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its adopter to reap it does not)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def test_a_hung_job_is_killed_with_what_it_left_named(tmp_path):
    # the job's first process exits, but one in a session of its own keeps the output pipe
    # open (as ranks stuck in MPI_Finalize did): it must be found, named and killed
    pid_file = tmp_path / "pid"
    script = (
        "import subprocess, sys; "
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], "
        "start_new_session=True); "
        f"open({str(pid_file)!r}, 'w').write(str(p.pid))"
    )
    # the timeout must outlast the script's start (its pid file): at nice 19 beside CI's smokes
    # a fixed second lost that race once for a heavier start (tests/cluster/test_cut.py)
    with pytest.raises(HungJob) as hung:
        run_command([sys.executable, "-c", script], timeout=3.0)
    orphan = int(pid_file.read_text())
    assert f"{orphan} " in hung.value.processes and "time.sleep(60)" in str(hung.value)
    deadline = time.monotonic() + 5
    while _alive(orphan) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(orphan)
