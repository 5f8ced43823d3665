"""Runs on real links (``network:``): every rank's node and transport are recorded, every
message's measured transfer time is logged, and no communication delay is injected."""

from __future__ import annotations

import os

import pytest

from gradcode.train.protocol import H
from tests.helpers.cluster import as_if_on_node, state_of_a_cluster_up
from tests.helpers.mpi import base_run, run_config, write_run

pytestmark = pytest.mark.mpi

NETWORK = {"links": {"rate": "100mbit", "master_rate": "1gbit"}}


def test_a_run_on_links_records_nodes_transport_and_transfer_times(tmp_path, logistic_data):
    run = base_run(
        logistic_data,
        scheme={"name": "frc", "params": {"n": 4, "s": 1}},
        stragglers={"model": "fixed", "params": {"compute": 0.01}},
        network=NETWORK,
    )
    job = run_config(tmp_path, run, ranks=5).check()
    summary = job.summary()
    assert summary["communication"]["mode"] == "links"
    assert summary["communication"]["injected"] is False
    assert summary["communication"]["links"]["rate"] == 12.5e6
    assert summary["communication"]["links"]["master_rate"] == 125e6
    ranks = summary["ranks"]
    assert [r["rank"] for r in ranks] == [0, 1, 2, 3, 4]
    netns = os.stat("/proc/self/ns/net").st_ino
    for record in ranks:
        assert record["host"] and record["netns"] == netns and record["pid"] > 0
        assert record["node"] == 0  # one host, one namespace: one node
        assert len(record["shares_node_with"]) == 4
        assert record["transport"]["library"]["version"].startswith("MPICH")
        assert "netmod" in record["transport"] and "nolocal" in record["transport"]
    assert [r["path_to_master"] for r in ranks] == ["self"] + ["shm"] * 4
    assert len(summary["nodes"]) == 1 and summary["nodes"][0]["ranks"] == [0, 1, 2, 3, 4]
    assert summary["transfer_timing"]["comparable"] is True
    assert summary["transfer_timing"]["method"] == "sender-timestamp"
    for record in job.log():
        assert record["injected"]["comm"] == [0.0] * 4
        for message in record["messages"]:
            assert message["injected_comm"] == 0.0
            assert message["bytes"] > 0
            # sent and received on one clock: a transfer time, short on one host
            assert 0 <= message["transfer"] < 0.5
            assert message["transfer"] >= message["received"] - message["sent"]
            # no single port: a message counts when it is in memory
            assert message["arrival"] == message["received"]


def test_a_run_whose_links_differ_from_the_cluster_that_is_up_says_so(
    tmp_path, logistic_data, monkeypatch
):
    # a cluster up (nothing is made: the job only reads its state file), and the job's rank 0
    # on gc-node0 as far as it can tell
    state_of_a_cluster_up(
        monkeypatch, tmp_path / "cluster", {"nodes": 5, "rate": "100mbit", "master_rate": "1gbit"}
    )
    as_if_on_node(monkeypatch, tmp_path / "netns")
    # what a run file's 100mbps meant before: 100 megabytes per second
    links = {"links": {"rate": "100MB/s", "master_rate": "1gbit"}}
    run = base_run(logistic_data, scheme={"name": "frc", "params": {"n": 4, "s": 1}}, network=links)
    job = run_config(tmp_path, run, ranks=5).check()
    warnings = [line for line in job.result.stderr.splitlines() if "warning" in line]
    assert warnings == [
        f"gradcode.train: warning: {job.run_file}: network.links.rate states 800mbit, but the "
        "emulated cluster that is up has gc-node1's egress at 100mbit; 7 more link directions "
        "differ"
    ]
    assert job.summary()["communication"]["links"]["rate"] == 100e6  # what the file states


def test_a_tree_on_links_logs_its_root_transfers(tmp_path, logistic_data):
    run = base_run(
        logistic_data,
        iterations=3,
        # s = 0: the root waits for both subtrees, so both inner nodes hear from both children
        # every iteration; with s = 1 a loaded machine (CI's parallel session at nice 19) once
        # left node 0 to hear nothing before the root had its three iterations from node 1
        scheme={"name": "coded-reduce", "params": {"n": 2, "L": 2, "s": 0}},
        network={},
    )
    job = run_config(tmp_path, run, ranks=7).check()
    summary = job.summary()
    assert summary["communication"] == {"mode": "links", "injected": False}
    for record in job.log():
        assert record["messages"]
        assert all(m["transfer"] >= 0 for m in record["messages"])
    # the two inner nodes (0 and 1) measured their children's messages
    relays = {relay["node"]: relay for relay in summary["relay_transfers"]}
    assert set(relays) == {0, 1}
    for relay in relays.values():
        assert relay["messages"] == 2 * 3  # both children, every iteration
        assert relay["bytes"] > 0 and 0 <= relay["mean"] <= relay["max"] < 0.5


def test_a_ring_on_links_times_its_steps(tmp_path, logistic_data):
    run = base_run(
        logistic_data,
        iterations=3,
        scheme={"name": "ring-allreduce", "params": {"n": 3, "implementation": "explicit"}},
        network=NETWORK,
    )
    job = run_config(tmp_path, run, ranks=4).check()
    for record in job.log():
        for message in record["messages"]:
            assert message["injected_comm"] == 0.0 and message["port_wait"] == 0.0
            assert 0 < message["step_time_max"] <= message["step_time"]
            # 2 (n - 1) steps of one of n chunks of the 16 features (5 or 6 floats)
            assert 4 * 5 * 8 <= message["step_bytes"] <= 4 * 6 * 8


def test_check_prints_the_links_and_their_prediction(tmp_path, logistic_data, capsys):
    from tests.train.test_cli import invoke

    run = base_run(
        logistic_data,
        scheme={"name": "frc", "params": {"n": 4, "s": 1}},
        network={"links": {"rate": "1kB/s", "latency": "500ms"}},
    )
    assert invoke(["train", "check", str(write_run(tmp_path / "links.yaml", run))]) == 0
    out = capsys.readouterr().out
    assert "real links, rate 8kbit (1000 B/s), master 8kbit (1000 B/s)" in out
    nbytes = 8 * (16 + H)  # 16 features and the runtime's header
    assert f"a result message ({nbytes} B) takes {(0.5 + nbytes / 1000) * 1e3:.3g} ms" in out
    assert f"{(0.5 + 4 * nbytes / 1000) * 1e3:.3g} ms when all 4 arrive together" in out
    run["network"] = {}
    assert invoke(["train", "check", str(write_run(tmp_path / "real.yaml", run))]) == 0
    assert "real links (parameters not stated)" in capsys.readouterr().out
