"""How every worker gets its share of the training data before the run starts (phase 2 of
``gradcode.train.run``): ``{partition: (X_p, y_p)}`` of its own partitions, or its coded set
under ``CODED_DATA`` (LCC).

Workers that MPI puts on rank 0's node (``MPI_COMM_TYPE_SHARED``) take their rows themselves
from one shared-memory window that rank 0 fills with the training rows once; the others
receive a message from rank 0, one worker at a time. Twenty workers of GC at s = 10 on the
GISETTE stand-in (each holding 11 of 20 partitions: 564 MB pickled in all) waited 7.5 s for
rank 0 to slice, pickle and send every share through MPI with 21 ranks on 2 cores; the window
holds the 50 MB of rows once and the workers copy their own in parallel (measured on
``docs/measurements/ci-time.md``, "The main job, by rule"). What each worker holds is the same
either way: the same rows, sliced by the same operation.

A coded set is computed by rank 0 (``encode_data``), so it is always sent; so is every share
when the rows' type has no window layout here or ``/dev/shm`` has not room for it. Under
``runtime.data: load`` every worker loads the prepared data itself.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from mpi4py import MPI

from gradcode.runfile.plan import CODED_DATA, Plan
from gradcode.sparsity import is_sparse

if TYPE_CHECKING:
    from gradcode.runfile.dataset import TrainingData

#: seconds between polls while waiting for rank 0 before the run starts: real ones, for a
#: dilated poll (``gradcode.dilation``) would only slow the start, worker after worker
IDLE_POLL = 0.01
DATA_TAG = 77
#: where MPICH and Open MPI put a shared-memory window on Linux
SHARED_MEMORY = "/dev/shm"
#: the window may take this share of the free shared memory at most (MPI's own segments and
#: the workers' copies need the rest)
SHARED_MEMORY_SHARE = 0.5
#: byte alignment of each array in the window
ALIGN = 64


@dataclass(frozen=True)
class _Array:
    offset: int
    shape: tuple[int, ...]
    dtype: str

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64)) * np.dtype(self.dtype).itemsize


@dataclass(frozen=True)
class _Layout:
    """Where the training rows lie in the window: a dense matrix (``matrix``) or CSR's three
    arrays (``data``, ``indices``, ``indptr``; of class ``csr_class``), the labels
    (``labels``); the rows' ``shape`` and the partitions' row indices."""

    arrays: dict[str, _Array]
    shape: tuple[int, int]
    csr_class: str | None
    partitions: list[np.ndarray]
    nbytes: int


def receive_share(
    world: MPI.Comm, plan: Plan, data: TrainingData | None
) -> tuple[dict[int, Any], dict[str, int]]:
    """This rank's share (empty on rank 0, on spares and on persistent stragglers) and, on
    rank 0, how many workers got theirs each way (``window``, ``message``, ``load``; the
    summary's ``data_delivery``); every rank of ``world`` calls it, rank 0 with ``data``."""
    workers = plan.workers
    if plan.config.runtime.data == "load":
        return _load(world, plan), {"load": workers}
    if plan.coded_data:
        return _by_message(world, plan, data, range(workers)), {"message": workers}
    node = world.Split_type(MPI.COMM_TYPE_SHARED, key=world.Get_rank())
    try:
        # the node's rank 0 is its lowest world rank: world rank 0 where it is a member
        with_master = node.bcast(world.Get_rank() == 0, root=0)
        layout = None
        if with_master:
            layout = node.bcast(_layout(data) if world.Get_rank() == 0 else None, root=0)
        if layout is None:
            return _by_message(world, plan, data, range(workers)), {"message": workers}
        members = set(node.allgather(world.Get_rank()))
        near = sum(1 for worker in range(workers) if worker + 1 in members)
        share = _through_window(world, node, plan, data, layout, members)
        return share, {"window": near, "message": workers - near}
    finally:
        node.Free()


def worker_share(
    plan: Plan, data: TrainingData, worker: int, coded: list[tuple[Any, Any]] | None = None
) -> dict[int, Any]:
    """What ``worker`` holds: ``{partition: (X_p, y_p)}``, or its coded set under
    ``CODED_DATA`` (``coded``: every worker's, else encoded here)."""
    if plan.coded_data:
        if coded is None:
            coded = _coded_data(plan, data)
        return {CODED_DATA: coded[worker]}
    return {p: data.part(p) for p in plan.partitions_of(worker)}


def _load(world: MPI.Comm, plan: Plan) -> dict[int, Any]:
    """``runtime.data: load``: the same partitions, from the prepared data rank 0 made."""
    worker = world.Get_rank() - 1
    if not 0 <= worker < plan.workers or worker in set(plan.config.stragglers.persistent):
        return {}
    from gradcode.runfile.dataset import load_training_data

    config = plan.config
    return worker_share(
        plan, load_training_data(config.data, plan.partitions, config.model.kind), worker
    )


def _by_message(
    world: MPI.Comm, plan: Plan, data: TrainingData | None, workers: range | list[int]
) -> dict[int, Any]:
    """Rank 0 sends ``workers``' shares, one at a time: posting every send at once would hold
    every worker's pickled copy on rank 0 together (GC on the large synthetic set would need
    twice the machine's memory); each of those workers receives its own."""
    rank = world.Get_rank()
    if rank != 0:
        if rank - 1 not in workers:
            return {}
        while not world.Iprobe(source=0, tag=DATA_TAG):
            time.sleep(IDLE_POLL)  # rank 0 may pickle the others' data first: do not spin
        return world.recv(source=0, tag=DATA_TAG)
    assert data is not None
    persistent = set(plan.config.stragglers.persistent)
    coded = _coded_data(plan, data) if plan.coded_data else None
    for worker in workers:
        mine = {} if worker in persistent else worker_share(plan, data, worker, coded)
        world.send(mine, dest=worker + 1, tag=DATA_TAG)
        del mine
    return {}


def _coded_data(plan: Plan, data: TrainingData) -> list[tuple[Any, Any]]:
    """A data-coding code (LCC): every worker's coded data set from the ``k`` partitions
    (dense)."""
    parts = [data.part(p) for p in range(plan.partitions)]
    X = [X_p.toarray() if is_sparse(X_p) else np.asarray(X_p) for X_p, _ in parts]
    return plan.code.encode_data(X, [y_p for _, y_p in parts])


def _arrays(data: TrainingData) -> dict[str, np.ndarray] | None:
    """The arrays the window holds for ``data``'s training rows (a dense matrix, or CSR's
    three arrays, and the labels), or ``None`` when the rows are neither."""
    X = data.X_train
    if is_sparse(X):
        if X.format != "csr":
            return None
        arrays = {"data": X.data, "indices": X.indices, "indptr": X.indptr}
    elif isinstance(X, np.ndarray):
        arrays = {"matrix": X}
    else:
        return None
    return arrays | {"labels": data.y_train}


def _layout(data: TrainingData | None) -> _Layout | None:
    """The window's layout for ``data``'s training rows, or ``None`` (send them instead) when
    they are neither a dense array nor CSR, or the shared memory has not room for them."""
    assert data is not None
    parts = _arrays(data)
    if parts is None:
        return None
    arrays, offset = {}, 0
    for name, array in parts.items():
        arrays[name] = _Array(offset, tuple(array.shape), array.dtype.str)
        offset += -(-arrays[name].nbytes // ALIGN) * ALIGN
    try:
        free = os.statvfs(SHARED_MEMORY)
    except OSError:
        return None
    if offset > SHARED_MEMORY_SHARE * free.f_bavail * free.f_frsize:
        return None
    X = data.X_train
    csr_class = type(X).__name__ if "matrix" not in parts else None
    shape = (int(X.shape[0]), int(X.shape[1]))
    return _Layout(arrays, shape, csr_class, list(data.partitions), max(offset, 1))


def _through_window(
    world: MPI.Comm,
    node: MPI.Comm,
    plan: Plan,
    data: TrainingData | None,
    layout: _Layout,
    members: set[int],
) -> dict[int, Any]:
    """Rank 0 fills the window; the workers on its node take their rows from it while rank 0
    sends the others theirs."""
    rank = world.Get_rank()
    window = MPI.Win.Allocate_shared(layout.nbytes if rank == 0 else 0, 1, comm=node)
    try:
        buffer, _ = window.Shared_query(0)
        memory = np.frombuffer(buffer, dtype=np.uint8, count=layout.nbytes)
        views = {name: _view(memory, array) for name, array in layout.arrays.items()}
        if rank == 0:
            assert data is not None
            _fill(views, data)
        _sleeping_barrier(node)
        share: dict[int, Any] = {}
        if rank == 0:
            away = [w for w in range(plan.workers) if w + 1 not in members]
            _by_message(world, plan, data, away)
        elif 0 <= rank - 1 < plan.workers:
            worker = rank - 1
            if worker not in set(plan.config.stragglers.persistent):
                share = _take(plan, worker, layout, views)
        # no worker may still read the window when it is freed
        _sleeping_barrier(node)
        del views, memory, buffer
    finally:
        window.Free()
    return share


def _sleeping_barrier(comm: MPI.Comm) -> None:
    """A barrier whose waiting ranks sleep: a spinning one would take the cores from the
    workers still copying their rows."""
    request = comm.Ibarrier()
    while not request.Test():
        time.sleep(IDLE_POLL)


def _view(memory: np.ndarray, array: _Array) -> np.ndarray:
    chunk = memory[array.offset : array.offset + array.nbytes]
    return chunk.view(np.dtype(array.dtype)).reshape(array.shape)


def _fill(views: dict[str, np.ndarray], data: TrainingData) -> None:
    arrays = _arrays(data)
    assert arrays is not None  # the layout was made from them
    for name, array in arrays.items():
        views[name][...] = array


def _take(plan: Plan, worker: int, layout: _Layout, views: dict[str, np.ndarray]) -> dict[int, Any]:
    """``worker``'s ``{partition: (X_p, y_p)}``, copied out of the window by the same
    indexing as ``TrainingData.part``."""
    if layout.csr_class is None:
        X = views["matrix"]
    else:
        from scipy import sparse

        matrix_class = getattr(sparse, layout.csr_class)
        X = matrix_class(
            (views["data"], views["indices"], views["indptr"]), shape=layout.shape, copy=False
        )
    y = views["labels"]
    share = {}
    for p in plan.partitions_of(worker):
        rows = layout.partitions[p]
        share[p] = (X[rows], y[rows])
    return share
