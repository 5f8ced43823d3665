"""Straggler emulation: how long each worker is made to wait in each iteration.

A ``DelaySource`` gives, for iteration ``t``, a ``Delays`` record of per-worker *injected*
delays in seconds; workers apply them by sleeping (``gradcode.train.worker``) on top of their
measured computation:

- ``start[i]``: once, before worker ``i`` computes anything (a node that is slow to start);
- ``compute[i]``: after each partition worker ``i`` computes (per-partition slowness);
- ``comm[i]``: per full-length vector sent; a message of ``L`` floats of a gradient of length
  ``l`` leaves ``comm[i] * L / l`` after the previous one (a link of the worker's own, paper
  000's assumption 2, which makes the ``1 / m`` saving of ``m > 1`` codes visible).

Delays depend only on ``(seed, t)`` (a generator seeded with ``[seed, STREAM, t]``), never on
what happened before, so that a resumed run injects exactly what an uninterrupted one does.

Models (``stragglers.model`` in the run YAML; parameters under ``stragglers.params``):

``none``
    no injected delay.
``fixed``
    deterministic: ``compute`` (seconds per partition), ``comm`` (seconds per full-length
    vector), ``start`` (seconds); each a number or one number per worker.
``random-set``
    ``count`` workers chosen uniformly at random every iteration start ``delay`` seconds late.
``master-worker``, ``single-port``
    the simulator's timing models (``gradcode.timing``), drawn by their own ``sample`` and
    scaled by ``stragglers.time_unit`` seconds per unit: paper 000's ``T1 = t1 +
    Exp(lambda1)`` per data subset (``1 / n`` of the data; a partition is ``n / k`` subsets)
    and, with ``lambda2, t2``, ``T2 = t2 + Exp(lambda2)`` per full-length vector; paper 001's
    ``a + Exp(mu)`` per data point (``data`` points in all) with transfers of ``tc`` per
    full-length vector through single-port receivers (the run's bandwidth emulation is set
    from ``tc``). Parameters take ``gradcode.timing``'s forms (a number, one per worker, or
    ``{counts, values}`` per worker type).

``shared-links`` (or any timing model without a ``comm`` draw or ``tc``)
    its computation only; its links are not emulated (with ``network``, the real ones carry
    the messages).

With ``network`` in the run file nothing of the communication is emulated, so a source whose
``emulated_comm`` names a parameter (``fixed`` ``comm`` > 0, ``master-worker`` ``lambda2``/
``t2``, ``single-port`` ``tc`` > 0) is refused by ``gradcode.runfile.plan``.

Workers listed in ``stragglers.persistent`` never answer at all (``Delays.silent``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from gradcode.errors import UnknownNameError
from gradcode.plugins import PluginError

#: second word of the straggler generators' seed, so no other stream of the run repeats them
STREAM = 0x57A6


@dataclass(frozen=True)
class Delays:
    """Injected delays of one iteration, seconds, each of shape ``(n,)``."""

    start: np.ndarray
    compute: np.ndarray
    comm: np.ndarray

    def of(self, worker: int) -> tuple[float, float, float]:
        """``(start, compute, comm)`` of ``worker``."""
        return float(self.start[worker]), float(self.compute[worker]), float(self.comm[worker])


class DelaySource(ABC):
    """Per-iteration injected delays for ``workers`` workers (see the module docstring)."""

    name: ClassVar[str]
    parameters: ClassVar[tuple[str, ...]]
    required: ClassVar[tuple[str, ...]] = ()

    def __init__(self, workers: int, partitions: int, seed: int, time_unit: float) -> None:
        self.workers, self.partitions, self.seed, self.time_unit = (
            workers,
            partitions,
            seed,
            time_unit,
        )

    def rng(self, iteration: int) -> np.random.Generator:
        return np.random.default_rng([self.seed, STREAM, iteration])

    @abstractmethod
    def delays(self, iteration: int) -> Delays: ...

    def describe(self) -> dict[str, Any]:
        return {"model": self.name}

    def emulated_comm(self) -> str | None:
        """The parameter (``stragglers.params.x``) through which this source emulates
        communication (an injected link delay or a receiver's single port), ``None`` if it
        emulates none: with real links (``network`` in the run file) that part must be off."""
        return None

    def zeros(self) -> np.ndarray:
        return np.zeros(self.workers)


class NoDelays(DelaySource):
    name = "none"
    parameters = ()

    def delays(self, iteration: int) -> Delays:
        zero = self.zeros()
        return Delays(zero, zero, zero)


def _seconds(path: str, value: Any, workers: int) -> np.ndarray:
    """A number or one number per worker, each finite and >= 0, as shape ``(workers,)``."""
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        if len(value) != workers:
            raise ValueError(f"{path}: has {len(value)} entries, the scheme has {workers} workers")
        return np.array([_nonnegative(f"{path}[{i}]", v) for i, v in enumerate(value)])
    return np.full(workers, _nonnegative(path, value))


def _nonnegative(path: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{path}: must be a number (got {value!r})")
    if not np.isfinite(value) or value < 0:
        raise ValueError(f"{path}: must be a finite number >= 0 (got {value!r})")
    return float(value)


class FixedDelays(DelaySource):
    name = "fixed"
    parameters = ("compute", "comm", "start")

    def __init__(self, workers: int, partitions: int, seed: int, time_unit: float, **params: Any):
        super().__init__(workers, partitions, seed, time_unit)
        self.start = _seconds("stragglers.params.start", params.get("start", 0.0), workers)
        self.compute = _seconds("stragglers.params.compute", params.get("compute", 0.0), workers)
        self.comm = _seconds("stragglers.params.comm", params.get("comm", 0.0), workers)

    def delays(self, iteration: int) -> Delays:
        return Delays(self.start, self.compute, self.comm)

    def emulated_comm(self) -> str | None:
        return "stragglers.params.comm" if bool(np.any(self.comm > 0)) else None


class RandomSet(DelaySource):
    name = "random-set"
    parameters = ("count", "delay")
    required = ("count", "delay")

    def __init__(self, workers: int, partitions: int, seed: int, time_unit: float, **params: Any):
        super().__init__(workers, partitions, seed, time_unit)
        count = params["count"]
        if isinstance(count, bool) or not isinstance(count, int) or not 0 <= count <= workers:
            raise ValueError(
                f"stragglers.params.count: must be an integer in 0..{workers} (got {count!r})"
            )
        self.count = count
        self.delay = _nonnegative("stragglers.params.delay", params["delay"])

    def delays(self, iteration: int) -> Delays:
        start = self.zeros()
        chosen = self.rng(iteration).choice(self.workers, size=self.count, replace=False)
        start[chosen] = self.delay
        zero = self.zeros()
        return Delays(start, zero, zero)


class TimingModelDelays(DelaySource):
    """A timing model of ``gradcode.timing`` (the simulator's), its times scaled to seconds.

    ``master-worker`` (paper 000): ``T1`` per data subset becomes the delay after each
    partition (``n / k`` subsets each), ``T2`` per full-length vector the link delay.
    ``single-port`` (paper 001): ``X = a + Exp(mu)`` per data point becomes ``X d / k`` after
    each partition (``d``: the model's ``data``); its transfers of ``tc`` per full-length
    vector are emulated by the receivers' single ports (``tc_seconds``).
    """

    name = "timing"
    parameters = ()

    def __init__(
        self,
        model: str,
        params: Mapping[str, Any],
        workers: int,
        partitions: int,
        seed: int,
        time_unit: float,
    ) -> None:
        super().__init__(workers, partitions, seed, time_unit)
        self.name = model
        from gradcode.timing import model_from_spec  # local: see _timing_model_source

        try:
            self.model = model_from_spec(model, params)
            self.model.sample(np.random.default_rng(0), 1, workers)  # per-worker sizes
        except ValueError as error:
            raise ValueError(_rename(str(error))) from None
        if getattr(self.model, "overhead", 0.0):
            # a fitted model's overhead is what the runtime itself costs; the run has its own
            raise ValueError(
                "stragglers.params.overhead: is the runtime's own cost per iteration, not a "
                "delay a run can inject (remove it)"
            )

    @property
    def tc_seconds(self) -> float | None:
        """Seconds per full-length vector at a receiver (``single-port`` only)."""
        tc = getattr(self.model, "tc", None)
        return None if tc is None else tc * self.time_unit

    def emulated_comm(self) -> str | None:
        if self.tc_seconds:
            return "stragglers.params.tc"
        draws = self.model.sample(np.random.default_rng(0), 1, self.workers)
        if "comm" in draws:  # a per-message link time drawn for every worker
            names = [key for key in self.model.params() if key not in _COMPUTE_PARAMS]
            return f"stragglers.params.{'/'.join(names) or 'comm'}"
        return None

    def delays(self, iteration: int) -> Delays:
        draws = self.model.sample(self.rng(iteration), 1, self.workers)
        comm = self.zeros()
        if "unit" in draws:  # per data point; a partition holds data / k points
            compute = draws["unit"][0] * (self.model.data / self.partitions)
        else:  # per data subset (1/n of the data); a partition holds n / k subsets
            compute = draws["compute"][0] * (self.workers / self.partitions)
            if "comm" in draws:
                comm = draws["comm"][0] * self.time_unit
        return Delays(self.zeros(), compute * self.time_unit, comm)

    def describe(self) -> dict[str, Any]:
        return {"model": self.name, "params": self.model.params(), "time_unit": self.time_unit}


class DrawnAhead:
    """``source``'s delays, with one iteration's drawn before it begins (``draw``).

    Drawing an iteration of a timing model (a seeded generator and its draws) cost a worker
    0.21 ms of CPU (median, n = 20 on two cores) at the moment the model came, when every
    worker starts computing at once and the last to start waits for the others' turns: a
    worker that draws the next iteration's while it waits for the model takes that off the
    iteration's start. The delays are the source's whether drawn ahead or not.
    """

    def __init__(self, source: DelaySource) -> None:
        self.source = source
        self._drawn: tuple[int, Delays] | None = None

    def delays(self, iteration: int) -> Delays:
        drawn = self._drawn
        if drawn is not None and drawn[0] == iteration:
            return drawn[1]
        return self.source.delays(iteration)

    def draw(self, iteration: int) -> None:
        """Draw ``iteration``'s delays now, unless they are drawn already."""
        if self._drawn is None or self._drawn[0] != iteration:
            self._drawn = (iteration, self.source.delays(iteration))


#: parameters of the built-in timing models that describe computation only
_COMPUTE_PARAMS = frozenset({"lambda1", "t1", "a", "mu", "data", "overhead"})


def _rename(message: str) -> str:
    """gradcode.timing names keys ``parameters.x``; the run file calls them
    ``stragglers.params.x``."""
    renamed = message.replace("parameters.", "stragglers.params.")
    return renamed if renamed.startswith("stragglers.") else f"stragglers.params: {renamed}"


SOURCES: dict[str, type[DelaySource]] = {
    source.name: source for source in (NoDelays, FixedDelays, RandomSet)
}


def build_source(
    model: str,
    params: Mapping[str, Any],
    *,
    workers: int,
    partitions: int,
    seed: int,
    time_unit: float,
) -> DelaySource:
    """The delay source ``model``; ``ValueError`` naming the offending key."""
    if model not in SOURCES:
        return _timing_model_source(model, params, (workers, partitions, seed, time_unit))
    cls = SOURCES[model]
    unknown = sorted(set(params) - set(cls.parameters))
    if unknown:
        allowed = ", ".join(cls.parameters) or "none"
        raise ValueError(
            f"stragglers.params.{unknown[0]}: unknown parameter of model {model} "
            f"(allowed: {allowed})"
        )
    missing = [key for key in cls.required if key not in params]
    if missing:
        raise ValueError(f"stragglers.params.{missing[0]}: missing (model {model} needs it)")
    if cls is NoDelays:
        return NoDelays(workers, partitions, seed, time_unit)
    return cls(workers, partitions, seed, time_unit, **dict(params))  # type: ignore[call-arg]


def _timing_model_source(
    model: str, params: Mapping[str, Any], where: tuple[int, int, int, float]
) -> DelaySource:
    """``model`` as a timing model of ``gradcode.timing`` (a built-in or a plug-in's), or the
    line saying why it is none; ``where`` is ``build_source``'s workers, partitions, seed and
    time unit. The runtime's own sources are taken before, so that a run without a timing model
    neither imports the models nor discovers plug-ins."""
    from gradcode.timing import model_class, timing_models

    models = timing_models()
    if model in models:
        return TimingModelDelays(model, params, *where)
    names = ", ".join([*SOURCES, *models])
    try:
        model_class(model)  # a plug-in that was left out says why
    except PluginError as error:
        raise ValueError(f"stragglers.model: {error}") from None
    except UnknownNameError:
        pass
    raise ValueError(f"stragglers.model: unknown model {model!r} (available: {names})")
