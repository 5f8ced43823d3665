"""Latency in the cluster spec, the switch's queue rules and ``cluster latency``'s plan (no
root needed)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from gradcode.cluster.latency import delay, relatency
from gradcode.cluster.spec import (
    ClusterSpec,
    ClusterSpecError,
    build_spec,
    parse_node_latency,
)
from gradcode.duration import Duration
from gradcode.livecluster import delayer, files, links
from tests.helpers.cluster import as_if_on_node

MS = 1_000_000


def _delays(spec: ClusterSpec) -> list[tuple[int, int]]:
    return [(n.latency.nanoseconds, n.jitter.nanoseconds) for n in spec.nodes]


def test_no_latency_by_default_and_no_delayer():
    spec = build_spec({"nodes": 3})
    assert _delays(spec) == [(0, 0)] * 3 and not spec.delayed


def test_latency_for_the_workers_the_master_and_single_nodes():
    spec = build_spec(
        {
            "nodes": 4,
            "latency": "1ms",
            "jitter": "100us",
            "master_latency": "2ms",
            "node_latency": {"gc-node2": "5ms", "gc-node3": {"jitter": "0.5ms"}},
        }
    )
    assert _delays(spec) == [
        (2 * MS, MS // 10),
        (MS, MS // 10),
        (5 * MS, MS // 10),
        (MS, MS // 2),
    ]
    assert spec.delayed
    # the state file keeps them, and an older state file without them reads as none
    assert ClusterSpec.from_dict(spec.as_dict()) == spec
    old = spec.as_dict()
    for node in old["nodes"]:
        del node["latency_ns"], node["jitter_ns"]
    assert _delays(ClusterSpec.from_dict(old)) == [(0, 0)] * 4


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"latency": "1"}, "latency: '1' has no unit"),
        ({"latency": 2}, "latency: 2 has no unit"),
        ({"latency": "1ms", "jitter": "2ms"}, "jitter: jitter 2ms exceeds the latency 1ms"),
        ({"jitter": "1us"}, "jitter: jitter 1us exceeds the latency 0ms"),
        ({"latency": "2s"}, "latency: '2s' is longer than 1s"),
        ({"master_latency": "-1ms"}, "master_latency: a duration must be >= 0"),
        ({"node_latency": {"gc-node9": "1ms"}}, "node_latency: no node 'gc-node9'"),
        ({"node_latency": {"gc-node1": {"delay": "1ms"}}}, "expected latency and/or jitter"),
        (
            {"node_latency": {"gc-node1": {"latency": "1ms", "jitter": "3ms"}}},
            "node_latency.gc-node1: jitter 3ms exceeds the latency 1ms",
        ),
        ({"node_latency": "1ms"}, "node_latency must map node names to latencies"),
    ],
)
def test_bad_latencies_are_refused_in_one_line(options, says):
    with pytest.raises(ClusterSpecError) as error:
        build_spec({"nodes": 3, **options})
    assert says in str(error.value) and "\n" not in str(error.value)


def test_node_latency_option():
    assert parse_node_latency("gc-node3=2ms") == ("gc-node3", {"latency": "2ms"})
    assert parse_node_latency("gc-node3=2ms/0.5ms") == (
        "gc-node3",
        {"latency": "2ms", "jitter": "0.5ms"},
    )
    for bad in ("gc-node3", "gc-node3=", "gc-node3=1ms/1ms/1ms", "gc-node3=1"):
        with pytest.raises(ClusterSpecError):
            parse_node_latency(bad)


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--latency", "1"], "--latency: '1' has no unit"),
        (["--latency", "1ms", "--jitter", "0.2"], "--jitter: '0.2' has no unit"),
        (["--latency", "1ms", "--jitter", "2ms"], "--jitter: jitter 2ms exceeds"),
        (["--master-latency", "1 ms"], "--master-latency: expected a duration like 1ms"),
        (["--node-latency", "gc-node1=1"], "--node-latency gc-node1=1: '1' has no unit"),
    ],
)
def test_the_cli_refuses_a_bad_latency_in_one_line_naming_the_option(argv, says):
    done = subprocess.run(
        [sys.executable, "-m", "gradcode", "cluster", "up", *argv],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 2 and done.stderr.strip().count("\n") == 0, done.stderr
    assert says in done.stderr


def test_each_port_queues_to_its_nodes_queue_with_bypass():
    spec = build_spec({"nodes": 3, "latency": "1ms"})
    argv = delay.rule(spec, 2, "-A")
    assert argv[:3] == ["nsenter", "--net=/run/netns/gc-switch", "--"]
    assert argv[3:] == [
        "iptables", "-w", "-A", "FORWARD", "-m", "physdev", "--physdev-out", "gc-n2",
        "-j", "NFQUEUE", "--queue-num", "2", "--queue-bypass",
    ]  # fmt: skip
    assert delay.delays(spec)[1] == (Duration(MS), Duration(0))


def test_a_latency_plan_sets_the_nodes_and_puts_the_clusters_own_back():
    spec = build_spec({"nodes": 3, "latency": "1ms", "node_latency": {"gc-node2": "2ms"}})
    plan = relatency.plan_latency(spec, "5ms", "1ms", master_latency="2ms")
    assert {q: (a.nanoseconds, b.nanoseconds) for q, (a, b) in plan.during.items()} == {
        0: (2 * MS, MS),
        1: (5 * MS, MS),
        2: (5 * MS, MS),
    }
    assert plan.after == delay.delays(spec)
    only = relatency.plan_latency(spec, "5ms", nodes=["gc-node2"])
    assert set(only.during) == {2}


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("5",), "--latency: '5' has no unit"),
        (("1ms", "2ms"), "--jitter: jitter 2ms exceeds the latency 1ms"),
        (("1ms", None, "1us", "1ms"), "--master-jitter: jitter 1ms exceeds the latency 1us"),
    ],
)
def test_a_bad_latency_plan_is_one_line(args, says):
    spec = build_spec({"nodes": 3})
    with pytest.raises(relatency.LatencyError) as error:
        relatency.plan_latency(spec, *args)
    assert says in str(error.value) and "\n" not in str(error.value)


def test_a_mismatch_between_stated_and_actual_latency_names_both():
    spec = build_spec({"nodes": 3, "latency": "1ms"})
    assert spec.latency_mismatch(0.001) is None
    assert spec.latency_mismatch(0.0) == (
        "network.links.latency states 0ms, but the emulated cluster that is up has gc-node1's "
        "latency at 1ms; 2 more nodes differ"
    )
    one = build_spec({"nodes": 3, "latency": "1ms", "master_latency": "2ms"})
    assert one.latency_mismatch(0.001) == (
        "network.links.latency states 1ms, but the emulated cluster that is up has "
        "gc-node0's latency at 2ms"
    )


def _cluster_up(monkeypatch, tmp_path, spec: ClusterSpec, delayer_pid: int | None) -> None:
    from gradcode.cluster import state

    monkeypatch.setattr(files, "RUN_DIR", tmp_path)
    as_if_on_node(monkeypatch, tmp_path / "netns")
    resources = [] if delayer_pid is None else [{"kind": "delayer", "pid": delayer_pid}]
    state.State({"spec": spec.as_dict(), "complete": True, "resources": resources}).save()


def test_runs_see_the_clusters_latency_and_a_dead_delayer(monkeypatch, tmp_path):
    from gradcode.livecluster.links import stated_links_mismatch
    from gradcode.rate import Rate

    rate = Rate.parse("100mbit", "rate")
    spec = build_spec({"nodes": 2, "rate": "100mbit", "latency": "0.5ms"})
    _cluster_up(monkeypatch, tmp_path, spec, delayer_pid=1)  # pid 1 is no delayer: died
    assert stated_links_mismatch(rate, rate, 0.0005) is None
    said = stated_links_mismatch(rate, rate, 0.001)
    assert said is not None and "states 1ms" in said and "at 500us" in said
    assert stated_links_mismatch(rate, rate) is None  # latency not stated: not compared
    record = links.links_record()
    assert record["delayer"] == "died" and record["delayer_last_alive"] is None  # no status
    assert record["nodes"][1] == {
        "name": "gc-node1",
        "egress": "100mbit",
        # tbf's bucket at 100 Mbit/s: 0.5 ms of the rate (more than four frames)
        "egress_bucket": 6250,
        "ingress": "100mbit",
        "latency": "500us",
        "jitter": "0ms",
    }
    _cluster_up(monkeypatch, tmp_path, build_spec({"nodes": 2}), delayer_pid=None)
    assert links.links_record()["delayer"] == "none"
    assert links.links_record()["delayer_last_alive"] is None


def test_runs_see_the_latency_in_force_under_cluster_latency(monkeypatch, tmp_path):
    # gradcode cluster latency changes the delayer's setting, not the state file: a run inside
    # it records, and is compared with, what the delayer holds now
    from gradcode.rate import Rate

    rate = Rate.parse("100mbit", "rate")
    spec = build_spec({"nodes": 2, "rate": "100mbit", "latency": "0.5ms"})
    _cluster_up(monkeypatch, tmp_path, spec, delayer_pid=4242)
    monkeypatch.setattr(links, "running", lambda pid: pid == 4242)
    delay.write_config(
        2, {0: (Duration(2_000_000), Duration(0)), 1: (Duration(2_000_000), Duration(100_000))}
    )
    record = links.links_record()
    assert record["delayer"] == "running"
    assert [(n["latency"], n["jitter"]) for n in record["nodes"]] == [
        ("2ms", "0ms"),
        ("2ms", "100us"),
    ]
    assert links.stated_links_mismatch(rate, rate, 0.002) is None
    said = links.stated_links_mismatch(rate, rate, 0.0005)
    assert said is not None and "states 500us" in said and "at 2ms" in said


def test_in_a_slurm_job_only_the_jobs_nodes_count(monkeypatch, tmp_path):
    # gradcode cluster latency in a job sets its nodes only: the others keep the cluster's own
    from gradcode.rate import Rate

    rate = Rate.parse("100mbit", "rate")
    spec = build_spec({"nodes": 4, "rate": "100mbit"})
    _cluster_up(monkeypatch, tmp_path, spec, delayer_pid=4242)
    monkeypatch.setattr(links, "running", lambda pid: pid == 4242)
    one = Duration(1_000_000)
    delay.write_config(2, {0: (one, Duration(0)), 1: (one, Duration(0)), 2: (Duration(0),) * 2})
    monkeypatch.setattr(links, "job_nodes", lambda: ["gc-node0", "gc-node1"])
    assert links.stated_links_mismatch(rate, rate, 0.001) is None
    assert [n["name"] for n in links.links_record()["nodes"]] == ["gc-node0", "gc-node1"]
    monkeypatch.setattr(links, "job_nodes", lambda: None)
    said = links.stated_links_mismatch(rate, rate, 0.001)
    assert said is not None and "gc-node2's latency at 0ms" in said


def test_no_latency_asked_on_a_cluster_without_one_starts_no_delayer(monkeypatch, tmp_path):
    spec = build_spec({"nodes": 2, "rate": "100mbit"})
    _cluster_up(monkeypatch, tmp_path, spec, delayer_pid=None)
    from gradcode.cluster import state

    started = []
    monkeypatch.setattr(delay, "start", lambda *args, **kwargs: started.append(args))
    plan = relatency.plan_latency(spec, "0ms")
    record = tmp_path / "latency.json"
    status = relatency.run_latency(plan, state.State.load(), ["true"], record)
    assert status == 0 and not started
    assert "none" in __import__("json").loads(record.read_text())["delayer"]


@pytest.mark.parametrize("module", [delay.MODULE, *delayer.FORMER_MODULES])
def test_the_delayer_is_found_by_its_module_also_under_its_former_name(module):
    """A cluster brought up before the delayer's module moved is still brought down."""
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", module])
    try:
        deadline = time.monotonic() + 10
        while not delay.running(sleeper.pid) and time.monotonic() < deadline:
            time.sleep(0.05)  # until the child has exec'd
        assert delay.running(sleeper.pid)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert not delay.running(sleeper.pid) and not delay.running(os.getpid())
