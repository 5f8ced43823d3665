"""Links with latency on the emulated cluster (issue 35, part 1): round trips against the
setting, TCP at the rate with a latency, and the delayer's CPU per packet.

Round trips: ``ping -U`` (user to user) from ``gc-node1`` to ``gc-node2``, ``--pings`` of them
10 ms apart, at each ``--latencies`` value set by ``gradcode cluster latency`` for the length of
the pings (so one cluster serves every value); a round trip crosses two ports, so it is set
against twice the latency. TCP: one stream of ``--bytes`` (``gradcode.cluster.network.probe``)
at the cluster's own latency, ``--streams`` times, with the delayer's CPU (user and system: its
verdicts forward the packets in its own context) and packets counted across them from its
status file, and both cores' load sampled meanwhile.

    gradcode cluster up --nodes 3 --rate 100mbit --latency 1ms --no-slurm
    .venv/bin/python benchmarks/link_latency.py --latencies 0.1ms 0.5ms 1ms 5ms
    gradcode cluster down
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

from gradcode.cluster.control import current_spec
from gradcode.cluster.latency import delay
from gradcode.cluster.network import namespaces, probe
from gradcode.duration import Duration

BIN = Path(sys.executable).parent


def round_trips(latency: str, pings: int) -> dict:
    """``pings`` round trips gc-node1 -> gc-node2 with every link at ``latency``."""
    spec = current_spec()
    setting = 2 * Duration.parse(latency, "--latencies").seconds * 1e3
    # one ping at a time: the next leaves after the last came back
    interval = max(0.01, 2 * setting / 1e3)
    ping = ["ping", "-U", "-n", "-c", str(pings), "-i", f"{interval:g}", "-W", "1"]
    argv = [str(BIN / "gradcode"), "cluster", "latency", "--latency", latency, "--"]
    argv += [*namespaces.enter("gc-node1"), *ping, spec.node("gc-node2").address]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=True)
    trips = sorted(float(t) for t in re.findall(r"time=([0-9.]+) ms", done.stdout))
    deciles = statistics.quantiles(trips, n=10)
    return {
        "latency": latency,
        "round_trip_setting_ms": setting,
        "pings": len(trips),
        "interval_s": interval,
        "median_ms": round(statistics.median(trips), 3),
        "p10_ms": round(deciles[0], 3),
        "p90_ms": round(deciles[-1], 3),
        "max_ms": round(trips[-1], 3),
        "median_minus_setting_ms": round(statistics.median(trips) - setting, 3),
    }


def _cpu() -> tuple[int, int]:
    """(busy, all) jiffies of all cores so far."""
    with open("/proc/stat") as handle:
        fields = [int(v) for v in handle.readline().split()[1:8]]
    return sum(fields) - fields[3] - fields[4], sum(fields)


def _counters() -> dict:
    time.sleep(1.1)  # the delayer rewrites its status every second
    status = delay.read_status()
    if status is None:
        raise SystemExit("link_latency: no delayer status: bring the cluster up with --latency")
    return status


def tcp(count: int, streams: int) -> dict:
    """``streams`` TCP streams of ``count`` bytes gc-node1 -> gc-node2 at the cluster's own
    latency; their rates and the delayer's cost."""
    spec = current_spec()
    before, cores_before = _counters(), _cpu()
    started = time.monotonic()
    rates = [
        probe.measure(spec, "gc-node1", "gc-node2", count).bits_per_second / 1e6
        for _ in range(streams)
    ]
    seconds = time.monotonic() - started
    cores_after = _cpu()
    after = _counters()
    packets = after["packets"] - before["packets"]
    user = after["cpu_user_seconds"] - before["cpu_user_seconds"]
    system = after["cpu_system_seconds"] - before["cpu_system_seconds"]
    return {
        "latency": str(spec.node("gc-node2").latency),
        "rate": str(spec.node("gc-node2").ingress),
        "mbit_per_s": [round(r, 2) for r in rates],
        "packets": packets,
        "packets_per_s": round(packets / seconds),
        "verdicts": after["verdicts"] - before["verdicts"],
        "cpu_us_per_packet": round((user + system) / packets * 1e6, 1),
        "user_us_per_packet": round(user / packets * 1e6, 1),
        "system_us_per_packet": round(system / packets * 1e6, 1),
        "delayer_share_of_a_core": round((user + system) / seconds, 3),
        "both_cores_busy": round(
            (cores_after[0] - cores_before[0]) / (cores_after[1] - cores_before[1]), 3
        ),
        "late_us_mean": after["late_us_mean"],
        "realtime": after["realtime"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latencies", nargs="*", default=["0.1ms", "0.5ms", "1ms", "5ms"])
    parser.add_argument("--pings", type=int, default=200)
    parser.add_argument("--bytes", type=int, default=20_000_000)
    parser.add_argument("--streams", type=int, default=3)
    args = parser.parse_args()
    # the machine is shared: what else ran shows in the load, beside every result
    for latency in args.latencies:
        found = round_trips(latency, args.pings)
        print(json.dumps({"round_trips": found, "load": os.getloadavg()[0]}), flush=True)
    print(json.dumps({"tcp": tcp(args.bytes, args.streams), "load": os.getloadavg()[0]}))


if __name__ == "__main__":
    main()
