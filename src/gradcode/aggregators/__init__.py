"""Robust aggregators behind one interface: ``build(name, params)`` and ``available()``.

Built-ins: ``median`` (coordinate-wise), ``trimmed-mean``, ``multi-krum``,
``geometric-median`` (Weiszfeld) and ``bulyan``; others come from installed packages
(entry-point group ``gradcode.aggregators``) or ``register``. An aggregator replaces the
master's sum of per-group values (``gradcode.codes.GradientCode.aggregation_inputs``) by a
robust estimate of their honest mean. See ``gradcode.aggregators.base`` for the interface and
docs/guide/byzantine.md for their use.
"""

from gradcode.aggregators.base import Aggregate, Aggregator, AggregatorError
from gradcode.aggregators.registry import (
    aggregator_class,
    available,
    build,
    register,
    source,
    unregister,
)

__all__ = [
    "Aggregate",
    "Aggregator",
    "AggregatorError",
    "aggregator_class",
    "available",
    "build",
    "register",
    "source",
    "unregister",
]
