"""What a run gave the fit: per worker, observations of paper 000's times (complete or
censored), and per iteration the run's own measures (overhead, rates, transfers).
``gradcode.fit.observations`` reads them from a run's logs and says how each is measured.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gradcode.fit.replay import TreeIterations
from gradcode.topology import topology_named

FIELDS = ("subsets", "fraction", "threshold", "observed", "compute", "comm", "iteration")


@dataclass
class WorkerObservations:
    """One worker's observations, one entry per (run, iteration), each list of equal length.

    ``subsets``: ``p``; ``fraction``: ``q``; ``threshold``: ``c``, seconds (an observed ``y`` is
    at most ``c``, a censored one exceeds it); ``observed``: whether the first message arrived;
    ``compute``: ``x1``; ``comm``: ``x2`` (both ``nan`` when censored).
    """

    subsets: list[float] = field(default_factory=list)
    fraction: list[float] = field(default_factory=list)
    threshold: list[float] = field(default_factory=list)
    observed: list[bool] = field(default_factory=list)
    compute: list[float] = field(default_factory=list)
    comm: list[float] = field(default_factory=list)
    #: a label of the (run, iteration) of every observation: the bootstrap replays which
    #: workers an iteration waited for
    iteration: list[int] = field(default_factory=list)

    def arrays(self) -> dict[str, np.ndarray]:
        """The lists as arrays of shape ``(observations,)``."""
        return {
            "subsets": np.array(self.subsets, dtype=np.float64),
            "fraction": np.array(self.fraction, dtype=np.float64),
            "threshold": np.array(self.threshold, dtype=np.float64),
            "observed": np.array(self.observed, dtype=bool),
            "compute": np.array(self.compute, dtype=np.float64),
            "comm": np.array(self.comm, dtype=np.float64),
            "iteration": np.array(self.iteration, dtype=np.int64),
        }

    def extend(self, other: WorkerObservations) -> None:
        for name in FIELDS:
            getattr(self, name).extend(getattr(other, name))


@dataclass(frozen=True)
class RunObservations:
    """What one run directory gave: per worker observations and per iteration overheads."""

    directory: str
    scheme: str
    params: dict[str, Any]
    workers: int
    one_clock: bool
    comm_observed: bool
    iterations: int
    per_worker: tuple[WorkerObservations, ...]
    #: per iteration, measured minus the code's completion time on the observed ``y``, seconds
    overhead: tuple[float, ...]
    #: per iteration (same order): the measured iteration time, seconds
    measured: tuple[float, ...]
    #: per worker, the highest payload rate of its results: the least contended transfer,
    #: about its link's rate (bytes per second; one clock only)
    upload_rate: tuple[float | None, ...]
    #: the master's sending rate of the model: per iteration, the copies sent (one per
    #: worker) times the model's bytes over when the last one arrived; the median (one clock)
    download_rate: float | None
    #: per worker, the median ``started`` (seconds after the iteration began; one clock only)
    model_received: tuple[float | None, ...]
    #: the run's injected straggler model (``config.stragglers``) as logged
    injected: dict[str, Any]
    #: when the workers had the model, the ``j``-th earliest's median over the iterations in
    #: which every worker answered (seconds after the iteration began; one clock), else None
    start_order: tuple[float, ...] | None
    #: per iteration, measured time after the decodable set arrived (decoding, the update)
    finish: tuple[float, ...]
    #: the gradient's length ``l`` (the model sent is ``l + 1`` float64s)
    features: int
    #: whether the run's messages went over real links (``network`` in its run file)
    links: bool
    #: the code's ``topology``: ``flat``, ``tree`` or ``ring``
    topology: str = "flat"
    #: per worker, every result's ``(bytes, transfer seconds)`` (one clock; ``fit.latency``),
    #: the transfer lengthened by the worker's ``head_starts``
    upload_transfers: tuple[tuple[tuple[float, float], ...], ...] = ()
    #: per worker, its link's token-bucket head start added to its transfers (seconds; 0
    #: off the emulated cluster)
    head_starts: tuple[float, ...] = ()
    #: per iteration, the model's copies the master sent, ``(bytes, seconds until the last
    #: worker had its copy)`` (one clock; ``fit.links``)
    downloads: tuple[tuple[float, float], ...] = ()
    #: how the model reached the workers (``summary.json``'s ``distribution``; before it was
    #: recorded, copies: ``isend``)
    distribution: str = "isend"
    #: a tree run's iterations, for the KS bootstrap that replays its decision
    tree: TreeIterations | None = None

    @property
    def direct(self) -> bool:
        """Whether every result went straight from its worker to the master
        (``Topology.direct``: a flat run)."""
        return topology_named(self.topology).direct

    @property
    def separable(self) -> bool:
        """Whether ``X1`` and ``X2`` are observed apart (tree and ring runs): ``threshold``
        then censors the computation alone and ``comm`` is complete wherever it is finite."""
        return not self.direct
