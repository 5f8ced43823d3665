"""The straggling link's scheduler (gradcode.cluster.faults.cut) without root: the plan's checks,
the ip command, the triggers and that the link is always put back."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest

from gradcode.cluster.faults.cut import CutError, complete_lines, link_command, plan_cut, run_cut
from tests.helpers.runlog import log_writer


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"seconds": 0, "after": 1}, "--for"),
        ({"seconds": float("nan"), "after": 1}, "--for"),
        ({"seconds": 1}, "exactly one"),
        ({"seconds": 1, "after": 1, "at_iteration": 2, "log": "x"}, "exactly one"),
        ({"seconds": 1, "after": -1}, "--after"),
        ({"seconds": 1, "after": 1, "log": "x"}, "--log goes with"),
        ({"seconds": 1, "at_iteration": 0, "log": "x"}, "--at-iteration"),
        ({"seconds": 1, "at_iteration": True, "log": "x"}, "--at-iteration"),
        ({"seconds": 1, "at_iteration": 3}, "needs --log"),
    ],
)
def test_a_bad_plan_is_one_line_naming_the_option(kwargs, message):
    with pytest.raises(CutError, match=message):
        plan_cut("gc-node3", **kwargs)
    with pytest.raises(CutError, match="NODE"):
        plan_cut("", 1.0, after=0)


def test_the_link_command_and_the_log_count(tmp_path):
    assert link_command("gc-node2", "down") == [
        "ip",
        "-n",
        "gc-node2",
        "link",
        "set",
        "gc-veth",
        "down",
    ]
    with pytest.raises(ValueError):
        link_command("gc-node2", "sideways")
    log = tmp_path / "log.jsonl"
    assert complete_lines(log) == 0
    log.write_text('{"iteration": 0}\n{"iteration": 1}\n{"iter')
    assert complete_lines(log) == 2


def test_cut_at_an_iteration_during_a_command_records_both_moments(tmp_path):
    log = tmp_path / "log.jsonl"
    calls = []
    record = tmp_path / "cut.json"
    status = run_cut(
        plan_cut("gc-node3", 0.1, at_iteration=3, log=log),
        log_writer(log),
        record,
        set_link=lambda node, state: calls.append((node, state)),
    )
    assert status == 0
    assert calls == [("gc-node3", "down"), ("gc-node3", "up")]
    done = json.loads(record.read_text())
    assert done["down"]["log_lines"] >= 3
    assert done["up"]["clock"] - done["down"]["clock"] >= 0.1
    assert done["trigger"] == {"at_iteration": 3, "log": str(log)}
    assert done["returncode"] == 0


def test_a_command_that_ends_first_is_not_cut_and_its_status_is_returned(tmp_path):
    calls = []
    status = run_cut(
        plan_cut("gc-node1", 1.0, at_iteration=5, log=tmp_path / "never.jsonl"),
        [sys.executable, "-c", "raise SystemExit(3)"],
        tmp_path / "cut.json",
        set_link=lambda node, state: calls.append(state),
    )
    assert status == 3 and calls == []
    assert "not_cut" in json.loads((tmp_path / "cut.json").read_text())


def test_the_link_goes_back_up_when_setting_it_fails_midway(tmp_path):
    calls = []

    def flaky(node, state):
        calls.append(state)
        if state == "down":
            raise CutError("ip failed")

    with pytest.raises(CutError):
        run_cut(plan_cut("gc-node1", 5.0, after=0), (), tmp_path / "cut.json", set_link=flaky)
    assert calls == ["down", "up"]


def test_sigterm_puts_the_link_back_and_is_passed_on(tmp_path):
    record, cut = tmp_path / "cut.json", tmp_path / "cut"
    script = (
        "import pathlib, sys\n"
        "from gradcode.cluster.faults.cut import plan_cut, run_cut\n"
        "calls = []\n"
        "def set_link(node, state):\n"
        "    calls.append(state)\n"
        "    pathlib.Path(sys.argv[2]).write_text(state)\n"
        "status = run_cut(plan_cut('gc-node1', 30.0, after=0), "
        "[sys.executable, '-c', 'import time; time.sleep(30)'], sys.argv[1], "
        "set_link=set_link)\n"
        "print(calls, status)\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", script, str(record), str(cut)], stdout=subprocess.PIPE, text=True
    )
    # A fixed sleep raced the import on a loaded machine (CI's parallel session): SIGTERM
    # came before the handler and ended the process unrecorded.
    deadline = time.monotonic() + 60
    while not (cut.exists() and cut.read_text() == "down") and time.monotonic() < deadline:
        time.sleep(0.05)
    assert cut.exists() and cut.read_text() == "down", "the link was never cut in 60 s"
    process.send_signal(signal.SIGTERM)
    out, _ = process.communicate(timeout=20)
    assert "['down', 'up']" in out
    done = json.loads(record.read_text())
    assert done["interrupted"] and done["up"] is not None
