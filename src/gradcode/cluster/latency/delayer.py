"""The delayer: a small process in the switch's namespace that holds every packet the bridge
forwards to a node's port for that node's latency (plus jitter), then lets it go.

``python -m gradcode.cluster.latency.delayer --config FILE --status FILE``. The switch's iptables
rules (``delay``) send each port's packets to netfilter queue N (N = the node's index); this
process binds those queues (``nfqueue``: metadata only, never the packet's bytes), and
releases each packet at its kernel arrival timestamp plus the delay, per queue in arrival
order (a packet never overtakes the one before it, jitter or not: TCP reads reordering as
loss), with one batch verdict per queue for everything that is due. It sleeps in ``select``
with a sub-millisecond timeout, with a timer slack of 1 ns and, where the kernel grants it, a
real-time scheduling class, and while it holds few packets polls the last 0.1 ms before a
release (``SPIN_NS``), so a release is late by little more than the time to send it.

``--config`` is JSON: ``{"generation": G, "queues": {"N": [latency_ns, jitter_ns], ...}}``;
SIGHUP makes the process read it again (new delays apply to packets that arrive after it), and
``--status`` then says ``generation`` G: that is how ``gradcode cluster latency`` knows its
setting holds. The status (JSON, rewritten every second and on each change) also counts the
packets, the verdicts and the CPU seconds spent (for the cost per packet), and how late the
releases were on average (``late_us_mean``: the verdict's time after the packet was due; what
the kernel then takes to forward the packet is not in it). SIGTERM releases every packet held
at once, then the process exits; if it dies instead, the rules' ``--queue-bypass`` lets the
traffic through undelayed once the kernel has dropped its queues (nothing waits on it).
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import random
import select
import signal
import socket
import time
from collections import deque
from pathlib import Path
from typing import Any

from gradcode.atomic import write_json
from gradcode.cluster.latency import nfqueue

#: packets a queue holds before the kernel drops new ones (at 1 Gbit/s and 5 ms, ~420 frames)
QUEUE_MAXLEN = 8192
RECEIVE_BUFFER = 16 << 20
#: a packet due within this much is released now (a wake-up costs about as much)
EARLY_NS = 20_000
#: an arrival timestamp further from now than this is not the packet's (a missing or stale
#: stamp): the packet is timed from when it was read instead
STAMP_TRUST_NS = 1_000_000_000
STATUS_EVERY_NS = 1_000_000_000
PR_SET_TIMERSLACK = 29
#: how long before a release the process stops sleeping and polls, when its last release was
#: more than SPARSE_NS ago. A sleeping vCPU of this machine wakes 0.1-0.2 ms after its timer:
#: at 1 ms each way, ping's median round trip was 2.20-2.32 ms sleeping to each release and
#: 2.07-2.17 ms polling the last stretch (the bare path: 0.08 ms). In bulk traffic releases
#: come every ~0.1 ms and keep the process awake anyway, and polling there would cost (at 100
#: Mbit/s TCP, 70-80 us of CPU a packet against 40-47 with this gate): so only sparse
#: traffic, round trips and the small messages latency matters to, is polled for.
SPIN_NS = 200_000
SPARSE_NS = 300_000


def read_config(path: Path) -> tuple[int, dict[int, tuple[int, int]]]:
    """The config file: its generation and each queue's (latency, jitter) in nanoseconds."""
    data = json.loads(path.read_text())
    queues = {int(q): (int(lat), int(jit)) for q, (lat, jit) in data["queues"].items()}
    return int(data["generation"]), queues


class Delayer:
    """The queues, the packets held in each (release time, id) and the counters."""

    def __init__(self, config: Path, status: Path) -> None:
        self.config_path, self.status_path = config, status
        self.generation, self.delays = read_config(config)
        self.held: dict[int, deque[tuple[int, int]]] = {q: deque() for q in self.delays}
        self.last_release = dict.fromkeys(self.delays, 0)
        self.packets = 0
        self.unstamped = 0
        self.released = 0
        self.verdicts = 0
        self.late_ns = 0
        self.verdict_at = 0
        self.polls = 0
        self.reload = False
        self.stop = False
        self.realtime = _realtime()
        self.sock = nfqueue.open_socket(RECEIVE_BUFFER)
        # arrival timestamps on every received packet of this kernel (netstamp): any socket
        # that asks for timestamps turns them on
        self.sock.setsockopt(socket.SOL_SOCKET, getattr(socket, "SO_TIMESTAMP", 29), 1)
        for seq, queue in enumerate(sorted(self.delays), start=1):
            nfqueue.request(self.sock, nfqueue.bind(queue, seq=2 * seq), 2 * seq, f"bind {queue}")
            nfqueue.request(
                self.sock,
                nfqueue.configure(queue, QUEUE_MAXLEN, seq=2 * seq + 1),
                2 * seq + 1,
                f"configure queue {queue}",
            )
        self.sock.setblocking(False)
        self.cpu_at_start = time.process_time()
        # a signal wakes the loop at once (select is otherwise resumed after the handler)
        self.wake_read, wake_write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        signal.set_wakeup_fd(wake_write, warn_on_full_buffer=False)

    def write_status(self) -> None:
        write_json(
            self.status_path,
            {
                "pid": os.getpid(),
                "generation": self.generation,
                "queues": {str(q): list(d) for q, d in sorted(self.delays.items())},
                "packets": self.packets,
                "unstamped": self.unstamped,
                "verdicts": self.verdicts,
                "polls": self.polls,
                "cpu_seconds": time.process_time(),
                "cpu_seconds_at_start": self.cpu_at_start,
                "cpu_user_seconds": os.times().user,
                "cpu_system_seconds": os.times().system,
                "late_us_mean": round(self.late_ns / self.released / 1e3, 1)
                if self.released
                else None,
                "realtime": self.realtime,
                "wall": time.time(),
            },
        )

    def receive(self) -> None:
        """Read every message waiting; each packet gets its release time."""
        now = time.time_ns()
        while True:
            try:
                data = self.sock.recv(65536)
            except BlockingIOError:
                return
            except OSError as error:  # ENOBUFS: messages lost, their packets still held;
                if error.errno != 105:  # the next batch verdict of their queue frees them
                    raise
                continue
            for item in nfqueue.parse(data):
                if not isinstance(item, nfqueue.Packet) or item.queue not in self.delays:
                    continue
                self.packets += 1
                stamp = item.timestamp_ns
                if stamp is None or abs(now - stamp) > STAMP_TRUST_NS:
                    self.unstamped += 1
                    stamp = now
                latency, jitter = self.delays[item.queue]
                due = stamp + latency
                if jitter:
                    due += random.randint(-jitter, jitter)
                due = max(due, self.last_release[item.queue])
                self.last_release[item.queue] = due
                self.held[item.queue].append((due, item.packet_id))

    def release(self, *, everything: bool = False) -> int | None:
        """Let go of every packet that is due (one batch verdict per queue); the nanoseconds
        until the next one is due, or ``None`` when nothing is held."""
        now = time.time_ns()
        soonest = None
        for queue, held in self.held.items():
            last = None
            while held and (everything or held[0][0] <= now + EARLY_NS):
                due, last = held.popleft()
                self.late_ns += now - due
                self.released += 1
            if last is not None:
                self._send(nfqueue.verdict(queue, last, batch=True))
                self.verdicts += 1
                self.verdict_at = now
            if held:
                wait = held[0][0] - now
                soonest = wait if soonest is None else min(soonest, wait)
        return soonest

    def _send(self, data: bytes) -> None:
        while True:
            try:
                self.sock.send(data)
                return
            except BlockingIOError:
                select.select([], [self.sock], [], 0.001)

    def apply_config(self) -> None:
        self.reload = False
        generation, delays = read_config(self.config_path)
        unknown = set(delays) - set(self.held)
        if unknown:  # bound once at the start: a new queue needs a new delayer
            raise SystemExit(f"delayer: queues {sorted(unknown)} were not bound at the start")
        self.delays.update(delays)
        self.generation = generation
        self.write_status()

    def run(self) -> None:
        self.write_status()
        next_status = time.monotonic_ns() + STATUS_EVERY_NS
        while not self.stop:
            if self.reload:
                self.apply_config()
            wait = self.release()
            if wait is None:
                timeout = 1.0
            elif time.time_ns() - self.verdict_at <= SPARSE_NS:
                timeout = max(wait, 0) / 1e9  # busy: sleep to the release
            elif wait > SPIN_NS:
                timeout = (wait - SPIN_NS) / 1e9  # sparse: wake before it ...
            else:
                timeout = 0.0  # ... and poll the last stretch (SPIN_NS)
                self.polls += 1
            try:
                ready, _, _ = select.select([self.sock, self.wake_read], [], [], timeout)
            except InterruptedError:
                ready = []
            if self.wake_read in ready:
                while _drained(self.wake_read):
                    pass
            if self.sock in ready:
                self.receive()
            if time.monotonic_ns() >= next_status:
                self.write_status()
                next_status = time.monotonic_ns() + STATUS_EVERY_NS
        self.receive()
        self.release(everything=True)
        self.write_status()


def _drained(fd: int) -> bool:
    try:
        return bool(os.read(fd, 512))
    except BlockingIOError:
        return False


def _realtime() -> bool:
    """A 1 ns timer slack and SCHED_FIFO where the kernel grants them: whether it did (the
    status reports it; without it releases are later by the scheduler's latency)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_TIMERSLACK, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    try:
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
        return True
    except (OSError, AttributeError):
        return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gradcode.cluster.latency.delayer")
    parser.add_argument("--config", type=Path, required=True)
    parser.add_argument("--status", type=Path, required=True)
    args = parser.parse_args(argv)
    import faulthandler
    import gc

    # where it is stuck, on request (``delay`` asks when it does not answer in time)
    faulthandler.register(signal.SIGUSR1)
    gc.disable()  # no collector pauses while packets wait; the loop makes no cycles
    delayer = Delayer(args.config, args.status)

    def on_signal(number: int, _frame: Any) -> None:
        if number == signal.SIGHUP:
            delayer.reload = True
        else:
            delayer.stop = True

    for number in (signal.SIGHUP, signal.SIGTERM, signal.SIGINT):
        signal.signal(number, on_signal)
    delayer.run()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
