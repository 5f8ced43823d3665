"""How much traffic the emulated cluster's links can carry at once on this machine (issue 20,
part 2).

The link-limited floor (``gradcode.runlogs.timings.link_floor``) treats moving bytes as free of
CPU. On the emulated cluster the kernel moves every packet through two veth pairs, the bridge
and two tbf limits, on the same cores the ranks run on. A scattered model keeps every worker's
link busy both ways at once (each worker forwards its chunk to all others while receiving
theirs), so the question is whether ``n`` links at their rate, at once, fit in the cores.

Here ``k`` workers (``gc-node1`` ... ``gc-nodek``) each send one long TCP stream to the next
(a ring: every link carries one stream out and one in, nothing but the kernel and one small
sender and receiver per node, ``gradcode.cluster.network.probe``); each stream's rate is timed by
its receiver, and the share of both cores busy (``/proc/stat``, user and system with interrupts:
the kernel's packet work) is sampled for a second in the middle of the streams.

    gradcode cluster up --nodes 21 --rate 100mbit --master-rate 200mbit --no-slurm
    .venv/bin/python benchmarks/network_capacity.py --streams 2 5 10 20
    gradcode cluster down
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time

from gradcode.cluster.control import current_spec
from gradcode.cluster.network import namespaces
from gradcode.cluster.spec import limit_bits

PORT = 5202


def _cpu() -> tuple[int, int, int]:
    """(user, system with interrupts, all) jiffies of all cores so far."""
    with open("/proc/stat") as handle:
        fields = [int(v) for v in handle.readline().split()[1:8]]
    user, nice, system, _idle, _iowait, irq, softirq = fields
    return user + nice, system + irq + softirq, sum(fields)


def _probe(node: str, *args: str, **popen) -> subprocess.Popen:
    argv = [*namespaces.enter(node), sys.executable, "-m", "gradcode.cluster.network.probe", *args]
    return subprocess.Popen(argv, text=True, **popen)


def ring(streams: int, count: int) -> dict:
    """``streams`` workers each send ``count`` bytes to the next; rates and the cores' load."""
    spec = current_spec()
    if len(spec.nodes) < streams + 1:
        raise SystemExit(f"network_capacity: {streams} streams need {streams + 1} nodes")
    nodes = spec.nodes[1 : streams + 1]
    receivers, senders = [], []
    try:
        for node in nodes:
            receiver = _probe(node.name, "recv", node.address, str(PORT), stdout=subprocess.PIPE)
            receivers.append(receiver)
            if receiver.stdout is None or receiver.stdout.readline().strip() != "ready":
                raise SystemExit(f"network_capacity: the receiver on {node.name} did not start")
        for j, node in enumerate(nodes):
            target = nodes[(j + 1) % streams]
            senders.append(_probe(node.name, "send", target.address, str(PORT), str(count)))
        time.sleep(1.0)  # past the senders' start-up, well before the streams end
        before = _cpu()
        time.sleep(1.0)
        after = _cpu()
        for sender in senders:
            if sender.wait(timeout=300) != 0:
                raise SystemExit("network_capacity: a sender failed")
        results = [json.loads(receiver.communicate(timeout=60)[0]) for receiver in receivers]
    finally:
        for proc in receivers + senders:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    user, system, total = (a - b for a, b in zip(after, before, strict=True))
    rates = [r["bytes"] * 8 / r["seconds"] for r in results]
    link = min(min(limit_bits(n.egress) or 0, limit_bits(n.ingress) or 0) for n in nodes)
    return {
        "streams": streams,
        "link_mbit_s": link / 1e6,
        "stream_mbit_s_min": round(min(rates) / 1e6, 1),
        "stream_mbit_s_median": round(statistics.median(rates) / 1e6, 1),
        "stream_mbit_s_max": round(max(rates) / 1e6, 1),
        "aggregate_mbit_s": round(sum(rates) / 1e6),
        "cores_busy": round((user + system) / total, 2),
        "kernel_share_of_busy": round(system / max(user + system, 1), 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--streams", type=int, nargs="+", default=[2, 5, 10, 20])
    parser.add_argument("--bytes", type=int, default=40_000_000, help="per stream (3 s)")
    args = parser.parse_args()
    for streams in args.streams:
        print(json.dumps(ring(streams, args.bytes)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
