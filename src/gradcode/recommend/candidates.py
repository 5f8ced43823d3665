"""Every code the registry can build for ``n`` workers that a timing model can simulate.

Sources, per registered scheme (built-ins, plug-ins and codes added with ``register``):

- its ``parameter_grid``, keeping the configurations with exactly ``n`` workers. The grid
  yields every configuration with ``code.n <= max_n``, so the configurations with ``code.n ==
  n`` are among those of ``parameter_grid(n)`` that ``parameter_grid(n - 1)`` does not yield;
  only those are built (at ``n = 20`` that builds about 600 codes instead of 7000).
- with workers of unequal speed, its ``for_worker_times(times)`` (``GradientCode``): the
  allocations that size each worker's data to its speed (paper 003 Sec. VI, paper 004).

Configurations with equal ``code.params()`` are merged (the first kept). Nothing is dropped
silently: a scheme without a grid, a configuration the model cannot simulate
(``model.check``), or one that decodes a function of the summed gradient rather than the
gradient (its ``reference`` is not the identity) is reported with the reason, in a ``Skip``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gradcode.codes import GradientCode, build, scheme_class
from gradcode.timing import TimingModel

GRID = "grid"
WORKER_TIMES = "worker times"

#: why a code whose ``reference`` is not the identity is skipped
NOT_THE_GRADIENT = "decodes a function of the summed gradient (its reference), not the sum"
#: a small gradient (a 2 x 2 matrix for codes of matrices) to see what a code decodes
_PROBE_SUM = np.array([0.5, -1.25, 2.0, 0.75])


def freeze(value: Any) -> Any:
    """A hashable, order-insensitive-for-mappings form of a parameter value (``(2, 3)`` and
    ``[2, 3]`` are the same parameter)."""
    if isinstance(value, Mapping):
        return tuple(sorted((str(k), freeze(v)) for k, v in value.items()))
    if isinstance(value, list | tuple | np.ndarray):
        return tuple(freeze(v) for v in value)
    if isinstance(value, np.generic):
        return value.item()
    return value


@dataclass(frozen=True)
class Candidate:
    """A built code, where its parameters came from (``GRID`` or ``WORKER_TIMES``)."""

    code: GradientCode
    origin: str

    @property
    def key(self) -> tuple[str, Any]:
        return (self.code.name, freeze(self.code.params()))


@dataclass(frozen=True)
class Skip:
    """``count`` configurations of ``scheme`` left out for ``reason``."""

    scheme: str
    reason: str
    count: int = 1


@dataclass
class Pool:
    """The candidates, what was skipped and why, and how many duplicates were merged."""

    candidates: list[Candidate] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)
    duplicates: int = 0


def decodes_gradient(code: GradientCode) -> bool:
    """Whether ``code`` decodes the summed gradient itself (``reference`` is the identity).

    A code that cannot take the probe's length is assumed to (nothing to tell otherwise).
    """
    try:
        code.message_length(_PROBE_SUM.size)
        decoded = code.reference(_PROBE_SUM.copy())
    except ValueError:
        return True
    return bool(np.allclose(decoded, _PROBE_SUM, rtol=1e-12, atol=1e-12))


def grid_for(cls: type[GradientCode], n: int) -> list[dict[str, Any]]:
    """The configurations of ``cls.parameter_grid(n)`` not in ``parameter_grid(n - 1)``.

    Raises ``NotImplementedError`` for a scheme without a grid.
    """
    grid = list(cls.parameter_grid(max_n=n))
    try:
        smaller = {freeze(params) for params in cls.parameter_grid(max_n=n - 1)}
    except ValueError:
        smaller = set()  # a grid that refuses the smaller bound: build all, filter on n
    return [params for params in grid if freeze(params) not in smaller]


def _sources(
    cls: type[GradientCode], n: int, times: Sequence[float] | None
) -> Iterator[tuple[dict[str, Any], str]]:
    for params in grid_for(cls, n):
        yield params, GRID
    if times is not None:
        for params in cls.for_worker_times(times):
            yield params, WORKER_TIMES


def enumerate_candidates(
    model: TimingModel,
    n: int,
    schemes: Sequence[str],
    *,
    times: Sequence[float] | None = None,
) -> Pool:
    """The candidates of ``schemes`` for ``n`` workers under ``model`` (module docstring).

    ``times``: every worker's relative time per data subset, ``(n,)``, or ``None`` for equal
    workers (no heterogeneous allocations are added).
    """
    pool = Pool()
    seen: set[tuple[str, Any]] = set()
    for name in schemes:
        cls = scheme_class(name)
        reasons: Counter[str] = Counter()
        kept = 0
        try:
            sources = list(_sources(cls, n, times))
        except NotImplementedError as error:
            pool.skipped.append(Skip(name, str(error) or "does not enumerate its parameters"))
            continue
        except ValueError as error:
            pool.skipped.append(Skip(name, f"its parameter grid failed: {error}"))
            continue
        for params, origin in sources:
            try:
                code = build(name, **params)
            except ValueError as error:
                reasons[f"invalid parameters in its {origin} ({error})"] += 1
                continue
            if code.n != n:
                if origin == WORKER_TIMES:
                    reasons[f"for_worker_times gave a code of {code.n} workers"] += 1
                continue
            candidate = Candidate(code, origin)
            if candidate.key in seen:
                pool.duplicates += 1
                continue
            seen.add(candidate.key)
            try:
                model.check(code)
            except ValueError as error:
                reasons[str(error)] += 1
                continue
            if not decodes_gradient(code):
                reasons[
                    "decodes a function of the summed gradient (its reference), not the sum"
                ] += 1
                continue
            pool.candidates.append(candidate)
            kept += 1
        if not kept and not reasons:
            reasons[f"its parameter grid has no configuration with n = {n} workers"] += 1
        pool.skipped += [Skip(name, reason, count) for reason, count in reasons.items()]
    return pool
