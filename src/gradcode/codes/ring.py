"""The interface of ring codes: no master, the workers all-reduce over a ring.

A ring code's workers each compute their partial gradient and reduce it with the others, one
segment at a time to their successor on the ring (Ring-AllReduce). What the runtime
(``gradcode.train``'s ring ranks) and the timing models need of such a code is this protocol:
its schedule (``rounds``, ``completion``), what crosses the links (``messages``), and how the
runtime reduces (``implementation``: the ring step by step, or MPI's own ``Allreduce``).
A code whose ``capabilities.topology`` is ``"ring"`` must satisfy it (checked by
``gradcode.codes.registry``).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

#: the methods a ring code's class must have (the attributes are set by its constructor)
RING_METHODS = ("rounds", "completion", "messages")


@runtime_checkable
class RingCode(Protocol):
    """What a ring code offers beside ``GradientCode`` (see the module docstring)."""

    n: int
    k: int
    #: ``explicit`` (the ring step by step) or ``mpi`` (``MPI_Allreduce``)
    implementation: str

    def rounds(self) -> int:
        """Steps of the schedule, each a segment of ``1 / n`` of the vector per worker."""
        ...

    def completion(self, compute: np.ndarray, tc: float) -> np.ndarray:
        """When every worker holds the sum, per trial, for ``compute[t, i]`` seconds of worker
        ``i``'s work and ``tc`` seconds per full-length vector over one link, ``(trials,)``."""
        ...

    def messages(self) -> int:
        """Segments that cross the ring's links in one reduction."""
        ...
