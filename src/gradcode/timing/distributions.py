"""Shifted-exponential times with per-worker (or per-type) parameters.

Every model of the papers is built from one distribution: ``X = shift + Exp(rate)`` (paper 000:
``T1 = t1 + Exp(lambda1)`` per data subset and ``T2 = t2 + Exp(lambda2)`` per full-length
vector; paper 001, eq. (6): a node with ``d_i`` data points computes for
``d_i (a + Exp(mu))``, i.e. shift ``a d_i`` and rate ``mu / d_i``; paper 002, eq. (5): ``j``
computations take ``j (alpha + Exp(mu))``). Heterogeneous workers (papers 003 and 004) get
their own ``shift`` and ``rate``.

A parameter is given in one of three forms (YAML or Python):

- a number: every worker;
- a list with one number per worker;
- ``{counts: [c_1, ..., c_T], values: [v_1, ..., v_T]}``: ``c_1`` workers of the first type
  (workers ``0 .. c_1 - 1``), then ``c_2`` of the second, ...

``PerWorker.for_workers(n)`` expands it to shape ``(n,)`` and says which key is wrong when the
count does not match a scheme's number of workers.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np


def _number(name: str, value: Any, *, positive: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise ValueError(f"{name}: must be a number (got {value!r})")
    value = float(value)
    if not math.isfinite(value) or value < 0 or (positive and value == 0):
        bound = "> 0" if positive else ">= 0"
        raise ValueError(f"{name}: must be a finite number {bound} (got {value!r})")
    return value


@dataclass(frozen=True)
class PerWorker:
    """A model parameter that may differ between workers.

    ``values`` has one entry (all workers), one per worker (``counts is None``), or one per
    type (``counts[t]`` workers of type ``t``, in worker order).
    """

    name: str
    values: tuple[float, ...]
    counts: tuple[int, ...] | None = None
    per_worker: bool = False

    @classmethod
    def parse(cls, name: str, value: Any, *, positive: bool = True) -> PerWorker:
        """Validate ``value`` (number, list, or ``{counts, values}``) for the key ``name``."""
        if isinstance(value, Mapping):
            unknown = sorted(set(value) - {"counts", "values"})
            if unknown or set(value) != {"counts", "values"}:
                raise ValueError(
                    f"{name}: per type needs exactly the keys counts and values (got "
                    f"{sorted(value)})"
                )
            counts, values = value["counts"], value["values"]
            if not _is_list(counts) or not _is_list(values) or len(counts) != len(values):
                raise ValueError(f"{name}: counts and values must be lists of equal length")
            if not counts:
                raise ValueError(f"{name}.counts: must not be empty")
            parsed_counts = []
            for index, count in enumerate(counts):
                if isinstance(count, bool) or not isinstance(count, int | np.integer) or count < 1:
                    raise ValueError(
                        f"{name}.counts[{index}]: must be an integer >= 1 (got {count!r})"
                    )
                parsed_counts.append(int(count))
            parsed = tuple(
                _number(f"{name}.values[{i}]", v, positive=positive) for i, v in enumerate(values)
            )
            return cls(name, parsed, tuple(parsed_counts))
        if _is_list(value):
            if not value:
                raise ValueError(f"{name}: must not be an empty list")
            parsed = tuple(
                _number(f"{name}[{i}]", v, positive=positive) for i, v in enumerate(value)
            )
            return cls(name, parsed, None, per_worker=True)
        return cls(name, (_number(name, value, positive=positive),))

    @property
    def uniform(self) -> bool:
        """Whether every worker has the same value."""
        return len(set(self.values)) == 1

    @property
    def scalar(self) -> float:
        """The common value; only for ``uniform`` parameters."""
        if not self.uniform:
            raise ValueError(f"{self.name}: differs between workers")
        return self.values[0]

    def workers(self) -> int | None:
        """The number of workers the parameter describes (``None``: any)."""
        if self.counts is not None:
            return sum(self.counts)
        return len(self.values) if self.per_worker else None

    def check(self, workers: int, scheme: str) -> None:
        """Raise ``ValueError`` unless the parameter fits a scheme with ``workers`` workers."""
        expected = self.workers()
        if expected is not None and expected != workers:
            raise ValueError(
                f"{self.name}: describes {expected} workers but {scheme} has {workers}"
            )

    def for_workers(self, workers: int) -> np.ndarray:
        """The value of every worker, shape ``(workers,)``."""
        self.check(workers, "the scheme")
        if self.counts is not None:
            return np.repeat(np.array(self.values), self.counts)
        if self.per_worker:
            return np.array(self.values)
        return np.full(workers, self.values[0])

    def as_param(self) -> Any:
        """The YAML-equivalent form (for the sidecar of a result table)."""
        if self.counts is not None:
            return {"counts": list(self.counts), "values": list(self.values)}
        return list(self.values) if self.per_worker else self.values[0]


def _is_list(value: Any) -> bool:
    return isinstance(value, Sequence | np.ndarray) and not isinstance(value, str | bytes)


@dataclass(frozen=True)
class ShiftedExponential:
    """``shift + Exp(rate)`` independently per worker (and trial)."""

    shift: PerWorker
    rate: PerWorker

    def check(self, workers: int, scheme: str) -> None:
        self.shift.check(workers, scheme)
        self.rate.check(workers, scheme)

    def sample(self, rng: np.random.Generator, trials: int, workers: int) -> np.ndarray:
        """Draws of shape ``(trials, workers)``: column ``i`` uses worker ``i``'s parameters."""
        draws = rng.standard_exponential((trials, workers))
        # in place: these arrays are the biggest the simulator holds
        if self.rate.uniform:
            draws *= 1.0 / self.rate.scalar
        else:
            draws /= self.rate.for_workers(workers)
        if self.shift.uniform:
            draws += self.shift.scalar
        else:
            draws += self.shift.for_workers(workers)
        return draws

    def means(self, workers: int) -> np.ndarray:
        """``shift + 1 / rate`` per worker, shape ``(workers,)``."""
        return self.shift.for_workers(workers) + 1.0 / self.rate.for_workers(workers)
