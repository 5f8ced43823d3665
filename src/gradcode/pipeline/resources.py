"""What a training job asks a batch scheduler for: memory per CPU and minutes, from its run.

A training run is one MPI job of ``world_size`` ranks, one CPU each (``tasks`` in the train
rule, ``--cpus-per-task=1`` under the slurm profile). These functions size its request from the
run's plan (scheme, workers, each worker's partitions, straggler model, bandwidth, iterations)
and the prepared data set's ``meta.json`` (rows, features, non-zeros, dense or CSR), so a job at
the papers' scale asks for what it needs instead of a flat default.

Memory (``mem_mb_per_cpu``): a model of each rank's peak resident set size, calibrated by
measurement (``peak_rss_mib`` in every run's ``summary.json``; the measured runs are listed in
the README, section "On a SLURM cluster"):

- every rank: MPI's state for each other rank (``PER_RANK_MIB`` times the world size);
- every receiver (rank 0; a tree node) ``RECEIVE_COPIES`` of each message it receives in an
  iteration;
- rank 0: the interpreter with its libraries (``RANK0_BASE_MIB``), the whole data set (train and
  test), twice the largest worker's share (while scattering, one worker's rows are copied out
  and pickled at a time), the coded data sets of a data-coding code (LCC), the iterates kept
  for ``log.trajectory``, and a few model-length vectors;
- a worker: the interpreter (``WORKER_BASE_MIB``), twice its share of the data (the pickled
  message and the arrays unpickled from it), its partial gradients and a few model-length
  vectors.

Every rank gets the same ``--mem-per-cpu`` (SLURM cannot give ranks of one step different
amounts), and SLURM enforces memory per node: a node's limit is ``mem-per-cpu`` times the job's
CPUs on it, and nothing says how many of them share rank 0's node. The request is therefore
``MEMORY_MARGIN`` times the largest rank's peak, enough wherever the ranks land; a retry
(``attempt`` > 1, after a job was killed, perhaps for memory) asks for ``RETRY_GROWTH`` more
per attempt.

Runtime (``runtime``, minutes): an upper bound of one iteration (every worker's injected delays
drawn by the run's own straggler model for its first iterations, with the slowest worker
waited for; every message through the master's single port when the run emulates one, or
through the slower link on real links; the gradient and metric arithmetic at a conservative
rate) times the iterations (``runtime.dilation`` times longer), plus the start (ranks, data,
scatter), times ``RUNTIME_MARGIN``, and at least ``RUNTIME_FLOOR_MIN``. Runs
checkpoint, so a job that still runs out of time is retried and resumes where it stopped.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcode.runfile.config import LinksConfig
from gradcode.runfile.plan import Plan
from gradcode.timing.links import PAYLOAD_FRACTION

MIB = 1024 * 1024
#: peak RSS of rank 0 and of a worker without data (Python, numpy, scipy, mpi4py and gradcode
#: imported; rank 0 also the data and model modules): 172 and 86 MiB measured in a world of 5
RANK0_BASE_MIB = 180.0
WORKER_BASE_MIB = 90.0
#: and MPI's state for every other rank, on each rank (measured, MPICH: about 0.18 MiB per
#: rank on rank 0 and 0.07 on a worker between worlds of 5, 85 and 157 ranks)
PER_RANK_MIB = 0.25
#: model-length float64 vectors a rank holds at once (iterate, gradient, optimizer state,
#: message buffers), counted generously
VECTORS = 16
#: copies of every message a receiver holds at once: the buffer posted for the next one, the
#: message held until the iteration decodes, and the decoder's stacked copy
RECEIVE_COPIES = 3
#: the request is this many times the estimated peak of the largest rank
MEMORY_MARGIN = 1.25
#: each retry asks for this fraction of the first request more (attempt 2: x1.5, 3: x2)
RETRY_GROWTH = 0.5
#: SLURM's memory unit is the MiB; requests are rounded up to a multiple of this
MEMORY_STEP_MIB = 64

#: minutes: no training job asks for less (queues, start-up, file systems)
RUNTIME_FLOOR_MIN = 10
#: the estimate of the whole job is multiplied by this
RUNTIME_MARGIN = 2.0
#: seconds to start the ranks and load the data before scattering
START_SECONDS = 60.0
#: bytes per second at which rank 0 scatters the workers' shares (pickled, one at a time)
SCATTER_BYTES_PER_SECOND = 100e6
#: floating-point operations per second a rank is assumed to sustain on sparse/dense
#: matrix-vector products (a conservative figure for one core)
FLOPS = 5e8
#: iterations whose injected delays are drawn to bound one iteration
DELAY_SAMPLES = 20


@dataclass(frozen=True)
class DataShape:
    """The size of a prepared data set, from its ``meta.json``."""

    rows: int
    features: int
    test_rows: int
    nnz: int
    test_nnz: int
    dense: bool

    @classmethod
    def from_meta(cls, meta: Mapping[str, Any]) -> DataShape:
        shapes, nnz = meta["shapes"], meta["nnz"]
        return cls(
            rows=int(shapes["X_train"][0]),
            features=int(shapes["X_train"][1]),
            test_rows=int(shapes["X_test"][0]),
            nnz=int(nnz["X_train"]),
            test_nnz=int(nnz["X_test"]),
            dense=meta["storage"] == "dense",
        )

    def matrix_bytes(self, rows: float, *, test: bool = False) -> float:
        """Bytes of ``rows`` rows of the training (or test) features as stored, plus labels:
        dense float64, or CSR (float64 values, int64 indices to be safe, row pointers)."""
        total_rows = self.test_rows if test else self.rows
        if total_rows == 0 or rows == 0:
            return 0.0
        if self.dense:
            return rows * (self.features + 1) * 8.0
        nnz = (self.test_nnz if test else self.nnz) * rows / total_rows
        return nnz * 16.0 + rows * 16.0

    @property
    def train_bytes(self) -> float:
        return self.matrix_bytes(self.rows)

    @property
    def test_bytes(self) -> float:
        return self.matrix_bytes(self.test_rows, test=True)


def partition_rows(plan: Plan, shape: DataShape) -> int:
    """Rows of the largest partition."""
    return math.ceil(shape.rows / plan.partitions)


def worker_share_bytes(plan: Plan, shape: DataShape, worker: int) -> float:
    """Bytes of the data ``worker`` receives: its partitions (or its dense coded data set)."""
    if worker in plan.config.stragglers.persistent:
        return 0.0
    rows = partition_rows(plan, shape)
    if plan.coded_data:
        return rows * shape.features * 8.0
    return shape.matrix_bytes(min(shape.rows, rows * len(plan.partitions_of(worker))))


def incoming_messages(plan: Plan, rank: int) -> int:
    """Messages rank ``rank`` receives in one iteration: rank 0 every worker's (every key's;
    of a tree, its top layer's), a tree node its children's, a flat worker none."""
    return plan.topology.incoming(plan.code, rank)


def rank_peaks_mib(plan: Plan, shape: DataShape) -> list[float]:
    """Estimated peak RSS of every rank (MiB): rank 0 first, then each worker."""
    vectors = VECTORS * shape.features * 8.0
    base = PER_RANK_MIB * plan.world_size
    message = plan.code.message_length(shape.features) * 8.0
    received = [
        RECEIVE_COPIES * incoming_messages(plan, rank) * message for rank in range(plan.world_size)
    ]
    shares = [worker_share_bytes(plan, shape, worker) for worker in range(plan.workers)]
    workers = []
    for worker, share in enumerate(shares):
        partials = len(plan.partitions_of(worker)) * shape.features * 8.0
        held = 2 * share + partials + vectors + received[worker + 1]
        workers.append(base + WORKER_BASE_MIB + held / MIB)
    rank0 = shape.train_bytes + shape.test_bytes + 2 * max(shares, default=0.0) + vectors
    rank0 += received[0]
    if not plan.coded_data and plan.config.runtime.data == "send":
        # the shared-memory window the workers on its node copy their rows from
        # (gradcode.train.shares): a second copy of the training rows while they do
        rank0 += shape.train_bytes
    if plan.coded_data:  # the densified partitions and every worker's coded set, together
        rank0 += shape.rows * shape.features * 8.0 + sum(shares)
    if plan.config.log.trajectory:  # the iterates, and their array in each checkpoint
        rank0 += 2 * plan.config.iterations * shape.features * 8.0
    return [base + RANK0_BASE_MIB + rank0 / MIB, *workers]


def mem_mb_per_cpu(plan: Plan, shape: DataShape, attempt: int = 1) -> int:
    """``--mem-per-cpu`` (MiB) of the job: ``MEMORY_MARGIN`` times the largest rank's estimated
    peak, ``RETRY_GROWTH`` more per retry, rounded up to ``MEMORY_STEP_MIB``."""
    need = MEMORY_MARGIN * max(rank_peaks_mib(plan, shape))
    need *= 1 + RETRY_GROWTH * (max(attempt, 1) - 1)
    return math.ceil(need / MEMORY_STEP_MIB) * MEMORY_STEP_MIB


def iteration_seconds(plan: Plan, shape: DataShape) -> float:
    """An upper bound of one iteration's wall-clock time (seconds): the slowest answering
    worker's injected delays (mean over the first ``DELAY_SAMPLES`` iterations) and arithmetic,
    every message serialised through the master's port, and the metrics on rank 0."""
    code = plan.code
    silent = set(plan.config.stragglers.persistent)
    answering = [worker for worker in range(plan.workers) if worker not in silent]
    source = plan.delay_source()
    width = code.message_length(shape.features) / shape.features
    keys = {worker: len(tuple(code.message_keys(worker))) for worker in answering}
    parts = {worker: len(plan.partitions_of(worker)) for worker in answering}
    samples = []
    for t in range(min(DELAY_SAMPLES, plan.config.iterations)):
        delays = source.delays(t)
        samples.append(
            max(
                (
                    delays.start[w]
                    + parts[w] * delays.compute[w]
                    + keys[w] * width * delays.comm[w]
                    for w in answering
                ),
                default=0.0,
            )
        )
    injected = float(np.mean(samples)) if samples else 0.0
    # the arithmetic: a product with the worker's rows and one with their transpose
    share_rows = partition_rows(plan, shape) * max(parts.values(), default=1)
    arithmetic = 4.0 * _nonzeros(shape, share_rows) / FLOPS
    port = 0.0
    bandwidth = plan.bandwidth
    if bandwidth is not None:
        vector = shape.features * 8.0 / bandwidth.rate(shape.features)
        messages = sum(keys.values())
        port = messages * (width * vector + bandwidth.latency)
    metrics = 0.0
    every = plan.config.log.metrics_every
    if every:
        metrics = 4.0 * (shape.nnz + shape.test_nnz) / FLOPS / every
    return injected + arithmetic + port + links_seconds(plan, shape) + metrics


def links_seconds(plan: Plan, shape: DataShape) -> float:
    """On real links (``network.links``), an upper bound of an iteration's communication: the
    model to every worker and every message back, one after the other through the slower of
    the master's and a worker's link at TCP's payload rate, each paying the latency. A tree or
    a ring sends less through any one link; 0 without stated links. Before this (2026-11-29)
    a dilated run on links was given the 10-minute floor: N = 84's CR at K = 32 needs more."""
    links = _links(plan)
    if links is None:
        return 0.0
    vector = (shape.features + 1) * 8.0
    width = plan.code.message_length(shape.features) / shape.features
    messages = sum(len(tuple(plan.code.message_keys(w))) for w in range(plan.workers))
    sent = plan.workers * vector + messages * width * vector
    return sent / _slower_payload(links) + (plan.workers + messages) * links.latency


def _links(plan: Plan) -> LinksConfig | None:
    """The run's stated real links, or ``None``."""
    network = plan.config.network
    return None if network is None else network.links


def _slower_payload(links: LinksConfig) -> float:
    """Bytes per second of messages through the slower of the master's and a worker's link."""
    return min(links.rate, links.master_rate) * PAYLOAD_FRACTION


def _nonzeros(shape: DataShape, rows: int) -> float:
    if shape.dense:
        return float(rows * shape.features)
    return shape.nnz * min(rows, shape.rows) / max(shape.rows, 1)


def start_seconds(plan: Plan, shape: DataShape) -> float:
    """Seconds before the first iteration: ranks, data, and the scatter of every share (on
    real links through the slower link, at ``runtime.dilation`` times its time)."""
    if plan.config.runtime.data == "load":  # every worker reads its own rows
        return START_SECONDS
    scattered = sum(worker_share_bytes(plan, shape, w) for w in range(plan.workers))
    links = _links(plan)
    if links is None:
        return START_SECONDS + scattered / SCATTER_BYTES_PER_SECOND
    through = scattered / min(SCATTER_BYTES_PER_SECOND, _slower_payload(links))
    return START_SECONDS + plan.config.runtime.dilation * through


def runtime_minutes(plan: Plan, shape: DataShape) -> int:
    """SLURM's ``--time`` (minutes) of the job: ``RUNTIME_MARGIN`` times the start and the
    iterations' upper bound (``runtime.dilation`` times longer in real seconds), at least
    ``RUNTIME_FLOOR_MIN``."""
    iterations = plan.config.iterations * iteration_seconds(plan, shape)
    seconds = start_seconds(plan, shape) + plan.config.runtime.dilation * iterations
    return max(RUNTIME_FLOOR_MIN, math.ceil(RUNTIME_MARGIN * seconds / 60))
