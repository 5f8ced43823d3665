"""One rank of the bare all-to-all (``benchmarks/cluster_alltoall.py``): no gradcode, only
mpi4py. Every rank sends ``A2A_BYTES`` bytes to every other, ``A2A_ROUNDS`` times, a barrier
after each round; rank 0 prints one JSON line: the job size, the slowest rank's ``MPI_Init``
(import included) and each round's slowest rank."""

import json
import os
import time

start = time.monotonic()
import numpy as np  # noqa: E402
from mpi4py import MPI  # noqa: E402  (MPI_Init is what is timed)

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
init = time.monotonic() - start
length = int(os.environ.get("A2A_BYTES", "5000"))
rounds = int(os.environ.get("A2A_ROUNDS", "3"))
outgoing = np.zeros(length, dtype=np.uint8)
incoming = [np.empty(length, dtype=np.uint8) for _ in range(size)]
times = []
for tag in range(rounds):
    began = time.monotonic()
    requests = [comm.Irecv(incoming[p], source=p, tag=tag) for p in range(size) if p != rank]
    requests += [comm.Isend(outgoing, dest=p, tag=tag) for p in range(size) if p != rank]
    MPI.Request.Waitall(requests)
    times.append(time.monotonic() - began)
    comm.Barrier()
every = comm.gather((init, times), root=0)
if rank == 0:
    line = {
        "ranks": size,
        "bytes": length,
        "init_s": round(max(i for i, _ in every), 3),
        "rounds_s": [round(max(t[k] for _, t in every), 4) for k in range(rounds)],
    }
    print("A2A " + json.dumps(line), flush=True)
