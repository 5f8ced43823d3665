"""The interface of a timing model, and what every model returns.

A model turns a scheme (a ``GradientCode``, Ring-AllReduce included) and random draws into, per
Monte Carlo trial, the time at which the gradient is available and the number of messages the
receiving nodes took in by then. It works in three steps, so that a simulator can reuse the
same draws for many schemes (common random numbers) and prepare each scheme once:

1. ``sample(rng, trials, workers)``: the worker-level randomness of ``trials`` trials as named
   arrays of shape ``(trials, workers)``; it depends on the number of workers only, never on the
   scheme, so every scheme with the same number of workers sees the same workers.
2. ``prepare(scheme)``: everything that depends on the scheme only (which worker sends which
   message key, after how many partials, through which queue), checked once.
3. ``prepared.run(draws)``: the ``Outcome`` of those trials.

The completion time always comes from the scheme's own decodability rule
(``code.completion_times`` on the arrival time of every message key, or, for trees, the per-
parent code's rule at every parent), never from a separate formula.

Parameters enter through ``from_params(mapping)``, which rejects unknown keys and names the key
in every error (``ValueError``); afterwards they are trusted.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

import numpy as np

from gradcode.timing.distributions import PerWorker

Draws = dict[str, np.ndarray]


@dataclass(frozen=True)
class Outcome:
    """Per trial: completion time and messages received, both shape ``(trials,)``.

    ``messages`` counts the messages the master (for trees: the master and every parent; for
    Ring-AllReduce: every worker) had received when the gradient became available; a message
    of a code with communication reduction ``m`` is ``1 / m`` of the gradient.
    """

    times: np.ndarray
    messages: np.ndarray


class Prepared(Protocol):
    """A scheme prepared by a model: ``run(draws)`` simulates the trials in ``draws``.

    A model of flat codes may also offer ``message_arrivals(draws)``: when every message key
    (``all_message_keys`` order) reaches the master, ``(trials, keys)``, the times its ``run``
    applies the code's rule to; whoever needs to know *which* messages arrived (a training
    simulation, ``gradcode.recommend.convergence``) asks for it (``master-worker``,
    ``shared-links``).
    """

    def run(self, draws: Draws) -> Outcome: ...


class TimingModel(ABC):
    """Base class of the timing models (see the module docstring)."""

    name: ClassVar[str]
    #: parameter name -> one-line help; ``from_params`` accepts exactly these
    parameters: ClassVar[dict[str, str]]
    #: parameters that may be omitted
    optional: ClassVar[frozenset[str]] = frozenset()
    #: list-valued parameters that are not one value per worker (so a worker's type, or how
    #: many workers a spec describes, never reads them)
    not_per_worker: ClassVar[frozenset[str]] = frozenset()

    @classmethod
    def from_params(cls, params: Mapping[str, Any]) -> TimingModel:
        """Build the model from a YAML-like mapping, rejecting unknown or missing keys."""
        if not isinstance(params, Mapping):
            raise ValueError(f"parameters: must be a mapping (got {params!r})")
        unknown = sorted(set(params) - set(cls.parameters))
        if unknown:
            raise ValueError(
                f"parameters.{unknown[0]}: unknown parameter of model {cls.name} "
                f"(allowed: {', '.join(cls.parameters)})"
            )
        missing = [key for key in cls.parameters if key not in params and key not in cls.optional]
        if missing:
            raise ValueError(f"parameters.{missing[0]}: missing (model {cls.name} needs it)")
        return cls(**dict(params))

    @abstractmethod
    def params(self) -> dict[str, Any]:
        """The parameters in ``from_params`` form (for result sidecars)."""

    @abstractmethod
    def check(self, scheme: Any) -> None:
        """Raise ``ValueError`` if the model cannot simulate ``scheme`` (names the key)."""

    @abstractmethod
    def sample(self, rng: np.random.Generator, trials: int, workers: int) -> Draws:
        """Worker-level draws of ``trials`` trials, each array ``(trials, workers)``."""

    @abstractmethod
    def prepare(self, scheme: Any) -> Prepared:
        """Precompute what depends on ``scheme`` only (call ``check`` first)."""

    def extras(self, scheme: Any) -> dict[str, float]:
        """Model-specific reference values for ``scheme`` (e.g. theoretical bounds)."""
        return {}


def per_worker(name: str, value: Any, *, positive: bool = True) -> PerWorker:
    """``PerWorker.parse`` with the key prefixed as it appears in a spec."""
    return PerWorker.parse(f"parameters.{name}", value, positive=positive)


def work_fractions(code: Any) -> np.ndarray:
    """Per message key (``all_message_keys`` order), the fraction of the data set its worker
    must have processed before it can send it, shape ``(keys,)``.

    A gradient code's message needs ``message_prefix(key)`` of the ``k`` equal partitions. A
    code that codes the *data* instead (LCC: every worker computes on one coded part of size
    ``1 / k`` that mixes all ``k`` parts) declares its work with ``data_fraction(key)``.
    """
    return np.array([code.data_fraction(key) for key in code.all_message_keys()], dtype=np.float64)


def received_by(arrivals: np.ndarray, times: np.ndarray) -> np.ndarray:
    """Per trial, how many of ``arrivals`` (``(trials, keys)``) are ``<= times`` (``(trials,)``)."""
    return np.count_nonzero(arrivals <= times[:, None], axis=1)
