"""How long the model takes to reach the workers, by way of distributing it (issue 20, part 1).

Run on the emulated cluster, one rank per node, rank 0 on the master's node::

    gradcode cluster up --nodes 9 --rate 100mbit --master-rate 200mbit
    gradcode cluster mpiexec -n 9 -- python benchmarks/model_distribution.py --length 125000

Every round the master distributes ``l + 1`` float64s to the ``n`` workers, and every worker
notes when it held all of it (ranks on one kernel read one clock). Ways:

- ``isend``: the runtime's today: one ``Isend`` of the whole model per worker (``n`` copies
  through the master's port);
- ``ibcast``: ``MPI_Ibcast`` on all ranks (MPICH picks the algorithm: binomial tree for small
  messages, scatter + allgather for large ones), posted at the round's start by everyone;
- ``scatter``: the master sends chunk ``j`` (``1 / n`` of the model) to worker ``j`` only, and
  every worker forwards its chunk to every other worker as soon as it has it (one copy
  through the master's port, about one through every worker's link each way).

A worker polls MPI every ``--poll`` seconds, as the runtime's workers do while they wait; a
*straggler* (``--straggler W``, worker ``W``) is busy for ``--busy`` seconds at the start of
each round (the previous iteration's work, an injected delay) and polls only every
``--busy-poll`` seconds meanwhile, as the runtime's workers do while sleeping through an
injected delay. What a way must not do is make the others wait for the straggler. Prints, per
way, the medians over the rounds of the first, median and last worker (stragglers left out)
to hold the model, and the straggler's own.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from mpi4py import MPI

from gradcode.train.distribution import chunk_edges

WAYS = ("isend", "ibcast", "scatter")
CHUNK_TAG = 100


def poll_until_done(requests: list[MPI.Request], busy_until: float, args) -> float:
    """Test the requests until all complete, sleeping between polls; returns when they did."""
    while True:
        if MPI.Request.Testall(requests):
            return time.monotonic()
        now = time.monotonic()
        time.sleep(args.busy_poll if now < busy_until else args.poll)


def isend_round(comm: MPI.Comm, model: np.ndarray, busy_until: float, args) -> float | None:
    rank, size = comm.Get_rank(), comm.Get_size()
    if rank == 0:
        requests = [comm.Isend(model, dest=w, tag=1) for w in range(1, size)]
        MPI.Request.Waitall(requests)
        return None
    return poll_until_done([comm.Irecv(model, source=0, tag=1)], busy_until, args)


def ibcast_round(comm: MPI.Comm, model: np.ndarray, busy_until: float, args) -> float | None:
    request = comm.Ibcast(model, root=0)
    if comm.Get_rank() == 0:
        request.Wait()
        return None
    return poll_until_done([request], busy_until, args)


def scatter_round(comm: MPI.Comm, model: np.ndarray, busy_until: float, args) -> float | None:
    rank, size = comm.Get_rank(), comm.Get_size()
    workers = size - 1
    edges = chunk_edges(model.size, workers)
    chunk = [model[edges[j] : edges[j + 1]] for j in range(workers)]
    if rank == 0:
        requests = [comm.Isend(chunk[w - 1], dest=w, tag=CHUNK_TAG + w - 1) for w in range(1, size)]
        MPI.Request.Waitall(requests)
        return None
    me = rank - 1
    own = comm.Irecv(chunk[me], source=0, tag=CHUNK_TAG + me)
    peers = [
        comm.Irecv(chunk[j], source=j + 1, tag=CHUNK_TAG + j) for j in range(workers) if j != me
    ]
    forwards: list[MPI.Request] = []
    while True:
        if not forwards and own.Test():
            forwards = [
                comm.Isend(chunk[me], dest=j + 1, tag=CHUNK_TAG + me)
                for j in range(workers)
                if j != me
            ]
        if forwards and MPI.Request.Testall(peers):
            done = time.monotonic()
            poll_until_done(forwards, busy_until, args)  # its own forwards must finish too
            return done
        MPI.Request.Testall(forwards) if forwards else None
        now = time.monotonic()
        time.sleep(args.busy_poll if now < busy_until else args.poll)


ROUNDS = {"isend": isend_round, "ibcast": ibcast_round, "scatter": scatter_round}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--length", type=int, default=125_000, help="l (the model: l + 1)")
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--ways", nargs="+", default=list(WAYS), choices=WAYS)
    parser.add_argument("--straggler", type=int, action="append", default=[])
    parser.add_argument("--busy", type=float, default=0.2, help="a straggler's busy seconds")
    parser.add_argument("--poll", type=float, default=0.0005)
    parser.add_argument("--busy-poll", type=float, default=0.005)
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    model = np.arange(args.length + 1, dtype=np.float64) if rank == 0 else np.empty(args.length + 1)
    stragglers = set(args.straggler)
    results = {}
    for way in args.ways:
        rows = []
        for round_ in range(args.rounds + 1):  # the first round warms the connections up
            if rank != 0:
                model.fill(np.nan)
            comm.Barrier()
            started = comm.bcast(time.monotonic() if rank == 0 else None, root=0)
            busy_until = started + args.busy if rank - 1 in stragglers else 0.0
            done = ROUNDS[way](comm, model, busy_until, args)
            if rank != 0 and not np.array_equal(model, np.arange(args.length + 1.0)):
                raise SystemExit(f"rank {rank}: {way} delivered a wrong model")
            times = comm.gather(None if done is None else done - started, root=0)
            if rank == 0 and round_ > 0:
                rows.append(times[1:])
        if rank == 0:
            results[way] = np.array(rows)
    if rank == 0:
        others = [w for w in range(size - 1) if w not in stragglers]
        megabytes = 8 * (args.length + 1) / 1e6
        print(
            f"{size - 1} workers, model {megabytes:.2f} MB, {args.rounds} rounds, stragglers "
            f"{sorted(stragglers) or 'none'} (busy {args.busy} s, polling every {args.busy_poll} s)"
        )
        print(f"{'way':8s} {'first s':>8s} {'median s':>9s} {'last s':>8s} {'straggler s':>11s}")
        for way, table in results.items():
            normal = table[:, others]
            late = np.median(table[:, sorted(stragglers)].max(axis=1)) if stragglers else np.nan
            first = np.median(normal.min(axis=1))
            middle = np.median(np.median(normal, axis=1))
            last = np.median(normal.max(axis=1))
            print(f"{way:8s} {first:8.4f} {middle:9.4f} {last:8.4f} {late:11.4f}")


if __name__ == "__main__":
    main()
