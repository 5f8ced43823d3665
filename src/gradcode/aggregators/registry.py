"""Name -> aggregator class: the built-ins (imported lazily), the aggregators of installed
packages (entry-point group ``gradcode.aggregators``, see ``gradcode.plugins``) and
aggregators registered at run time (``register``)."""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Mapping
from typing import Any

from gradcode.aggregators.base import Aggregator
from gradcode.errors import ParameterError, UnknownNameError
from gradcode.plugins import AGGREGATORS_GROUP, LazyPlugins

#: aggregator name -> "module:Class" below ``gradcode.aggregators``
AGGREGATORS: dict[str, str] = {
    "median": "median:Median",
    "trimmed-mean": "trimmed_mean:TrimmedMean",
    "multi-krum": "krum:MultiKrum",
    "geometric-median": "geometric_median:GeometricMedian",
    "bulyan": "bulyan:Bulyan",
}

_REGISTERED: dict[str, type[Aggregator]] = {}


def class_problem(name: str, cls: object) -> str | None:
    """What keeps ``cls`` from serving as aggregator ``name`` (``None``: nothing)."""
    if not (isinstance(cls, type) and issubclass(cls, Aggregator)):
        return f"{cls!r} is not a gradcode.aggregators.Aggregator subclass"
    if cls.name != name:
        return f"the class {cls.__name__} is named {cls.name!r}, not {name!r}"
    if inspect.isabstract(cls):
        return f"{cls.__name__} does not implement {', '.join(sorted(cls.__abstractmethods__))}"
    try:
        signature = inspect.signature(cls)
    except (TypeError, ValueError) as error:
        return f"{cls.__name__}'s constructor has no readable signature ({error})"
    for parameter in signature.parameters.values():
        if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.VAR_POSITIONAL):
            return (
                f"bad signature {cls.__name__}{signature}: parameter {parameter.name!r} cannot "
                "be given by keyword"
            )
    return None


#: aggregators of installed packages (entry-point group ``gradcode.aggregators``)
PLUGINS = LazyPlugins(AGGREGATORS_GROUP, lambda: AGGREGATORS, class_problem)


def _plugin_classes() -> dict[str, type[Aggregator]]:
    return {name: plugin.obj for name, plugin in PLUGINS.get().usable.items()}  # type: ignore[misc]


def register(name: str, cls: type[Aggregator]) -> None:
    """Make ``cls`` available as aggregator ``name`` in this process (``ValueError`` for an
    unfit class or a name taken)."""
    problem = class_problem(name, cls)
    if problem:
        raise ValueError(f"cannot register aggregator {name!r}: {problem}")
    if name in AGGREGATORS or name in _plugin_classes() or _REGISTERED.get(name, cls) is not cls:
        raise ValueError(f"cannot register aggregator {name!r}: an aggregator of that name exists")
    _REGISTERED[name] = cls


def unregister(name: str) -> None:
    """Forget an aggregator ``register`` added; unknown names are ignored."""
    _REGISTERED.pop(name, None)


def available() -> list[str]:
    """Names accepted by ``build`` (built-ins, plug-ins, registered aggregators), sorted."""
    return sorted({*AGGREGATORS, *_plugin_classes(), *_REGISTERED})


def source(name: str) -> str:
    """``built-in``, ``registered`` or the plug-in's distribution."""
    if name in AGGREGATORS:
        return "built-in"
    if name in _REGISTERED:
        return "registered"
    plugins = PLUGINS.get().usable
    if name in plugins:
        return f"plug-in {plugins[name].distribution}"
    raise UnknownNameError("aggregator", name, available())


def aggregator_class(name: str) -> type[Aggregator]:
    """The class implementing aggregator ``name``."""
    if name in AGGREGATORS:
        module_name, class_name = AGGREGATORS[name].split(":")
        module = importlib.import_module(f"gradcode.aggregators.{module_name}")
        return getattr(module, class_name)
    if name in _REGISTERED:
        return _REGISTERED[name]
    plugins = _plugin_classes()
    if name in plugins:
        return plugins[name]
    PLUGINS.require_usable(name)
    raise UnknownNameError("aggregator", name, available())


def build(name: str, params: Mapping[str, Any] | None = None) -> Aggregator:
    """Aggregator ``name`` with ``params``; a bad parameter is a one-line ``ParameterError``."""
    cls = aggregator_class(name)
    try:
        return cls(**dict(params or {}))
    except TypeError as error:
        raise ParameterError(f"aggregator {name}: {error}") from None
