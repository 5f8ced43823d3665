"""The least a polling mpi4py master-worker loop costs on this machine: the floor for ours.

Run under MPI (``mpiexec -n n+1 python benchmarks/bare_runtime.py OUT.json ...``; called by
``benchmarks/fixed_cost.py``). The same iteration as the runtime's uncoded job, with nothing
else: the master ``Isend``s the model to every worker and polls its posted receives
(``Testsome``, then a nap); a worker naps until a double ``Iprobe`` finds the model, computes
the same logistic-regression gradient on its rows, sleeps its fixed delay and sends the
gradient back. No headers, logging, checks or bookkeeping. Writes per iteration the
iteration time and, per worker, when it started, its compute, and when its result left and
arrived (seconds after the master began, one clock per host).
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from mpi4py import MPI

MODEL, RESULT = 1, 2


def master(comm: MPI.Comm, args: argparse.Namespace) -> None:
    n = comm.Get_size() - 1
    model = np.zeros(args.features)
    buffers = [np.empty(3 + args.features) for _ in range(n)]
    log = []
    progress = open(args.progress, "ab", buffering=0) if args.progress else None
    for _ in range(args.iterations):
        requests = [comm.Irecv(buffers[w], source=w + 1, tag=RESULT) for w in range(n)]
        began = time.perf_counter()
        sends = [comm.Isend(model, dest=w + 1, tag=MODEL) for w in range(n)]
        arrived = [0.0] * n
        pending = n
        while pending:
            done = MPI.Request.Testsome(requests)
            if done:
                now = time.perf_counter()
                for index in done:
                    arrived[index] = now - began
                pending -= len(done)
            else:
                time.sleep(args.poll)
        model -= 1e-3 * sum(buffer[3:] for buffer in buffers)  # the update
        ended = time.perf_counter()
        MPI.Request.Waitall(sends)
        log.append(
            {
                "iteration_time": ended - began,
                "started": [float(b[0]) - began for b in buffers],
                "compute": [float(b[1]) for b in buffers],
                "sent": [float(b[2]) - began for b in buffers],
                "received": arrived,
            }
        )
        if progress is not None:
            progress.write(b"\n")  # a line per iteration, as the runtime's log
    for w in range(n):
        comm.Send(np.empty(0), dest=w + 1, tag=MODEL)  # an empty model: stop
    with open(args.out, "w") as handle:
        json.dump(log, handle)


def worker(comm: MPI.Comm, args: argparse.Namespace) -> None:
    rank, n = comm.Get_rank(), comm.Get_size() - 1
    rng = np.random.default_rng(rank)
    rows = args.rows // n
    x, y = rng.standard_normal((rows, args.features)), rng.integers(0, 2, rows)
    if args.delays_file:
        with open(args.delays_file) as handle:
            delays = [row[rank - 1] for row in json.load(handle)]
    else:
        delays = [args.base + args.step * (rank - 1)] * args.iterations
    model = np.empty(args.features)
    out = np.empty(3 + args.features)
    status = MPI.Status()
    for delay in delays:  # every worker answers every iteration: the models come in order
        while not (
            comm.Iprobe(source=0, tag=MODEL, status=status)
            or comm.Iprobe(source=0, tag=MODEL, status=status)
        ):
            time.sleep(args.poll)
        comm.Recv(model, source=0, tag=MODEL)
        started = time.perf_counter()
        margin = x @ model
        out[3:] = x.T @ (1.0 / (1.0 + np.exp(-margin)) - y)
        compute = time.perf_counter() - started
        time.sleep(delay)
        out[0], out[1], out[2] = started, compute, time.perf_counter()
        comm.Send(out, dest=0, tag=RESULT)
    comm.Recv(np.empty(0), source=0, tag=MODEL)  # the empty model: stop


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--iterations", type=int, default=100)
    parser.add_argument("--features", type=int, default=2000)
    parser.add_argument("--rows", type=int, default=4000)
    parser.add_argument("--base", type=float, default=0.05)
    parser.add_argument("--step", type=float, default=0.002)
    parser.add_argument("--poll", type=float, default=0.0005)
    parser.add_argument("--progress", help="a file that gains a line per iteration")
    parser.add_argument("--delays-file", help="per iteration, every worker's delay (JSON)")
    args = parser.parse_args()
    comm = MPI.COMM_WORLD
    (master if comm.Get_rank() == 0 else worker)(comm, args)


if __name__ == "__main__":
    main()
