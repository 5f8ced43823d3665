"""Name -> scheme class: the built-ins (imported lazily so that listing codes stays cheap),
the codes of installed packages (entry-point group ``gradcode.codes``, see
``gradcode.plugins``) and codes registered at run time (``register``)."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from gradcode.codes.base import GradientCode
from gradcode.codes.capabilities import Capabilities
from gradcode.codes.ring import RING_METHODS
from gradcode.codes.tree import TreeCode
from gradcode.errors import ParameterError
from gradcode.plugins import CODES_GROUP, NamedClasses

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


#: the built-ins, the codes of installed packages (entry-point group ``gradcode.codes``) and
#: those registered at run time (``register``: the class must be a concrete ``GradientCode``
#: subclass whose ``name`` is the name and whose constructor takes its parameters by keyword;
#: a built-in's or a plug-in's name, or one registered to another class, is refused with a
#: ``ValueError``); the same ``NamedClasses`` as attacks', aggregators' and models'
CLASSES = NamedClasses(
    "scheme",
    "gradcode.codes",
    SCHEMES,
    CODES_GROUP,
    class_problem,
    taken="a scheme of that name exists",
)
PLUGINS = CLASSES.plugins
register = CLASSES.register
unregister = CLASSES.unregister
available = CLASSES.available
offers = CLASSES.offers
source = CLASSES.source


def scheme_class(name: str) -> type[GradientCode]:
    """The class implementing scheme ``name``."""
    return CLASSES.cls(name)


def build(name: str, params: Mapping[str, Any] | None = None, /, **keywords: Any) -> GradientCode:
    """Construct scheme ``name`` with ``params``; invalid parameters raise ``ValueError``.

    ``build(name, params)`` takes a mapping, the shape of ``gradcode.attacks.build``,
    ``gradcode.aggregators.build`` and ``gradcode.models.build``; ``build(name, **params)``
    (``build("frc", n=6, s=1)``) is the same call with keywords, kept because users and most
    of the package's call sites write codes that way. Give one or the other, not both.
    """
    if params is not None and keywords:
        raise TypeError(f"build({name!r}): give parameters as a mapping or as keywords, not both")
    given = dict(params) if params is not None else keywords
    cls = scheme_class(name)
    disagreement = topology_problem(cls)
    if disagreement:
        raise ParameterError(f"{name}: {disagreement}")
    try:
        return cls(**given)
    except TypeError as error:
        # unknown or missing keyword: say which scheme and what it takes
        raise ParameterError(f"{name}: {error}") from None
