"""Name -> scheme class, imported lazily so that listing codes stays cheap."""

from __future__ import annotations

import importlib
from typing import Any

from gradcode.codes.base import GradientCode
from gradcode.errors import ParameterError, UnknownNameError

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
}


#: codes registered at run time (``register``), name -> class
_REGISTERED: dict[str, type[GradientCode]] = {}


def register(name: str, cls: type[GradientCode]) -> None:
    """Make ``cls`` available as scheme ``name`` everywhere a built-in is (this process only).

    ``cls`` must be a ``GradientCode`` subclass whose ``name`` is ``name``; a built-in name, or
    a name registered to another class, is refused (``ValueError``).
    """
    if not (isinstance(cls, type) and issubclass(cls, GradientCode)):
        raise ValueError(f"cannot register {name!r}: {cls!r} is not a GradientCode subclass")
    if getattr(cls, "name", None) != name:
        raise ValueError(f"cannot register {name!r}: the class is named {cls.name!r}")
    if name in SCHEMES or _REGISTERED.get(name, cls) is not cls:
        raise ValueError(f"cannot register {name!r}: a scheme of that name exists")
    _REGISTERED[name] = cls


def unregister(name: str) -> None:
    """Forget a code ``register`` added (built-ins stay); unknown names are ignored."""
    _REGISTERED.pop(name, None)


def available() -> list[str]:
    """Names accepted by ``build``, sorted."""
    return sorted([*SCHEMES, *_REGISTERED])


def scheme_class(name: str) -> type[GradientCode]:
    """The class implementing scheme ``name``."""
    if name in _REGISTERED:
        return _REGISTERED[name]
    if name not in SCHEMES:
        raise UnknownNameError("scheme", name, available())
    module_name, class_name = SCHEMES[name].split(":")
    module = importlib.import_module(f"gradcode.codes.{module_name}")
    return getattr(module, class_name)


def build(name: str, **params: Any) -> GradientCode:
    """Construct scheme ``name`` with ``params``; invalid parameters raise ``ValueError``."""
    cls = scheme_class(name)
    try:
        return cls(**params)
    except TypeError as error:
        # unknown or missing keyword: say which scheme and what it takes
        raise ParameterError(f"{name}: {error}") from None
