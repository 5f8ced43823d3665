"""Paper 001's model (Lee et al.; Reisizadeh et al., Section III-C): shifted-exponential
computation and single-port communication, for master-worker codes, CodedReduce and
Ring-AllReduce.

Computation, eq. (6): a node with ``d_i`` data points finishes after ``a d_i`` plus an
exponential time of rate ``mu / d_i``, i.e. ``d_i X_i`` with ``X_i = a + Exp(mu)`` per data
point. A node of a code with ``k`` partitions and load ``w_i`` partitions has
``d_i = data * w_i / k`` (``data`` is the data set size ``d``); a message that needs the first
``p`` partials of its worker is ready at ``data * p / k * X_i`` (``model.work_fractions``;
codes of the data, LCC, declare their own fraction).

Communication: a node receives from one other node at a time and a full-length vector takes
``tc`` (a message ``1 / m`` of the gradient: ``tc / m``). So

- master-worker codes (UMW = ``uncoded``, GC = ``crc``/``frc``/..., SGD = ``ignore-stragglers``
  waiting for ``N - S``): the master takes messages first ready first served
  (``queue.fifo_departures``) and ``code.completion_times`` on the reception times decides;
- tree codes (CodedReduce): the same at every parent of the tree
  (``tree.tree_outcome``);
- ring codes (Ring-AllReduce): ``2 (N - 1)`` segment transfers of
  ``tc / N`` after the slowest worker (the code's ``completion``).

``extras`` adds the code's own predictions under this model (``predicted_times``: Theorem 2's
bounds for CodedReduce), where ``a`` and ``mu`` are the same for every worker.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from gradcode.codes.base import GradientCode
from gradcode.codes.ring import RingCode
from gradcode.codes.tree import TreeCode
from gradcode.timing.distributions import PerWorker, ShiftedExponential
from gradcode.timing.model import (
    Draws,
    Outcome,
    TimingModel,
    per_worker,
    received_by,
    work_fractions,
)
from gradcode.timing.queue import fifo_departures
from gradcode.timing.tree import tree_outcome
from gradcode.topology import TopologyVisitor, topology_of


class SinglePortModel(TimingModel):
    """Computation ``d_i (a + Exp(mu))``, transfers of ``tc`` through single-port receivers."""

    name = "single-port"
    parameters: ClassVar[dict[str, str]] = {
        "a": "computation time shift per data point (seconds)",
        "mu": "exponential rate per data point: a node with d_i points has rate mu / d_i",
        "tc": "time to transfer one full-length vector from a node to its receiver",
        "data": "number of data points d in the data set",
    }

    def __init__(self, a: Any, mu: Any, tc: Any, data: Any) -> None:
        self.unit = ShiftedExponential(per_worker("a", a, positive=False), per_worker("mu", mu))
        self.tc = _scalar("tc", tc, positive=False)
        self.data = _scalar("data", data, positive=True)

    def params(self) -> dict[str, Any]:
        return {
            "a": self.unit.shift.as_param(),
            "mu": self.unit.rate.as_param(),
            "tc": self.tc,
            "data": self.data,
        }

    def check(self, scheme: Any) -> None:
        if not isinstance(scheme, GradientCode):
            raise ValueError(f"model {self.name} cannot simulate {type(scheme).__name__}")
        self.unit.check(scheme.n, scheme.name)

    def sample(self, rng: np.random.Generator, trials: int, workers: int) -> Draws:
        """``unit``: time per data point ``a + Exp(mu)`` of every worker, ``(trials, workers)``."""
        return {"unit": self.unit.sample(rng, trials, workers)}

    def prepare(self, scheme: Any) -> _RingRun | _TreeRun | _FlatRun:
        self.check(scheme)
        return topology_of(scheme).accept(_Runs(self.data, self.tc), scheme)

    def extras(self, scheme: Any) -> dict[str, float]:
        """The code's ``predicted_times`` under this model (CodedReduce: Theorem 2's bounds,
        ``o``-terms dropped, ``s >= 1``), where every worker has the same ``a`` and ``mu``."""
        if not (self.unit.shift.uniform and self.unit.rate.uniform):
            return {}
        params = {
            "a": self.unit.shift.scalar,
            "mu": self.unit.rate.scalar,
            "tc": self.tc,
            "data": self.data,
        }
        return scheme.predicted_times(self.name, params)


def _scalar(name: str, value: Any, *, positive: bool) -> float:
    parsed = PerWorker.parse(f"parameters.{name}", value, positive=positive)
    if parsed.workers() is not None:
        raise ValueError(f"parameters.{name}: must be a single number (got {value!r})")
    return parsed.scalar


class _Runs(TopologyVisitor["_RingRun | _TreeRun | _FlatRun"]):
    """``SinglePortModel.prepare``'s run of each topology."""

    def __init__(self, data: float, tc: float) -> None:
        self.data, self.tc = data, tc

    def flat(self, code: GradientCode) -> _FlatRun:
        return _FlatRun(code, self.data, self.tc)

    def tree(self, code: TreeCode) -> _TreeRun:
        return _TreeRun(code, self.data * code.loads() / code.k, self.tc)

    def ring(self, code: RingCode) -> _RingRun:
        return _RingRun(code, self.data / code.k, self.tc)


@dataclass
class _RingRun:
    ring: RingCode
    points: float  # data points per worker
    tc: float

    def run(self, draws: Draws) -> Outcome:
        times = self.ring.completion(draws["unit"] * self.points, self.tc)
        return Outcome(times, np.full(len(times), self.ring.messages()))


@dataclass
class _TreeRun:
    code: TreeCode
    points: np.ndarray  # data points per node, (N,)
    tc: float

    def run(self, draws: Draws) -> Outcome:
        return tree_outcome(self.code, draws["unit"] * self.points, self.tc)


@dataclass
class _FlatRun:
    code: GradientCode
    data: float
    tc: float

    def __post_init__(self) -> None:
        code = self.code
        keys = code.all_message_keys()
        self.worker = np.array([code.worker_of(key) for key in keys], dtype=np.intp)
        self.points = self.data * work_fractions(code)  # (keys,) data points each message needs

    def run(self, draws: Draws) -> Outcome:
        ready = draws["unit"][:, self.worker] * self.points
        arrivals = fifo_departures(ready, self.tc / self.code.m)
        times = self.code.completion_times(arrivals)
        return Outcome(times, received_by(arrivals, times))
