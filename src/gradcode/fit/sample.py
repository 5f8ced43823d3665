"""The observations a fit of paper 000's shifted-exponential times takes (``Sample``), checked
where they enter (``FitError``, one line naming the field); ``gradcode.fit.shifted_exponential``
fits them and its docstring states the model.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcode.errors import UserError


class FitError(UserError):
    """Observations a timing model cannot be fitted to; one line naming the field or
    component."""


@dataclass(frozen=True, eq=False)
class Sample:
    """Observations of one run or a pool of runs, all arrays of shape ``(J,)``.

    ``subsets`` p_j > 0; ``fraction`` q_j >= 0 (message size in full-length vectors);
    ``threshold`` c_j >= 0, ``inf`` allowed where observed; ``observed`` complete (bool);
    ``compute`` x1_j, finite >= 0 where observed (set to nan elsewhere); ``comm`` x2_j likewise,
    or ``None`` for a sample without a communication part. ``iteration`` (integers, optional)
    labels observations censored together by a count rule (the iteration used its fastest
    ones): the KS bootstrap then replays that rule, keeping as many per label as were observed,
    instead of the fixed thresholds (see ``gradcode.fit.shifted_exponential``'s docstring).
    Validated on construction (a ``FitError`` naming the field); the arrays are read-only
    copies.
    """

    subsets: np.ndarray
    fraction: np.ndarray
    threshold: np.ndarray
    observed: np.ndarray
    compute: np.ndarray
    comm: np.ndarray | None = None
    iteration: np.ndarray | None = None

    def __post_init__(self) -> None:
        subsets = _numbers("subsets", self.subsets, None)
        size = subsets.shape
        if subsets.size == 0:
            raise FitError("subsets: needs at least one observation")
        observed = np.asarray(self.observed)
        if observed.dtype != bool:
            raise FitError(f"observed: must be booleans (got dtype {observed.dtype})")
        _shape("observed", observed, size)
        fraction = _numbers("fraction", self.fraction, size)
        threshold = _numbers("threshold", self.threshold, size)
        _require("subsets", subsets, np.isfinite(subsets) & (subsets > 0), "a finite number > 0")
        _require("fraction", fraction, np.isfinite(fraction) & (fraction >= 0), "finite, >= 0")
        _require("threshold", threshold, threshold >= 0, ">= 0 (inf allowed)")
        _require(
            "threshold",
            threshold,
            observed | np.isfinite(threshold),
            "finite for a censored observation",
        )
        values = {"compute": self.compute, "comm": self.comm}
        for name, value in values.items():
            if value is None:
                continue
            array = _numbers(name, value, size).copy()
            _require(name, array, ~observed | (np.isfinite(array) & (array >= 0)), "finite, >= 0")
            array[~observed] = np.nan
            values[name] = array
        iteration = None
        if self.iteration is not None:
            iteration = np.asarray(self.iteration)
            if not np.issubdtype(iteration.dtype, np.integer):
                raise FitError(f"iteration: must be integers (got dtype {iteration.dtype})")
            _shape("iteration", iteration, size)
        arrays = {
            "subsets": subsets,
            "fraction": fraction,
            "threshold": threshold,
            "observed": observed,
            **values,
            "iteration": iteration,
        }
        for name, array in arrays.items():
            if array is not None:
                array = np.array(array)
                array.flags.writeable = False
                object.__setattr__(self, name, array)

    @classmethod
    def make(
        cls,
        compute: Any,
        *,
        subsets: Any = 1.0,
        fraction: Any = None,
        threshold: Any = math.inf,
        observed: Any = True,
        comm: Any = None,
        iteration: Any = None,
    ) -> Sample:
        """A sample with scalars broadcast to ``compute``'s shape ``(J,)``: by default every
        observation is complete, of one subset, with an unknown threshold; ``fraction`` is
        required with ``comm`` (0 without)."""
        compute = np.asarray(compute, dtype=float)
        size = compute.shape
        if fraction is None:
            if comm is not None:
                raise FitError("fraction: needed with comm (the message size per observation)")
            fraction = 0.0

        def broadcast(name: str, value: Any, dtype: type) -> np.ndarray:
            array = np.asarray(value, dtype=dtype)
            if array.ndim == 0:
                return np.full(size, array, dtype=dtype)
            return array

        return cls(
            subsets=broadcast("subsets", subsets, float),
            fraction=broadcast("fraction", fraction, float),
            threshold=broadcast("threshold", threshold, float),
            observed=broadcast("observed", observed, bool),
            compute=compute,
            comm=None if comm is None else np.asarray(comm, dtype=float),
            iteration=None if iteration is None else np.asarray(iteration),
        )

    @classmethod
    def pool(cls, samples: Sequence[Sample]) -> Sample:
        """The observations of ``samples`` in one sample (all with comm, or all without).
        ``iteration`` labels are kept as they are (one label, one iteration across the
        samples) if every sample has them."""
        if not samples:
            raise FitError("samples: nothing to pool")
        with_comm = {sample.comm is not None for sample in samples}
        if len(with_comm) > 1:
            raise FitError("comm: some samples have a communication part and some do not")

        def joined(name: str) -> np.ndarray:
            return np.concatenate([getattr(sample, name) for sample in samples])

        return cls(
            subsets=joined("subsets"),
            fraction=joined("fraction"),
            threshold=joined("threshold"),
            observed=joined("observed"),
            compute=joined("compute"),
            comm=joined("comm") if samples[0].comm is not None else None,
            iteration=(
                joined("iteration") if all(s.iteration is not None for s in samples) else None
            ),
        )

    @property
    def size(self) -> int:
        """The number of observations J."""
        return int(self.subsets.size)

    @property
    def censored(self) -> int:
        """The number of censored observations."""
        return int(self.size - np.count_nonzero(self.observed))

    def complete(self) -> list[np.ndarray]:
        """Each component's complete values, sorted: ``[x1]`` or ``[x1, x2]``, shape
        ``(r,)``."""
        arrays = [self.compute] if self.comm is None else [self.compute, self.comm]
        return [np.sort(array[self.observed]) for array in arrays]


def _numbers(name: str, value: Any, shape: tuple[int, ...] | None) -> np.ndarray:
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise FitError(f"{name}: must be numbers") from None
    if array.ndim != 1:
        raise FitError(f"{name}: must be one-dimensional (got shape {array.shape})")
    if shape is not None:
        _shape(name, array, shape)
    return array


def _shape(name: str, array: np.ndarray, shape: tuple[int, ...]) -> None:
    if array.shape != shape:
        raise FitError(f"{name}: must have shape {shape} like subsets (got {array.shape})")


def _require(name: str, array: np.ndarray, ok: np.ndarray, what: str) -> None:
    bad = np.flatnonzero(~ok)
    if bad.size:
        first = int(bad[0])
        raise FitError(
            f"{name}: must be {what} (observation {first} is {array[first]!r}; {bad.size} bad)"
        )
