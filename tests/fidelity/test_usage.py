"""What a process cost the machine, read from the kernel (``gradcode.fidelity.usage`` and
``pressure``), checked against work done here: a busy loop is on a core, a sleep is not."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from gradcode.fidelity import pressure, usage, work

needs_schedstat = pytest.mark.skipif(
    not Path("/proc/self/schedstat").exists(), reason="this kernel keeps no schedstat"
)


@needs_schedstat
def test_a_busy_loop_is_on_a_core_and_a_sleep_is_not():
    began = usage.sample()
    end = time.perf_counter() + 0.2
    while time.perf_counter() < end:
        pass
    busy = usage.between(began, usage.sample())
    # on a core or waiting for one the whole time (other tests may hold the cores)
    assert busy["cpu"] + busy["wait"] == pytest.approx(busy["seconds"], rel=0.15)
    began = usage.sample()
    time.sleep(0.2)
    idle = usage.between(began, usage.sample())
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


def test_work_counts_the_cpu_of_a_busy_loop_and_not_a_sleep():
    """``work`` is what the rank computed: a busy loop's CPU seconds are about its real ones
    (less if another process held the core), a sleep inside it adds real seconds only."""
    began = usage.sample()
    before = time.perf_counter()
    one = work.begin()
    end = time.perf_counter() + 0.15
    while time.perf_counter() < end:
        pass
    time.sleep(0.15)
    work.end(one)
    # bounded by the real seconds the test itself saw, not by 0.3 s plus a margin: a loaded
    # machine (the parallel session runs at nice 19) may wake the sleep tens of ms late
    elapsed = time.perf_counter() - before
    spent = usage.between(began, usage.sample())
    assert 0.3 <= spent["work_real"] <= elapsed
    assert 0.01 < spent["work_cpu"] <= 0.16
