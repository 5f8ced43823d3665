"""Each worker's expected time per data subset, measured through the timing model itself.

Heterogeneous allocations (``GradientCode.for_worker_times``) need every worker's expected time
to compute one data subset (``1 / n`` of the data). A model may know it in closed form (the
master-worker model: ``t1 + 1 / lambda1``), but only through its own attributes; this asks any
model the same question through its public interface instead, with probe codes:

- ``_Probe(n, worker, load)``: only ``worker`` sends, one message that needs ``load`` of ``k =
  n`` partitions (``load`` data subsets), and the gradient counts as decoded when it arrives;
  so the probe's completion time is that worker's time to compute ``load`` subsets and send
  one message, alone on the network.
- the worker's time per subset is ``E[probe(2)] - E[probe(1)]``: the sending time (and any
  other cost per message) cancels, and with common random numbers (the same draws for every
  probe) so does most of the Monte Carlo noise. Under the master-worker model the difference
  is exactly ``T1_i`` trial by trial, so the estimate is ``t1_i + 1 / lambda1_i`` within
  ``1 / sqrt(trials)`` of its spread.

Workers of one type (equal parameters, ``workers.worker_types``) get the mean of their type's
estimates, so that the noise does not make equal workers look different, and the times are
scaled so that the fastest type has time 1, rounded to three significant digits: the form a
run file shows (``binary``'s ``times``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from gradcode.codes import DecodeResult, GradientCode
from gradcode.recommend.simulation import estimate_codes
from gradcode.recommend.workers import worker_types
from gradcode.timing import TimingModel

#: trials of the probes (the estimate's relative error is below ``1 / sqrt(PROBE_TRIALS)``)
PROBE_TRIALS = 16384


class _Probe(GradientCode):
    """Only ``worker`` sends; its message needs its first ``load`` of ``k = n`` partitions."""

    name = "worker-time-probe"

    def __init__(self, n: int, worker: int, load: int) -> None:
        self.n, self.k, self.s, self.m = n, n, 0, 1
        self.worker, self.work = worker, load

    def partitions(self, worker: int) -> tuple[int, ...]:
        if worker != self.worker:
            return (worker,)
        return tuple((worker + j) % self.n for j in range(self.work))

    def message_keys(self, worker: int) -> tuple[int, ...]:
        return (worker,) if worker == self.worker else ()

    def encode(self, worker: int, partials: np.ndarray) -> np.ndarray:
        raise NotImplementedError("a timing probe sends nothing real")

    def is_decodable(self, keys: Iterable[int]) -> bool:
        return self.worker in set(keys)

    def decode_result(self, messages: Mapping[int, np.ndarray], length: int) -> DecodeResult:
        raise NotImplementedError("a timing probe decodes nothing")

    def completion_times(self, arrivals: np.ndarray) -> np.ndarray:
        return self._arrivals(arrivals)[:, 0]


@dataclass(frozen=True)
class WorkerTimes:
    """The result of ``worker_times``: ``times`` ``(n,)`` relative (fastest type 1), or the
    ``reason`` none could be measured; ``types`` ``(n,)`` the worker types."""

    times: tuple[float, ...] | None
    types: tuple[int, ...]
    reason: str | None = None


def worker_times(model: TimingModel, n: int, *, seed: int = 0) -> WorkerTimes | None:
    """Relative expected time per data subset of each of ``n`` workers (module docstring).

    ``None`` for a homogeneous cluster (no parameter differs between workers).
    """
    types = worker_types(model, n)
    if types is None:
        return None
    kinds = tuple(int(t) for t in types)
    probes = [_Probe(n, worker, load) for load in (1, 2) for worker in range(n)]
    try:
        for probe in probes:
            model.check(probe)
    except ValueError as error:
        return WorkerTimes(None, kinds, f"the model cannot time one worker alone ({error})")
    rows = estimate_codes(model, probes, trials=PROBE_TRIALS, seed=seed, confidence=0.95)
    means = np.array([row.mean_time for row in rows]).reshape(2, n)
    per_subset = means[1] - means[0]
    by_type = np.array([per_subset[types == t].mean() for t in range(int(types.max()) + 1)])
    if not (np.all(np.isfinite(by_type)) and np.all(by_type > 0)):
        return WorkerTimes(
            None, kinds, "the model's times do not grow with a worker's data, so no load follows"
        )
    relative = by_type / by_type.min()
    return WorkerTimes(tuple(float(f"{relative[t]:.3g}") for t in types), kinds)
