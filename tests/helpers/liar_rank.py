"""A rank program for tests (``tests.helpers.liars``): ``gradcode.train`` on every rank, and on
rank ``--rank`` every result the worker's outbox sends replaced by the raw message ``--send``
names (``tests.helpers.liars.MALFORMATIONS``), sent through MPI like the honest one (a ring
worker's report to rank 0 too); several
kinds, comma-separated, take turns (iteration ``t`` sends kind ``t mod count``).

``python liar_rank.py --rank R --send KIND[,KIND...] RUN.yaml [gradcode.train's options]``
"""

from __future__ import annotations

import argparse
import os
import sys

import numpy as np


def malformed(kind: str, buffer: np.ndarray, tag: int) -> tuple[np.ndarray, int]:
    """What the liar sends in place of ``buffer`` (a result: header and message) and under
    which tag."""
    from gradcode.train.protocol import FIELD, result_tag

    forged = buffer.copy()
    t = int(buffer[FIELD["iteration"]])
    if kind == "short":
        return forged[:-1], tag
    if kind == "long":
        return np.concatenate([forged, np.zeros(100)]), tag
    if kind == "huge":
        return np.concatenate([forged, np.zeros(1_000_000)]), tag
    if kind == "int32":
        return forged.astype(np.int32), tag
    if kind == "bytes":
        return np.arange(7, dtype=np.uint8), tag
    if kind == "header-worker":
        forged[FIELD["worker"]] += 1
        return forged, tag
    if kind == "tag":
        return forged, result_tag(t + 1)
    if kind == "iteration":
        forged[FIELD["iteration"]] = t + 3
        return forged, result_tag(t + 3)
    if kind == "done":  # honest results, a NaN ``DONE`` report (``lie``)
        return forged, tag
    if kind == "nan":
        forged[-1] = np.nan
        return forged, tag
    if kind == "nan-header":
        forged[FIELD["compute"]] = np.nan
        return forged, tag
    raise SystemExit(f"liar_rank: unknown --send {kind!r}")


def lie(kind: str) -> None:
    """Make this rank's outboxes send ``kind`` in place of every result."""
    from mpi4py import MPI

    from gradcode.train import protocol, transport
    from gradcode.train.protocol import FIELD, clock

    honest_schedule = transport.Outbox.schedule

    kinds = kind.split(",")

    def schedule(self, buffer, tag, iteration, ready, link_seconds):
        forged, forged_tag = malformed(kinds[iteration % len(kinds)], buffer, tag)
        return honest_schedule(self, forged, forged_tag, iteration, ready, link_seconds)

    def pump(self, now):
        # the honest pump sends float64 only; a liar's bytes go as their own dtype
        while self._queue and self._queue[0].departure <= now:
            item = self._queue.popleft()
            if item.buffer.dtype == np.float64 and item.buffer.size > FIELD["sent"]:
                item.buffer[FIELD["sent"]] = clock()
            request = self.comm.Isend(item.buffer, dest=self.dest, tag=item.tag)
            self._pending.append((request, item.buffer))
            self.sent += 1
        if self._pending:
            self._pending = [(r, b) for r, b in self._pending if not r.Test()]

    honest_send = transport.SendSet.send

    def send(self, comm, buffer, dest, tag):
        # a ring worker's report to rank 0 (``gradcode.train.ring``)
        if tag == protocol.REPORT:
            buffer, tag = malformed(kinds[int(buffer[0]) % len(kinds)], buffer, tag)
            request = comm.Isend(buffer, dest=dest, tag=tag)
            self._pending.append((request, buffer))
            return
        honest_send(self, comm, buffer, dest, tag)

    if "done" in kinds:
        from gradcode.train.worker import Worker

        def send_done(self):
            self._done_buffer = np.full(2, np.nan)
            self.done_sent = self.links.world.Isend(self._done_buffer, dest=0, tag=protocol.DONE)

        Worker._send_done = send_done

    assert MPI.Is_initialized()
    transport.Outbox.schedule = schedule
    transport.Outbox.pump = pump
    transport.SendSet.send = send


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rank", type=int, required=True)
    parser.add_argument("--send", required=True)
    args, rest = parser.parse_known_args()
    rank = int(os.environ.get("PMI_RANK", os.environ.get("OMPI_COMM_WORLD_RANK", "-1")))
    if rank == args.rank:
        from mpi4py import MPI  # noqa: F401  (initialises MPI as gradcode.train would)

        lie(args.send)
    sys.argv = [sys.argv[0], *rest]
    import gradcode.train.__main__  # noqa: F401  (runs the rank program and leaves)


if __name__ == "__main__":
    main()
