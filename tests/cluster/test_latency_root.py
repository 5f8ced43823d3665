"""Links with latency on a real 3-node cluster (root only; no SLURM needed): round trips
against the setting, at the cluster's latency and during ``cluster latency``, TCP at the rate
with a latency, a killed delayer (traffic undelayed, status says so), nothing left after
``down``."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

import pytest

from gradcode.cluster import control
from gradcode.cluster.latency import delay
from gradcode.cluster.network import namespaces, probe
from gradcode.cluster.spec import build_spec
from gradcode.cluster.state import State
from tests.helpers.cluster import emulated_cluster

pytestmark = [
    pytest.mark.skipif(
        os.geteuid() != 0, reason="an emulated cluster needs root (network namespaces)"
    ),
    pytest.mark.skipif(
        shutil.which("ping") is None, reason="no ping: apt-get install iputils-ping"
    ),
    pytest.mark.serial,
]

BIN = Path(sys.executable).parent
GRADCODE = shutil.which("gradcode", path=str(BIN)) or "gradcode"
PING = ["ping", "-U", "-n", "-c", "80", "-i", "0.01", "-W", "1"]


def _round_trips(source: str, target: str) -> list[float]:
    """Round trips in ms (ping -U: user to user, no kernel shortcut) from ``source`` to the
    address of ``target``."""
    spec = control.current_spec()
    done = subprocess.run(
        [*namespaces.enter(source), *PING, spec.node(target).address],
        capture_output=True,
        text=True,
        timeout=60,
    )
    return [float(t) for t in re.findall(r"time=([0-9.]+) ms", done.stdout)]


#: what a round trip may exceed twice the latency by: the delayer's own path adds 0.15-0.3 ms
#: and a busy core more (docs/measurements/link-latency.md; CI once measured 0.335 ms at a
#: 2 ms setting), and it never takes any away
ABOVE_MS, BELOW_MS = 0.6, 0.1


def _assert_round_trip(trips: list[float], one_way_ms: float) -> None:
    """The median round trip from 0.1 ms below twice the latency to 0.6 ms or 10 % above (the
    median: a shared machine's scheduler delays some pings by milliseconds)."""
    assert len(trips) >= 70, trips
    expected = 2 * one_way_ms
    median = statistics.median(trips)
    above = max(ABOVE_MS, 0.1 * expected)
    assert expected - BELOW_MS <= median <= expected + above, (median, expected, trips)


@pytest.fixture(scope="module")
def cluster():
    yield from emulated_cluster({"nodes": 3, "rate": "100mbit", "latency": "0.5ms"})


def test_round_trips_match_the_latency(cluster):
    _assert_round_trip(_round_trips("gc-node1", "gc-node2"), 0.5)
    _assert_round_trip(_round_trips("gc-node2", "gc-node0"), 0.5)
    status = control.status()["delayer"]
    assert status["running"] and status["packets"] > 0


def test_cluster_latency_sets_5ms_during_a_command_and_puts_0_5ms_back(cluster, tmp_path):
    record = tmp_path / "latency.json"
    ping = [*namespaces.enter("gc-node1"), *PING, "10.251.0.12"]
    done = subprocess.run(
        [GRADCODE, "cluster", "latency", "--latency", "5ms", "--record", str(record), "--", *ping],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    trips = [float(t) for t in re.findall(r"time=([0-9.]+) ms", done.stdout)]
    _assert_round_trip(trips, 5.0)
    said = json.loads(record.read_text())
    assert said["stated"]["latency"] == "5ms" and said["delayer"] == "the cluster's"
    assert said["latency_restored"]["clock"] > said["latency_set"]["clock"]
    _assert_round_trip(_round_trips("gc-node1", "gc-node2"), 0.5)


def test_jitter_spreads_round_trips_within_its_bounds(cluster):
    # 1 ms +- 0.5 ms each way, uniform: round trips from 1 to 3 ms, their middle half about
    # 0.5 ms wide (the sum of two uniform delays), the median near 2 ms
    ping = [*namespaces.enter("gc-node1"), *PING, "10.251.0.12"]
    done = subprocess.run(
        [GRADCODE, "cluster", "latency", "--latency", "1ms", "--jitter", "0.5ms", "--", *ping],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    trips = [float(t) for t in re.findall(r"time=([0-9.]+) ms", done.stdout)]
    quartiles = statistics.quantiles(trips, n=4)
    assert min(trips) >= 1.0 and 2.0 - BELOW_MS <= quartiles[1] <= 2.0 + ABOVE_MS, trips
    assert 0.25 <= quartiles[2] - quartiles[0] <= 1.0, trips


def test_tcp_runs_at_the_rate_with_latency(cluster):
    # a 4 MB stream through 100 Mbit/s and 0.5 ms each way: the rate, not the latency, bounds it
    best = max(
        probe.measure(cluster, "gc-node1", "gc-node2", 4_000_000).bits_per_second for _ in range(2)
    )
    assert 0.85e8 <= best <= 1.02e8, best


def test_a_killed_delayer_leaves_the_links_undelayed_and_status_says_so(cluster):
    entry = delay.entry_of(State.load())
    os.kill(int(entry["pid"]), signal.SIGKILL)
    deadline = time.monotonic() + 5
    while delay.running(entry["pid"]) and time.monotonic() < deadline:
        time.sleep(0.02)
    trips = _round_trips("gc-node1", "gc-node2")
    assert len(trips) >= 70 and statistics.median(trips) < 0.5, trips
    status = control.status()
    assert status["delayer"]["running"] is False and "delayer" in status["missing"]
    shown = subprocess.run(
        [GRADCODE, "cluster", "status"], capture_output=True, text=True, timeout=60
    ).stdout
    assert "link delayer: DIED" in shown
    refused = subprocess.run(
        [GRADCODE, "cluster", "latency", "--latency", "1ms", "--", "true"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 2 and "died" in refused.stderr
    assert refused.stderr.strip().count("\n") == 0


def test_down_leaves_no_rule_queue_or_delayer(cluster):
    assert control.down() == []
    assert delay.leftovers() == [] and namespaces.our_namespaces() == []
    assert State.load() is None


def test_a_cluster_without_latency_gets_a_delayer_only_during_cluster_latency(tmp_path):
    if State.load() is not None:
        pytest.skip("a cluster is already up on this machine")
    control.up(build_spec({"nodes": 3, "rate": "100mbit"}), with_slurm=False)
    try:
        assert control.status()["delayer"] is None
        ping = [*namespaces.enter("gc-node1"), *PING, "10.251.0.12"]
        done = subprocess.run(
            [GRADCODE, "cluster", "latency", "--latency", "0.5ms", "--", *ping],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, done.stderr
        _assert_round_trip([float(t) for t in re.findall(r"time=([0-9.]+) ms", done.stdout)], 0.5)
        # afterwards: no delayer, no rule, round trips without latency
        assert control.status()["delayer"] is None and delay.leftovers() == []
        rules = namespaces.run(
            ["nsenter", "--net=/run/netns/gc-switch", "--", "iptables", "-S", "FORWARD"]
        )
        assert "NFQUEUE" not in rules
        assert statistics.median(_round_trips("gc-node1", "gc-node2")) < 0.5
    finally:
        control.down()
    assert delay.leftovers() == [] and namespaces.our_namespaces() == []
