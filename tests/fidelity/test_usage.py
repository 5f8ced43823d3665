"""What a process cost the machine, read from the kernel (``gradcode.fidelity.usage`` and
``pressure``), checked against work done here: a busy loop is on a core, a sleep is not."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gradcode.fidelity import pressure

needs_schedstat = pytest.mark.skipif(
    not Path("/proc/self/schedstat").exists(), reason="this kernel keeps no schedstat"
)


def _alone(script: str) -> dict:
    """What ``script`` printed (one JSON object), run in a single-threaded process of its own.
    The counters are the whole process's, and a test session's process may have other threads
    on a core or newly waiting for one (a CI run saw 0.67 s of CPU and wait in a 0.25 s busy
    loop); numpy's BLAS threads are made one."""
    environ = os.environ | {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    # the script leaves what it found in ``found``; how many threads it ran is added here
    tail = 'found["threads"] = len(os.listdir("/proc/self/task"))\nprint(json.dumps(found))\n'
    done = subprocess.run(
        [sys.executable, "-c", "import json, os, time\n" + script + tail],
        capture_output=True,
        text=True,
        check=True,
        env=environ,
    )
    found = json.loads(done.stdout)
    assert found.pop("threads") == 1
    return found


BUSY_AND_IDLE = """
from gradcode.fidelity import usage
began = usage.sample()
end = time.perf_counter() + 0.2
while time.perf_counter() < end:
    pass
busy = usage.between(began, usage.sample())
began = usage.sample()
time.sleep(0.2)
found = {"busy": busy, "idle": usage.between(began, usage.sample())}
"""


@needs_schedstat
def test_a_busy_loop_is_on_a_core_and_a_sleep_is_not():
    found = _alone(BUSY_AND_IDLE)
    busy, idle = found["busy"], found["idle"]
    # on a core or waiting for one the whole time (other tests may hold the cores). Only at
    # least: this kernel's run-queue delay counts too much for a thread that got one or two
    # slices, up to 3x the real seconds at nice 19 beside busy loops (gradcode.fidelity.usage)
    assert busy["cpu"] + busy["wait"] >= 0.85 * busy["seconds"]
    assert idle["cpu"] < 0.02 and idle["seconds"] >= 0.2
    assert idle["voluntary"] >= 1


def test_pressure_is_the_share_of_the_time_some_task_waited(tmp_path):
    path = tmp_path / "cpu"
    path.write_text(
        "some avg10=1.00 avg60=0.50 avg300=0.10 total=1000000\n"
        "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
    )
    begin = pressure.sample(path)
    path.write_text(
        "some avg10=1.00 avg60=0.50 avg300=0.10 total=1500000\n"
        "full avg10=0.00 avg60=0.00 avg300=0.00 total=100000\n"
    )
    end = pressure.sample(path)
    assert begin is not None and end is not None
    end["real"] = begin["real"] + 2.0
    shares = pressure.between(begin, end)
    assert shares == {"seconds": 2.0, "some": 0.25, "full": 0.05}


def test_no_pressure_file_gives_none(tmp_path):
    assert pressure.sample(tmp_path / "absent") is None
    assert pressure.between(None, None) is None


WORK = """
from gradcode.fidelity import usage, work
began = usage.sample()
before, cpu_before = time.perf_counter(), time.thread_time()
one = work.begin()
end = time.perf_counter() + 0.15
while time.perf_counter() < end:
    pass
time.sleep(0.15)
work.end(one)
elapsed, cpu = time.perf_counter() - before, time.thread_time() - cpu_before
found = {"spent": usage.between(began, usage.sample()), "elapsed": elapsed, "cpu": cpu}
"""


def test_work_counts_the_cpu_of_a_busy_loop_and_not_a_sleep():
    """``work`` is what the rank computed: its real seconds are the loop's and the sleep's, its
    CPU seconds the loop's alone, as the thread's own clock counts them (at nice 19 beside busy
    processes the loop may have had a few ms of a core)."""
    found = _alone(WORK)
    spent = found["spent"]
    # bounded by the real seconds the script itself saw, not by 0.3 s plus a margin: a loaded
    # machine (the parallel session runs at nice 19) may wake the sleep tens of ms late
    assert 0.3 <= spent["work_real"] <= found["elapsed"]
    assert 0 < spent["work_cpu"] <= 0.16
    assert spent["work_cpu"] == pytest.approx(found["cpu"], abs=0.005)
