"""Master-worker timing (paper 000, Section 5; paper 002, Section IV; heterogeneous workers).

Worker ``i`` computes each data subset in ``T1_i = t1_i + Exp(lambda1_i)`` (the same time for
all of its subsets, paper 000's assumption 1), so it has its first ``j`` subsets after
``j T1_i``. Sending a full-length vector takes ``T2_i = t2_i + Exp(lambda2_i)``, and a message
of a code with communication reduction ``m`` (length ``1 / m`` of the gradient) takes
``T2_i / m`` (assumption 2). All ``T1_i``, ``T2_i`` are independent (assumption 3). Every
worker has its own link to the master (links do not contend); a worker sending several
messages (GC-MMC) sends them in order, each as soon as its partials are computed and the
previous one has left: ``A_j = max(A_(j-1), prefix_j T1_i) + T2_i / m``.

Paper 002's model is the computation part alone (its eq. 5: ``j`` partial gradients take
``j (alpha + Exp(mu))``): ``lambda1 = mu``, ``t1 = alpha`` and no ``lambda2``/``t2``.

Units. ``T1`` is the time of one data *subset*, ``1 / n`` of the data set (both papers take
``k = n``). A code with ``k != n`` partitions has partitions of ``n / k`` subsets each, so its
message needing ``p`` partials is ready at ``p (n / k) T1_i``; this keeps the total work of
different codes comparable. Codes that code the data (LCC) declare their work per message
(``model.work_fractions``): an LCC worker processes one coded part, ``n / k`` subsets.

Message arrival times go to ``code.completion_times`` (the code's decodability rule); the
communication load is the number of messages that arrived by then.

``overhead`` (optional, default 0: the papers have none) is a constant number of seconds added
to every completion time: the cost of a runtime's own iteration (the model's download,
decoding, the update), which a model fitted to a cluster's runs (``gradcode timing fit``)
measures, so that its predictions are of measured iteration times.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from gradcode.codes.base import GradientCode
from gradcode.timing.distributions import ShiftedExponential
from gradcode.timing.model import (
    Draws,
    Outcome,
    TimingModel,
    per_worker,
    received_by,
    work_fractions,
)
from gradcode.topology import topology_of


class MasterWorkerModel(TimingModel):
    """Shifted-exponential computation per subset plus optional communication per message."""

    name = "master-worker"
    parameters: ClassVar[dict[str, str]] = {
        "lambda1": "rate of the time T1 to compute one data subset (paper 002: mu)",
        "t1": "shift of T1 (paper 002: alpha)",
        "lambda2": "rate of the time T2 to send a full-length vector (omit: instantaneous)",
        "t2": "shift of T2 (given together with lambda2)",
        "overhead": "constant time added to every iteration: a runtime's own cost (default 0)",
    }
    optional = frozenset({"lambda2", "t2", "overhead"})
    #: seconds added to every iteration; a class default too, so that subclasses written
    #: before it existed (plug-ins that set their own attributes) keep working
    overhead: float = 0.0

    def __init__(
        self, lambda1: Any, t1: Any, lambda2: Any = None, t2: Any = None, overhead: Any = 0.0
    ) -> None:
        if (
            isinstance(overhead, bool)
            or not isinstance(overhead, int | float)
            or not np.isfinite(overhead)
            or overhead < 0
        ):
            raise ValueError(
                f"parameters.overhead: must be a finite number >= 0 (got {overhead!r})"
            )
        self.overhead = float(overhead)
        self.compute = ShiftedExponential(
            per_worker("t1", t1, positive=False), per_worker("lambda1", lambda1)
        )
        if (lambda2 is None) != (t2 is None):
            raise ValueError("parameters.lambda2 and parameters.t2 must be given together")
        self.comm = None
        if lambda2 is not None:
            self.comm = ShiftedExponential(
                per_worker("t2", t2, positive=False), per_worker("lambda2", lambda2)
            )

    def params(self) -> dict[str, Any]:
        params = {"lambda1": self.compute.rate.as_param(), "t1": self.compute.shift.as_param()}
        if self.comm is not None:
            params |= {"lambda2": self.comm.rate.as_param(), "t2": self.comm.shift.as_param()}
        if self.overhead:
            params["overhead"] = self.overhead
        return params

    def check(self, scheme: Any) -> None:
        if not isinstance(scheme, GradientCode) or not topology_of(scheme).collects_results:
            # a ring has no master to wait for; its schedule is in the single-port model
            raise ValueError(f"model {self.name} simulates gradient codes, not {scheme.name}")
        self.compute.check(scheme.n, scheme.name)
        if self.comm is not None:
            self.comm.check(scheme.n, scheme.name)

    def sample(self, rng: np.random.Generator, trials: int, workers: int) -> Draws:
        """``compute``: ``T1`` and (with communication) ``comm``: ``T2``, ``(trials, workers)``."""
        draws = {"compute": self.compute.sample(rng, trials, workers)}
        if self.comm is not None:
            draws["comm"] = self.comm.sample(rng, trials, workers)
        return draws

    def prepare(self, scheme: GradientCode) -> _MasterWorkerRun:
        self.check(scheme)
        return _MasterWorkerRun(scheme, self.overhead)

    def heterogeneous(self) -> bool:
        """Whether some parameter differs between workers."""
        dists = [self.compute] if self.comm is None else [self.compute, self.comm]
        return not all(d.shift.uniform and d.rate.uniform for d in dists)

    def extras(self, scheme: GradientCode) -> dict[str, float]:
        """With heterogeneous workers: the least and largest expected finishing time of a
        worker (its last message's arrival; for several messages, computation plus all their
        transfers back to back, an upper bound), which a load allocation for heterogeneous
        workers (paper 003, Section VI) equalises."""
        if not self.heterogeneous():
            return {}
        work = np.zeros(scheme.n)
        np.maximum.at(work, _workers(scheme), work_fractions(scheme) * scheme.n)
        finish = work * self.compute.means(scheme.n)
        if self.comm is not None:
            sent = np.array([len(scheme.message_keys(i)) for i in range(scheme.n)])
            finish = finish + sent * self.comm.means(scheme.n) / scheme.m
        return {
            "expected_finish_min": float(finish.min()),
            "expected_finish_max": float(finish.max()),
        }


def _workers(code: GradientCode) -> np.ndarray:
    """The worker of every message key, ``(keys,)``."""
    return np.array([code.worker_of(key) for key in code.all_message_keys()], dtype=np.intp)


@dataclass
class _MasterWorkerRun:
    """One code under the master-worker model (key layout computed once)."""

    code: GradientCode
    overhead: float = 0.0

    def __post_init__(self) -> None:
        code = self.code
        keys = code.all_message_keys()
        self.worker = _workers(code)
        # (keys,): data subsets (1/n of the data each) every message waits for
        self.subsets = work_fractions(code) * code.n
        # flat codes (one message per worker, key = worker) skip the gather
        self.flat = len(keys) == code.n and bool((self.worker == np.arange(code.n)).all())
        # position of every key among its worker's messages, and its predecessor's index
        position = np.zeros(len(keys), dtype=np.intp)
        previous = np.full(len(keys), -1, dtype=np.intp)
        last: dict[int, int] = {}
        for q, worker in enumerate(self.worker.tolist()):
            if worker in last:
                previous[q] = last[worker]
                position[q] = position[last[worker]] + 1
            last[worker] = q
        self.rounds = [np.flatnonzero(position == p) for p in range(int(position.max()) + 1)]
        self.previous = previous

    def arrivals(self, draws: Draws) -> np.ndarray:
        """When every message key reaches the master, ``(trials, keys)``."""
        compute = draws["compute"] if self.flat else draws["compute"][:, self.worker]
        ready = compute * self.subsets
        if "comm" not in draws:
            return ready
        comm = draws["comm"] if self.flat else draws["comm"][:, self.worker]
        send = comm * (1.0 / self.code.m)
        if len(self.rounds) == 1:
            ready += send
            return ready
        # a worker's link carries its messages one after the other
        arrivals = np.empty_like(ready)
        first = self.rounds[0]
        arrivals[:, first] = ready[:, first] + send[:, first]
        for keys in self.rounds[1:]:
            start = np.maximum(arrivals[:, self.previous[keys]], ready[:, keys])
            arrivals[:, keys] = start + send[:, keys]
        return arrivals

    def message_arrivals(self, draws: Draws) -> np.ndarray:
        """``arrivals``: the ``Prepared`` interface's name for it."""
        return self.arrivals(draws)

    def run(self, draws: Draws) -> Outcome:
        arrivals = self.arrivals(draws)
        times = self.code.completion_times(arrivals)
        received = received_by(arrivals, times)
        if self.overhead:
            times = times + self.overhead
        return Outcome(times, received)
