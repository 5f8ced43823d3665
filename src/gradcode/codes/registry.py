"""Name -> scheme class: the built-ins (imported lazily so that listing codes stays cheap),
the codes of installed packages (entry-point group ``gradcode.codes``, see
``gradcode.plugins``) and codes registered at run time (``register``)."""

from __future__ import annotations

import importlib
import inspect
from typing import Any

from gradcode.codes.base import Capabilities, GradientCode
from gradcode.codes.ring import RING_METHODS
from gradcode.codes.tree import TreeCode
from gradcode.errors import ParameterError, UnknownNameError
from gradcode.plugins import CODES_GROUP, LazyPlugins

#: scheme name -> "module:Class" below ``gradcode.codes``
SCHEMES: dict[str, str] = {
    "uncoded": "uncoded:Uncoded",
    "ignore-stragglers": "ignore_stragglers:IgnoreStragglers",
    "frc": "frc:FractionalRepetition",
    "crc": "crc:CyclicRepetition",
    "ye-abbe": "ye_abbe:YeAbbe",
    "binary": "binary:BinaryCode",
    "heterogeneous": "heterogeneous:HeterogeneousCode",
    "heterogeneous-poly": "heterogeneous_poly:HeterogeneousPolyCode",
    "berrut": "berrut:BerrutCode",
    "gc-mmc": "gc_mmc:GCMMC",
    "coded-reduce": "coded_reduce:CodedReduce",
    "lcc": "lcc:LagrangeCode",
    "ring-allreduce": "ring_allreduce:RingAllReduce",
    "draco-repetition": "draco_repetition:DracoRepetition",
    "draco-cyclic": "draco_cyclic:DracoCyclic",
    "detox": "detox:Detox",
    "byzshield": "byzshield:ByzShield",
}


#: codes registered at run time (``register``), name -> class
_REGISTERED: dict[str, type[GradientCode]] = {}


def class_problem(name: str, cls: object) -> str | None:
    """What keeps ``cls`` from serving as scheme ``name`` (``None``: nothing).

    ``build`` passes parameters by keyword, so a constructor must take them that way.
    """
    if not (isinstance(cls, type) and issubclass(cls, GradientCode)):
        return f"{cls!r} is not a GradientCode subclass"
    if getattr(cls, "name", None) != name:
        return f"the class {cls.__name__} is named {getattr(cls, 'name', None)!r}, not {name!r}"
    if inspect.isabstract(cls):
        missing = ", ".join(sorted(cls.__abstractmethods__))
        return f"{cls.__name__} does not implement {missing}"
    if not isinstance(cls.capabilities, Capabilities):
        return f"{cls.__name__}.capabilities is not a gradcode.codes.Capabilities"
    disagreement = topology_problem(cls)
    if disagreement:
        return disagreement
    try:
        signature = inspect.signature(cls)
    except (TypeError, ValueError) as error:
        return f"{cls.__name__}'s constructor has no readable signature ({error})"
    for parameter in signature.parameters.values():
        if parameter.kind is parameter.POSITIONAL_ONLY and parameter.default is parameter.empty:
            return (
                f"bad signature {cls.__name__}{signature}: parameter {parameter.name!r} is "
                "positional-only, but build() passes parameters by keyword"
            )
        if parameter.kind is parameter.VAR_POSITIONAL:
            return (
                f"bad signature {cls.__name__}{signature}: *{parameter.name} cannot be given "
                "by keyword"
            )
    return None


def topology_problem(cls: type[GradientCode]) -> str | None:
    """Where ``cls``'s declared topology and its class disagree (``None``: they agree): a
    ``tree`` code is a ``TreeCode`` and a ``TreeCode`` declares ``tree``; a ``ring`` code
    offers ``RingCode``'s schedule."""
    declared = cls.capabilities.topology
    if issubclass(cls, TreeCode) != (declared == "tree"):
        kind = "is" if issubclass(cls, TreeCode) else "is not"
        return f"{cls.__name__} {kind} a TreeCode but declares topology {declared!r}"
    if declared == "ring":
        missing = [name for name in RING_METHODS if not callable(getattr(cls, name, None))]
        if missing:
            return f"{cls.__name__} declares topology 'ring' but has no {', '.join(missing)}"
    return None


#: codes of installed packages (entry-point group ``gradcode.codes``)
PLUGINS = LazyPlugins(CODES_GROUP, lambda: SCHEMES, class_problem)


def _plugin_classes() -> dict[str, type[GradientCode]]:
    return {name: plugin.obj for name, plugin in PLUGINS.get().usable.items()}  # type: ignore[misc]


def register(name: str, cls: type[GradientCode]) -> None:
    """Make ``cls`` available as scheme ``name`` everywhere a built-in is (this process only).

    ``cls`` must be a concrete ``GradientCode`` subclass whose ``name`` is ``name`` and whose
    constructor takes its parameters by keyword; a built-in's or a plug-in's name, or a name
    registered to another class, is refused (``ValueError``). Installed packages register
    their codes once for every process through the ``gradcode.codes`` entry-point group
    instead (``gradcode.plugins``).
    """
    problem = class_problem(name, cls)
    if problem:
        raise ValueError(f"cannot register {name!r}: {problem}")
    if name in SCHEMES or name in _plugin_classes() or _REGISTERED.get(name, cls) is not cls:
        raise ValueError(f"cannot register {name!r}: a scheme of that name exists")
    _REGISTERED[name] = cls


def unregister(name: str) -> None:
    """Forget a code ``register`` added (built-ins stay); unknown names are ignored."""
    _REGISTERED.pop(name, None)


def available() -> list[str]:
    """Names accepted by ``build`` (built-ins, plug-ins, registered codes), sorted."""
    return sorted({*SCHEMES, *_plugin_classes(), *_REGISTERED})


def source(name: str) -> str:
    """Where scheme ``name`` comes from: ``built-in``, ``registered`` or the plug-in's
    distribution (``plug-in gradcode-group-replication 0.1.0``)."""
    if name in SCHEMES:
        return "built-in"
    if name in _REGISTERED:
        return "registered"
    plugins = PLUGINS.get().usable
    if name in plugins:
        return f"plug-in {plugins[name].distribution}"
    raise UnknownNameError("scheme", name, available())


def scheme_class(name: str) -> type[GradientCode]:
    """The class implementing scheme ``name``."""
    if name in SCHEMES:
        module_name, class_name = SCHEMES[name].split(":")
        module = importlib.import_module(f"gradcode.codes.{module_name}")
        return getattr(module, class_name)
    if name in _REGISTERED:
        return _REGISTERED[name]
    plugins = _plugin_classes()
    if name in plugins:
        return plugins[name]
    PLUGINS.require_usable(name)
    raise UnknownNameError("scheme", name, available())


def build(name: str, **params: Any) -> GradientCode:
    """Construct scheme ``name`` with ``params``; invalid parameters raise ``ValueError``."""
    cls = scheme_class(name)
    disagreement = topology_problem(cls)
    if disagreement:
        raise ParameterError(f"{name}: {disagreement}")
    try:
        return cls(**params)
    except TypeError as error:
        # unknown or missing keyword: say which scheme and what it takes
        raise ParameterError(f"{name}: {error}") from None
