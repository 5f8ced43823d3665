"""Measure a link: one TCP stream from one node to another, timed by the receiver.

``python -m gradcode.cluster.network.probe recv ADDRESS PORT`` listens, prints ``ready``,
receives one stream and prints ``{"bytes": ..., "seconds": ...}``: the time from the first byte
to the last, so connection set-up and the start of the sender do not count. ``send ADDRESS
PORT BYTES`` sends that many zero bytes. ``measure`` runs both in their nodes' namespaces; the
rate it returns is TCP's payload (goodput), about 95 % of the rate tbf enforces on the frames.
"""

from __future__ import annotations

import argparse
import json
import socket
import subprocess
import sys
import time
from dataclasses import dataclass

from gradcode.cluster.network.namespaces import ClusterError, enter, run
from gradcode.cluster.spec import ClusterSpec

CHUNK = 1 << 16


@dataclass(frozen=True)
class Measurement:
    source: str
    target: str
    bytes: int
    seconds: float

    @property
    def bits_per_second(self) -> float:
        return self.bytes * 8 / self.seconds


def receive(address: str, port: int) -> dict[str, float]:
    with socket.create_server((address, port)) as server:
        print("ready", flush=True)
        connection, _ = server.accept()
        with connection:
            first = connection.recv(CHUNK)
            start = time.perf_counter()
            total = 0
            while chunk := connection.recv(CHUNK):
                total += len(chunk)
            seconds = time.perf_counter() - start
    # the first chunk arrived before the clock started
    return {"bytes": total, "seconds": seconds, "first": len(first)}


def send(address: str, port: int, count: int) -> None:
    block = bytes(CHUNK)
    with socket.create_connection((address, port), timeout=60) as connection:
        left = count
        while left > 0:
            connection.sendall(block[: min(left, CHUNK)])
            left -= CHUNK


def measure(spec: ClusterSpec, source: str, target: str, count: int = 10_000_000) -> Measurement:
    """Send ``count`` bytes from node ``source`` to node ``target``; the receiver's timing."""
    src, dst = spec.node(source), spec.node(target)
    port = 5201
    receiver = subprocess.Popen(
        [
            *enter(dst.name),
            sys.executable,
            "-m",
            "gradcode.cluster.network.probe",
            "recv",
            dst.address,
            str(port),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        if receiver.stdout is None or receiver.stdout.readline().strip() != "ready":
            raise ClusterError(f"the probe receiver on {dst.name} did not start")
        run(
            [
                *enter(src.name),
                sys.executable,
                "-m",
                "gradcode.cluster.network.probe",
                "send",
                dst.address,
                str(port),
                str(count),
            ],
            timeout=300,
        )
        out, err = receiver.communicate(timeout=60)
    finally:
        if receiver.poll() is None:
            receiver.kill()
            receiver.wait()
    if receiver.returncode != 0:
        raise ClusterError(f"the probe receiver on {dst.name} failed: {' '.join(err.split())}")
    result = json.loads(out)
    return Measurement(src.name, dst.name, int(result["bytes"]), float(result["seconds"]))


def main(argv: list[str]) -> int:
    if argv[:1] == ["recv"] and len(argv) == 3:
        print(json.dumps(receive(argv[1], int(argv[2]))), flush=True)
        return 0
    if argv[:1] == ["send"] and len(argv) == 4:
        send(argv[1], int(argv[2]), int(argv[3]))
        return 0
    print("usage: probe recv ADDRESS PORT | probe send ADDRESS PORT BYTES", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))


def cmd_measure(args: argparse.Namespace) -> int:
    """``gradcode cluster measure SOURCE TARGET [--bytes B] [--within F]``: one stream's rate
    against the configured one as a JSON line; 1 when off by more than ``--within``."""
    # here, not at the top: this module also runs in the nodes (``recv``, ``send``)
    from gradcode.cluster.network.running import current_spec
    from gradcode.cluster.spec import format_limit
    from gradcode.rate import Rate

    spec = current_spec()
    source, target = spec.node(args.source), spec.node(args.target)
    result = measure(spec, source.name, target.name, args.bytes)
    limits = [r for r in (source.egress, target.ingress) if r is not None]
    expected = min(limits) if limits else None
    line = {
        "from": source.name,
        "to": target.name,
        "bytes": result.bytes,
        "seconds": round(result.seconds, 4),
        "mbit_per_s": round(result.bits_per_second / 1e6, 2),
        "configured": format_limit(expected),
    }
    if expected is not None:
        line["ratio"] = round(result.bits_per_second / expected.bits_per_second, 4)
    print(json.dumps(line))
    if args.within is not None and expected is not None:
        tolerance = args.within
        if abs(line["ratio"] - 1) > tolerance:
            print(
                f"gradcode cluster: measured {Rate.from_bits(result.bits_per_second):.4g}, "
                f"configured {expected}: off by more than {tolerance:.0%}",
                file=sys.stderr,
            )
            return 1
    return 0
