"""``mpiexec -n N python -m gradcode.train.linkprobe --out DIR``: message time vs size on the
links between rank 0 (the master's node) and every other rank.

For every worker rank ``p`` in turn (the others sleep), every size (default 64 KiB .. 32 MiB)
and both directions (``up``: ``p`` to rank 0, ``down``: rank 0 to ``p``), ``--repeats``
messages are timed one at a time, each after a small handshake (the receiver posts its receive
and says so), so a message never waits for a receive or shares a link with another. Two
measurements of each message:

- ``clock_time``: the receiver's clock when its receive completed minus the sender's clock
  just before ``MPI_Send`` (written into the message's first 8 bytes); valid only when both
  ranks read one monotonic clock (same kernel ``boot_id``: ranks in network namespaces on one
  host do), else ``null``;
- ``ack_time``: on the sender alone, from just before ``MPI_Send`` until a 1-byte
  acknowledgement is back, minus half the median round trip of 1-byte messages of that pair
  (``rtt``, measured first): clock-independent, valid across hosts.

``time`` is ``clock_time`` when valid, else ``ack_time``; ``rate`` is ``bytes / time``. Per
direction and size the medians, and per direction a least-squares line ``time = latency + bytes
/ rate`` over the sizes (``fit``). With ``--rate`` (the links' stated rate, ``100mbit``:
``gradcode.rate``'s grammar) and optionally ``--master-rate``/``--latency``, or ``--run
RUN.yaml`` (its ``network.links``), every median is put beside the ``shared-links`` timing
model's ``message_time`` (``predicted``, ``ratio`` = measured / predicted). On one host without
a cluster this measures shared memory, which has no stated rate.

Outputs in ``DIR``: ``links.json`` (ranks and their nodes/transport, the settings, every
message, the medians and fits) and ``links.csv`` (one row per message).
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gradcode import dilation
from gradcode.extras import require_or_exit

if __name__ == "__main__":  # an MPI job's entry point: without mpi4py, one line
    require_or_exit("mpi", "python -m gradcode.train.linkprobe")

from mpi4py import MPI

from gradcode.errors import UserError
from gradcode.rate import Rate
from gradcode.runfile.config import load_config
from gradcode.timing.fair_share import message_time
from gradcode.train.node import describe_rank, summarize_ranks
from gradcode.train.protocol import clock

PROGRAM = "gradcode.train.linkprobe"
DEFAULT_SIZES = "64KiB,256KiB,1MiB,4MiB,16MiB,32MiB"
UNITS = {"": 1, "b": 1, "kib": 1024, "mib": 1024**2, "gib": 1024**3, "kb": 1000, "mb": 10**6}
#: tags: rank 0 tells a rank to take its turn or to finish; handshakes; payloads; acks
GO, FINISH, READY, DATA, ACK, RESULTS = 101, 102, 103, 104, 105, 106
#: seconds idle ranks sleep between looks for their turn
IDLE = 0.005
#: 1-byte round trips per pair for ``rtt``
PINGS = 20


def parse_size(text: str) -> int:
    """Bytes of ``64KiB``, ``1MiB``, ``4096`` ..."""
    value = text.strip().lower()
    number = value.rstrip("abcdefghijklmnopqrstuvwxyz")
    unit = value[len(number) :]
    if unit not in UNITS or not number:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 64KiB, 1MiB, 4096)")
    size = int(float(number) * UNITS[unit])
    if size < 8:
        raise argparse.ArgumentTypeError(f"size {text!r}: at least 8 bytes")
    return size


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=f"mpiexec -n N python -m {PROGRAM}",
        description="Time messages of several sizes between rank 0 and every other rank.",
        allow_abbrev=False,
    )
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument(
        "--sizes",
        default=DEFAULT_SIZES,
        type=lambda text: [parse_size(s) for s in text.split(",") if s.strip()],
        help=f"comma-separated message sizes (default {DEFAULT_SIZES})",
    )
    parser.add_argument("--repeats", type=int, default=3, help="messages per size (default 3)")
    parser.add_argument(
        "--directions", default="up,down", help="up (to rank 0), down (from rank 0) or both"
    )
    parser.add_argument(
        "--run", help="a run file whose network.links state the links (instead of --rate ...)"
    )
    parser.add_argument("--rate", help="the links' stated rate (e.g. 100mbit, 12.5MB/s)")
    parser.add_argument("--master-rate", help="rank 0's link rate (default: --rate)")
    parser.add_argument("--latency", type=float, default=0.0, help="stated one-way latency (s)")
    args = parser.parse_args(argv)
    args.directions = [d.strip() for d in args.directions.split(",") if d.strip()]
    if not args.directions or set(args.directions) - {"up", "down"}:
        parser.error("--directions: up, down or up,down")
    if args.repeats < 1:
        parser.error("--repeats: at least 1")
    try:
        rate = Rate.parse(args.rate, "--rate") if args.rate else None
        master = Rate.parse(args.master_rate, "--master-rate") if args.master_rate else rate
    except UserError as error:
        parser.error(str(error))
    args.rate_bytes = rate.bytes_per_second if rate is not None else None
    args.master_bytes = master.bytes_per_second if master is not None else None
    if args.run is not None:
        if args.rate or args.master_rate:
            parser.error("--run states the links: no --rate or --master-rate with it")
        try:
            links = load_config(args.run).network
        except UserError as error:
            parser.error(f"--run: {' '.join(str(error).split())}")
        if links is None or links.links is None:
            parser.error(f"--run: {args.run} has no network.links")
        args.rate_bytes, args.master_bytes = links.links.rate, links.links.master_rate
        args.latency = links.links.latency
    return args


# -- the two ends of one message ----------------------------------------------------------------
def _send_timed(comm: MPI.Comm, peer: int, payload: np.ndarray) -> tuple[float, float]:
    """Wait for the peer's handshake, send ``payload`` stamped with our clock, wait for the
    acknowledgement; returns ``(stamp, seconds until the acknowledgement)``."""
    token = np.empty(1, dtype=np.uint8)
    comm.Recv([token, MPI.BYTE], source=peer, tag=READY)
    stamp = clock()
    payload[:8] = np.frombuffer(np.float64(stamp).tobytes(), dtype=np.uint8)
    comm.Send([payload, MPI.BYTE], dest=peer, tag=DATA)
    comm.Recv([token, MPI.BYTE], source=peer, tag=ACK)
    return stamp, clock() - stamp


def _receive_timed(comm: MPI.Comm, peer: int, buffer: np.ndarray) -> float:
    """Post the receive, tell the peer, complete it, acknowledge; returns the clock time from
    the sender's stamp to completion (our clock minus the sender's)."""
    token = np.zeros(1, dtype=np.uint8)
    request = comm.Irecv([buffer, MPI.BYTE], source=peer, tag=DATA)
    comm.Send([token, MPI.BYTE], dest=peer, tag=READY)
    request.Wait()
    done = clock()
    comm.Send([token, MPI.BYTE], dest=peer, tag=ACK)
    stamp = float(np.frombuffer(buffer[:8].tobytes(), dtype=np.float64)[0])
    return done - stamp


def _rtt(comm: MPI.Comm, peer: int, leader: bool) -> float:
    """Median round trip of a 1-byte message between this rank and ``peer``."""
    token = np.zeros(1, dtype=np.uint8)
    trips = []
    for _ in range(PINGS):
        if leader:
            began = clock()
            comm.Send([token, MPI.BYTE], dest=peer, tag=ACK)
            comm.Recv([token, MPI.BYTE], source=peer, tag=ACK)
            trips.append(clock() - began)
        else:
            comm.Recv([token, MPI.BYTE], source=peer, tag=ACK)
            comm.Send([token, MPI.BYTE], dest=peer, tag=ACK)
    return float(np.median(trips)) if trips else 0.0


def _turn(comm: MPI.Comm, peer: int, worker: int, args: argparse.Namespace) -> list[dict[str, Any]]:
    """This end's view of the messages between rank 0 and rank ``worker`` (both call it;
    ``peer`` is the other end)."""
    leader = comm.Get_rank() == 0
    rtt = _rtt(comm, peer, leader)
    if leader:
        comm.send(rtt, dest=peer, tag=ACK)
    else:
        rtt = comm.recv(source=peer, tag=ACK)
    buffer = np.ones(max(args.sizes), dtype=np.uint8)  # touched: no page faults in timing
    records: list[dict[str, Any]] = []
    for direction in args.directions:
        sender_is_me = (direction == "down") == leader
        # warm-up: the first message of a pair may set up the connection
        if sender_is_me:
            _send_timed(comm, peer, buffer[: args.sizes[0]])
        else:
            _receive_timed(comm, peer, buffer[: args.sizes[0]])
        for size in args.sizes:
            for repeat in range(args.repeats):
                view = buffer[:size]
                if sender_is_me:
                    _, round_trip = _send_timed(comm, peer, view)
                    records.append(
                        {
                            "peer": worker,
                            "direction": direction,
                            "bytes": size,
                            "repeat": repeat,
                            "ack_time": round_trip - rtt / 2,
                            "rtt": rtt,
                        }
                    )
                else:
                    records.append(
                        {
                            "peer": worker,
                            "direction": direction,
                            "bytes": size,
                            "repeat": repeat,
                            "clock_time": _receive_timed(comm, peer, view),
                        }
                    )
    return records


def _merge(mine: list[dict[str, Any]], theirs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Both ends' views of the same messages, one record each."""
    key = lambda r: (r["peer"], r["direction"], r["bytes"], r["repeat"])  # noqa: E731
    merged = {key(r): dict(r) for r in mine}
    for record in theirs:
        merged.setdefault(key(record), {}).update(record)
    return [merged[k] for k in sorted(merged, key=lambda k: (k[0], k[1] != "up", k[2], k[3]))]


# -- summaries ------------------------------------------------------------------------------
def summarize(
    messages: list[dict[str, Any]], one_clock: bool, args: argparse.Namespace
) -> dict[str, Any]:
    """Per direction: the median time and rate per size, the predicted time, a line fit."""
    for record in messages:
        clock_time = record.get("clock_time") if one_clock else None
        record["clock_time"] = clock_time
        record["time"] = clock_time if clock_time is not None else record.get("ack_time")
        record["rate"] = record["bytes"] / record["time"] if record["time"] else None
    result: dict[str, Any] = {}
    for direction in args.directions:
        rows = []
        for size in args.sizes:
            times = [
                m["time"]
                for m in messages
                if m["direction"] == direction and m["bytes"] == size and m["time"] is not None
            ]
            if not times:
                continue
            median = float(np.median(times))
            row: dict[str, Any] = {
                "bytes": size,
                "messages": len(times),
                "time": median,
                "min": float(np.min(times)),
                "max": float(np.max(times)),
                "rate": size / median if median > 0 else None,
            }
            if args.rate_bytes is not None:
                predicted = message_time(size, args.rate_bytes, args.master_bytes, args.latency)
                row["predicted"] = predicted
                row["ratio"] = median / predicted
            rows.append(row)
        fit = None
        if len(rows) >= 2:
            sizes = np.array([r["bytes"] for r in rows], dtype=np.float64)
            times = np.array([r["time"] for r in rows])
            slope, intercept = np.polyfit(sizes, times, 1)
            fit = {
                "latency": float(intercept),
                "rate": float(1 / slope) if slope > 0 else None,
            }
        result[direction] = {"sizes": rows, "fit": fit}
    return result


def write_outputs(out: Path, payload: dict[str, Any]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "links.json").write_text(json.dumps(payload, indent=2) + "\n")
    fields = ["peer", "direction", "bytes", "repeat", "time", "rate", "clock_time", "ack_time"]
    with open(out / "links.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=[*fields, "rtt"], extrasaction="ignore")
        writer.writeheader()
        for record in payload["messages"]:
            writer.writerow(record)


def _print(summary: dict[str, Any]) -> None:
    for direction, part in summary.items():
        for row in part["sizes"]:
            rate = row["rate"] or 0.0
            extra = f"  ratio {row['ratio']:.3f}" if "ratio" in row else ""
            print(
                f"{direction:4s} {row['bytes']:>10d} B  {row['time'] * 1e3:9.3f} ms  "
                f"{rate * 8 / 1e6:10.1f} Mbit/s{extra}"
            )
        if part["fit"] is not None and part["fit"]["rate"]:
            fit = part["fit"]
            print(
                f"{direction:4s} fit: latency {fit['latency'] * 1e3:.3f} ms, "
                f"rate {fit['rate'] * 8 / 1e6:.1f} Mbit/s"
            )


def main(argv: Sequence[str] | None = None) -> int:
    world = MPI.COMM_WORLD
    rank, size = world.Get_rank(), world.Get_size()
    try:
        args = parse_args(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    if size < 2:
        if rank == 0:
            print(f"{PROGRAM}: error: needs at least 2 ranks", file=sys.stderr)
        return 2
    ranks = world.gather(describe_rank(rank), root=0)
    messages: list[dict[str, Any]] = []
    if rank == 0:
        for peer in range(1, size):
            world.send(None, dest=peer, tag=GO)
            mine = _turn(world, peer, peer, args)
            theirs = world.recv(source=peer, tag=RESULTS)
            messages += _merge(mine, theirs)
        for peer in range(1, size):
            world.send(None, dest=peer, tag=FINISH)
        placement = summarize_ranks(ranks)
        summary = summarize(messages, placement["one_clock"], args)
        payload = {
            "program": PROGRAM,
            "sizes": args.sizes,
            "repeats": args.repeats,
            "stated": {
                "rate": args.rate_bytes,
                "master_rate": args.master_bytes,
                "latency": args.latency,
            },
            "one_clock": placement["one_clock"],
            "method": "time: clock_time (receiver's clock at completion minus the sender's "
            "stamp) when every rank reads one clock, else ack_time (sender: until a 1-byte "
            "acknowledgement, minus half the 1-byte round trip)",
            "ranks": placement["ranks"],
            "nodes": placement["nodes"],
            "summary": summary,
            "messages": messages,
        }
        write_outputs(Path(args.out), payload)
        _print(summary)
        return 0
    status = MPI.Status()
    while True:
        if not world.Iprobe(source=0, tag=MPI.ANY_TAG, status=status):
            dilation.sleep(IDLE)  # not our turn: do not spin on the shared cores
            continue
        world.recv(source=0, tag=status.Get_tag())
        if status.Get_tag() == FINISH:
            return 0
        world.send(_turn(world, 0, rank, args), dest=0, tag=RESULTS)


if __name__ == "__main__":
    sys.exit(main())
