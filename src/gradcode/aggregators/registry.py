"""Name -> aggregator class: the built-ins (imported lazily), the aggregators of installed
packages (entry-point group ``gradcode.aggregators``, see ``gradcode.plugins``) and
aggregators registered at run time (``register``)."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from gradcode.aggregators.base import Aggregator
from gradcode.plugins import AGGREGATORS_GROUP, NamedClasses, constructor_problem

#: aggregator name -> "module:Class" below ``gradcode.aggregators``
AGGREGATORS: dict[str, str] = {
    "median": "median:Median",
    "trimmed-mean": "trimmed_mean:TrimmedMean",
    "multi-krum": "krum:MultiKrum",
    "geometric-median": "geometric_median:GeometricMedian",
    "bulyan": "bulyan:Bulyan",
}


def class_problem(name: str, cls: object) -> str | None:
    """What keeps ``cls`` from serving as aggregator ``name`` (``None``: nothing)."""
    if not (isinstance(cls, type) and issubclass(cls, Aggregator)):
        return f"{cls!r} is not a gradcode.aggregators.Aggregator subclass"
    if cls.name != name:
        return f"the class {cls.__name__} is named {cls.name!r}, not {name!r}"
    if inspect.isabstract(cls):
        return f"{cls.__name__} does not implement {', '.join(sorted(cls.__abstractmethods__))}"
    return constructor_problem(cls)


#: the built-ins, the aggregators of installed packages (entry-point group
#: ``gradcode.aggregators``) and those registered at run time
CLASSES = NamedClasses(
    "aggregator", "gradcode.aggregators", AGGREGATORS, AGGREGATORS_GROUP, class_problem
)
PLUGINS = CLASSES.plugins
register = CLASSES.register
unregister = CLASSES.unregister
available = CLASSES.available
source = CLASSES.source


def aggregator_class(name: str) -> type[Aggregator]:
    """The class implementing aggregator ``name``."""
    return CLASSES.cls(name)


def build(name: str, params: Mapping[str, Any] | None = None) -> Aggregator:
    """Aggregator ``name`` with ``params``; a bad parameter is a one-line ``ParameterError``."""
    return CLASSES.build(name, params)
