"""Name -> scheme class, imported lazily so that listing codes stays cheap."""

from __future__ import annotations

import importlib
from typing import Any

from gradcode.codes.base import GradientCode

#: scheme name -> "module:Class" below ``gradcode.codes``
SCHEMES: dict[str, str] = {
    "uncoded": "uncoded:Uncoded",
    "ignore-stragglers": "ignore_stragglers:IgnoreStragglers",
    "frc": "frc:FractionalRepetition",
    "crc": "crc:CyclicRepetition",
    "ye-abbe": "ye_abbe:YeAbbe",
    "binary": "binary:BinaryCode",
    "heterogeneous": "heterogeneous:HeterogeneousCode",
    "berrut": "berrut:BerrutCode",
    "gc-mmc": "gc_mmc:GCMMC",
    "coded-reduce": "coded_reduce:CodedReduce",
    "lcc": "lcc:LagrangeCode",
    "ring-allreduce": "ring_allreduce:RingAllReduce",
}


def available() -> list[str]:
    """Names accepted by ``build``, sorted."""
    return sorted(SCHEMES)


def scheme_class(name: str) -> type[GradientCode]:
    """The class implementing scheme ``name``."""
    if name not in SCHEMES:
        raise ValueError(f"unknown scheme {name!r} (available: {', '.join(available())})")
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
        raise ValueError(f"{name}: {error}") from None
