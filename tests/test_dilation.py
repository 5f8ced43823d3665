"""Time dilation's clock and sleep (``gradcode.dilation``), the runtime's timers that go
through them, and the rule that no timer of the runtime goes around them."""

from __future__ import annotations

import ast
import time
from pathlib import Path

import pytest

from gradcode import dilation
from gradcode.runfile.config import ConfigError, parse_config
from gradcode.train import ring, transport

SRC = Path(__file__).resolve().parents[1] / "src" / "gradcode"


@pytest.fixture
def dilated():
    """The process at K = 4 for one test, 1 again after it."""
    dilation.dilate(4)
    yield 4.0
    dilation.dilate(1)


@pytest.mark.parametrize("value", [0.5, 0, -1, float("nan"), float("inf"), 1001, True, "2"])
def test_a_factor_below_one_or_not_a_number_is_refused_naming_the_key(value):
    with pytest.raises(ValueError, match=r"runtime\.dilation"):
        dilation.check_factor(value, "runtime.dilation")


def test_the_clock_runs_k_times_slow_and_sleep_waits_k_times_as_long(dilated):
    wakeups = dilation.wakeups()
    real, virtual = time.perf_counter(), dilation.clock()
    dilation.sleep(0.02)
    real_spent, virtual_spent = time.perf_counter() - real, dilation.clock() - virtual
    assert real_spent >= 0.08  # 0.02 virtual seconds, four times as many real ones
    assert virtual_spent == pytest.approx(real_spent / dilated, abs=1e-4)
    assert dilation.wakeups() == wakeups + 1


def _real(call) -> float:
    began = time.perf_counter()
    call()
    return time.perf_counter() - began


def test_a_nap_waits_its_poll_times_k(dilated):
    assert _real(lambda: transport.nap(None, 0.01)) >= 0.04


def test_a_nap_ends_at_its_deadline_on_the_virtual_clock(dilated):
    deadline = dilation.clock() + 0.005
    spent = _real(lambda: transport.nap(deadline, 1.0))
    assert 0.02 - 1e-3 <= spent < 0.5


def test_a_ring_step_sleeps_until_its_virtual_deadline(dilated):
    assert _real(lambda: ring.sleep_until(dilation.clock() + 0.01)) >= 0.04 - 1e-3


class _Request:
    """A request that completes on its third test."""

    def __init__(self) -> None:
        self.tests = 0

    def Test(self) -> bool:
        self.tests += 1
        return self.tests >= 3


def test_waiting_on_a_request_polls_k_times_slower(dilated):
    assert _real(lambda: transport.wait(_Request(), 0.01)) >= 2 * 0.04 - 1e-3


def test_the_run_file_takes_a_dilation_and_refuses_a_bad_one():
    base = {
        "iterations": 1,
        "data": {"dataset": "synthetic-logistic"},
        "model": {"kind": "logistic"},
        "scheme": {"name": "uncoded", "params": {"n": 2}},
        "optimizer": {"kind": "gd", "step": 1.0},
    }
    assert parse_config(base).runtime.dilation == 1.0
    assert parse_config(base | {"runtime": {"dilation": 4}}).runtime.dilation == 4.0
    with pytest.raises(ConfigError, match=r"runtime\.dilation: a dilation factor"):
        parse_config(base | {"runtime": {"dilation": 0.5}})


def _timer_calls(path: Path) -> list[str]:
    """Calls of ``time.sleep``, ``time.perf_counter`` or ``time.monotonic`` in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "time"
            and node.attr in ("sleep", "perf_counter", "monotonic")
        ):
            found.append(f"{path.relative_to(SRC)}:{node.lineno} time.{node.attr}")
    return found


#: timers that run before the run file is read, and so before any dilation (rank 0's data
#: preparation, the ranks' wait for it), or before the timed part, where a dilated poll would
#: only slow the start (each worker's wait for its rows, which rank 0 sends one at a time)
BEFORE_DILATION = {"train/run.py", "train/shares.py"}


def test_no_timer_of_the_runtime_goes_around_the_dilated_clock():
    offenders = [
        call
        for path in sorted((SRC / "train").rglob("*.py"))
        if str(path.relative_to(SRC)) not in BEFORE_DILATION
        for call in _timer_calls(path)
    ]
    assert not offenders, "use gradcode.dilation's clock and sleep: " + ", ".join(offenders)
