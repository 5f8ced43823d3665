"""The links at another rate during a command (gradcode.cluster.network.rerate) without touching a
namespace: every ``tc`` call goes to a recorder (``namespaces.run`` is replaced), the state file
to a temporary folder. The checks, which ``tc`` commands are run for which node, and that the
cluster's own rates always come back."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest

from gradcode.cli import main
from gradcode.cluster.network import namespaces, rerate
from gradcode.cluster.network.namespaces import ClusterError, limit_command, tbf
from gradcode.cluster.network.rerate import RateError, job_nodes, plan_rates, run_rates
from gradcode.cluster.spec import build_spec
from gradcode.errors import UserError
from gradcode.livecluster import files
from gradcode.rate import Rate

#: a command that exits with status 3
EXIT_3 = [sys.executable, "-c", "raise SystemExit(3)"]


@pytest.fixture(autouse=True)
def calls(monkeypatch, tmp_path):
    """Every ``tc`` argv the code would run (nothing is run); no state file but one in
    ``tmp_path``, whatever cluster is up on this machine."""
    made: list[list[str]] = []
    monkeypatch.setattr(namespaces, "run", lambda argv, **_: made.append(list(argv)) or "")
    monkeypatch.setattr(files, "RUN_DIR", tmp_path / "run")
    monkeypatch.delenv("SLURM_JOB_NODELIST", raising=False)
    return made


def _spec():
    # gc-node2 receives unlimited: its ingress has no qdisc, and gets none back
    return build_spec(
        {
            "nodes": 3,
            "rate": "100mbit",
            "master_rate": "200mbit",
            "node_rates": {"gc-node2": {"ingress": "none"}},
        }
    )


def _egress(node, bits):
    rate = Rate.from_bits(bits)
    return ["tc", "-n", node, "qdisc", "replace", "dev", "gc-veth", "root", *tbf(rate)]


def _ingress(port, bits):
    rate = Rate.from_bits(bits)
    return ["tc", "-n", "gc-switch", "qdisc", "replace", "dev", port, "root", *tbf(rate)]


DELETE_N2_INGRESS = ["tc", "-n", "gc-switch", "qdisc", "del", "dev", "gc-n2", "root"]


def test_the_limit_commands_are_those_up_makes():
    node = _spec().node("gc-node1")
    assert limit_command(node, "egress", Rate.from_bits(10**8)) == _egress("gc-node1", 10**8)
    assert limit_command(node, "ingress", Rate.from_bits(10**8)) == _ingress("gc-n1", 10**8)
    assert limit_command(node, "egress", None) == [
        *["tc", "-n", "gc-node1", "qdisc", "del", "dev", "gc-veth", "root"]
    ]
    with pytest.raises(ValueError, match="direction"):
        limit_command(node, "sideways", Rate.from_bits(10**8))


@pytest.mark.parametrize(
    ("rate", "master", "message"),
    [
        ("fast", None, "--rate: expected a rate like 100mbit"),
        ("none", None, "--rate: a rate like 100mbit"),
        ("0", None, "--rate: write none for an unlimited link"),
        ("100mbps", None, "--rate: '100mbps' is ambiguous: write 100mbit"),
        ("10mbit", "100", "--master-rate: '100' has no unit"),
        ("1kbit", None, "--rate: '1kbit' is below 8kbit"),
        ("10mbit", "-5", "--master-rate"),
        ("10mbit", "none", "--master-rate: a rate like 100mbit"),
    ],
)
def test_a_bad_rate_is_one_line_naming_the_option(rate, master, message):
    with pytest.raises(RateError, match=message):
        plan_rates(_spec(), rate, master)


def test_the_plan_sets_every_node_both_ways_and_restores_the_clusters_own_rates():
    spec = _spec()
    plan = plan_rates(spec, "25mbit", "50mbit")
    assert (plan.rate, plan.master_rate) == (Rate.from_bits(25 * 10**6), Rate.from_bits(5 * 10**7))
    assert [limit.command(spec) for limit in plan.during] == [
        _egress("gc-node0", 50 * 10**6),
        _ingress("gc-n0", 50 * 10**6),
        _egress("gc-node1", 25 * 10**6),
        _ingress("gc-n1", 25 * 10**6),
        _egress("gc-node2", 25 * 10**6),
        _ingress("gc-n2", 25 * 10**6),
    ]
    assert [limit.command(spec) for limit in plan.after] == [
        DELETE_N2_INGRESS,
        _egress("gc-node2", 10**8),
        _ingress("gc-n1", 10**8),
        _egress("gc-node1", 10**8),
        _ingress("gc-n0", 2 * 10**8),
        _egress("gc-node0", 2 * 10**8),
    ]
    # the master's rate defaults to the workers'
    assert {limit.rate for limit in plan_rates(spec, "3125kB/s").during} == {
        Rate.from_bits(25 * 10**6)
    }


def test_the_command_runs_between_setting_and_restoring_and_its_status_is_returned(calls, tmp_path):
    spec = _spec()
    plan = plan_rates(spec, "25mbit")
    seen = tmp_path / "seen"
    # the command sees the rates set: every set call is made before it starts
    command = [
        sys.executable,
        "-c",
        f"open({str(seen)!r}, 'w').write('ran'); raise SystemExit(3)",
    ]
    record = tmp_path / "deep" / "rate.json"
    assert run_rates(plan, command, record) == 3
    assert seen.read_text() == "ran"
    assert calls == [
        *(limit.command(spec) for limit in plan.during),
        *(limit.command(spec) for limit in plan.after),
    ]
    done = json.loads(record.read_text())
    assert done["returncode"] == 3 and done["stated"]["rate"] == "25mbit"
    assert done["rate"] == done["set"][-1]["rate"] == 25 * 10**6  # bits per second, as before
    assert [r["command"] for r in done["set"]] == [" ".join(c) for c in calls[:6]]
    assert done["restored"][0] == {
        "node": "gc-node2",
        "direction": "ingress",
        "rate": None,
        "stated": "unlimited",
        "command": " ".join(DELETE_N2_INGRESS),
    }
    clocks = [done[k]["clock"] for k in ("started", "rates_set", "rates_restored")]
    assert clocks == sorted(clocks)
    with pytest.raises(RateError, match="give the command"):
        run_rates(plan, [])


def test_a_failure_while_setting_restores_only_what_was_changed(monkeypatch, calls, tmp_path):
    spec = _spec()
    plan = plan_rates(spec, "25mbit")

    def flaky(argv, **_):
        calls.append(list(argv))
        if len(calls) == 3:
            raise ClusterError("tc failed")
        return ""

    monkeypatch.setattr(namespaces, "run", flaky)
    with pytest.raises(ClusterError, match="tc failed"):
        run_rates(plan, EXIT_3, tmp_path / "rate.json")
    # two set, the third failed (replace is atomic: the old qdisc stays), those two restored
    assert calls[3:] == [plan.after[-2].command(spec), plan.after[-1].command(spec)]
    done = json.loads((tmp_path / "rate.json").read_text())
    assert len(done["set"]) == 2 and len(done["restored"]) == 2 and "rates_set" not in done


def test_a_failed_restore_tries_every_other_direction_then_says_so(monkeypatch, calls, tmp_path):
    spec = _spec()
    plan = plan_rates(spec, "25mbit")

    def flaky(argv, **_):
        calls.append(list(argv))
        if list(argv) == DELETE_N2_INGRESS:
            raise ClusterError("tc qdisc del failed")
        return ""

    monkeypatch.setattr(namespaces, "run", flaky)
    with pytest.raises(RateError, match="could not restore 1 of the cluster's rates"):
        run_rates(plan, EXIT_3, tmp_path / "rate.json")
    assert len(calls) == 12
    done = json.loads((tmp_path / "rate.json").read_text())
    assert len(done["restored"]) == 5 and done["restore_failed"] and done["returncode"] == 3


def test_in_a_slurm_job_only_its_own_nodes_change(monkeypatch, calls):
    assert job_nodes({}) is None and calls == []
    monkeypatch.setattr(namespaces, "run", lambda argv, **_: calls.append(argv) or "gc-node2\n")
    assert job_nodes({"SLURM_JOB_NODELIST": "gc-node2"}) == ["gc-node2"]
    assert calls == [["scontrol", "show", "hostnames", "gc-node2"]]
    spec = _spec()
    plan = plan_rates(spec, "25mbit", "50mbit", ["gc-node2"])
    assert [limit.command(spec) for limit in plan.after] == [
        DELETE_N2_INGRESS,
        _egress("gc-node2", 10**8),
    ]
    # in the cluster's order however SLURM lists them; the master's at its own rate
    plan = plan_rates(spec, "25mbit", "50mbit", ["gc-node2", "gc-node0"])
    assert [(lim.node, lim.rate) for lim in plan.during] == [
        *[("gc-node0", Rate.from_bits(50 * 10**6))] * 2,
        *[("gc-node2", Rate.from_bits(25 * 10**6))] * 2,
    ]
    with pytest.raises(UserError, match="no node 'gc-node7'"):
        plan_rates(spec, "25mbit", None, ["gc-node7"])
    monkeypatch.setattr(namespaces, "run", lambda argv, **_: "")
    with pytest.raises(RateError, match="lists no node"):
        job_nodes({"SLURM_JOB_NODELIST": "gc-node[9]"})


def test_sigterm_is_passed_on_and_the_rates_come_back(tmp_path):
    record, started = tmp_path / "rate.json", tmp_path / "started"
    script = (
        "import sys\n"
        "from gradcode.cluster.network import namespaces\n"
        "from gradcode.cluster.network.rerate import plan_rates, run_rates\n"
        "from gradcode.cluster.spec import build_spec\n"
        "calls = []\n"
        "namespaces.run = lambda argv, **_: calls.append(argv[4]) or ''\n"
        "plan = plan_rates(build_spec({'nodes': 2, 'rate': '100mbit'}), '25mbit')\n"
        "sleeper = 'import sys, time; open(sys.argv[1], \"w\").close(); time.sleep(30)'\n"
        "status = run_rates(plan, [sys.executable, '-c', sleeper, sys.argv[2]], sys.argv[1])\n"
        "print(calls, status)\n"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", script, str(record), str(started)],
        stdout=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while not started.exists() and time.monotonic() < deadline:  # the rates set, CMD running
        time.sleep(0.05)
    process.send_signal(signal.SIGTERM)
    out, _ = process.communicate(timeout=20)
    assert out.split("]")[0].count("replace") == 8  # 4 set, 4 restored
    assert out.split("]")[1].strip() == str(128 + signal.SIGTERM)
    done = json.loads(record.read_text())
    assert done["interrupted"] and len(done["restored"]) == 4


def _up(tmp_path, spec):
    """A state file as ``up`` leaves it, in the temporary run folder."""
    (tmp_path / "run").mkdir()
    document = {"spec": spec.as_dict(), "slurm": True, "complete": True, "resources": []}
    (tmp_path / "run" / "state.json").write_text(json.dumps(document))


def test_the_command_line(monkeypatch, calls, tmp_path, capsys):
    monkeypatch.setattr(namespaces, "require_privileges", lambda: None)
    argv = ["cluster", "rate", "--rate", "25mbit", "--master-rate", "50mbit"]
    assert main([*argv, "--", *EXIT_3]) == 2
    assert "no emulated cluster is up" in capsys.readouterr().err
    spec = _spec()
    _up(tmp_path, spec)
    assert main(["cluster", "rate", "--rate", "fast", "--", "true"]) == 2
    assert "--rate: expected a rate" in capsys.readouterr().err
    assert main([*argv, "--"]) == 2
    assert "give the command to run after --" in capsys.readouterr().err
    assert calls == []
    record = tmp_path / "rate.json"
    assert main([*argv, "--record", str(record), "--", *EXIT_3]) == 3
    plan = rerate.plan_rates(spec, "25mbit", "50mbit")
    assert calls == [limit.command(spec) for limit in (*plan.during, *plan.after)]
    assert json.loads(record.read_text())["stated"]["master_rate"] == "50mbit"
    # inside a SLURM job on gc-node1 only: scontrol lists it, its link alone changes
    calls.clear()
    monkeypatch.setenv("SLURM_JOB_NODELIST", "gc-node1")
    monkeypatch.setattr(
        namespaces, "run", lambda argv, **_: calls.append(argv) or "gc-node1\n" * (argv[0] != "tc")
    )
    assert main([*argv, "--", *EXIT_3]) == 3
    assert calls[0][0] == "scontrol" and len(calls) == 5
    assert {argv[2] for argv in calls[1:]} == {"gc-node1", "gc-switch"}
    assert {argv[6] for argv in calls[1:]} == {"gc-veth", "gc-n1"}
