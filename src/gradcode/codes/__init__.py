"""Gradient codes behind one interface: ``build(name, params)`` (or ``build(name, **params)``)
and ``available()``.

See ``gradcode.codes.base`` for the interface and the shapes it uses.
"""

from gradcode.codes.base import (
    AggregationInputs,
    DecodeResult,
    GradientCode,
    NotDecodableError,
    Pattern,
)
from gradcode.codes.capabilities import Capabilities
from gradcode.codes.completion import CompletionRule
from gradcode.codes.linear import LinearCode
from gradcode.codes.registry import available, build, register, scheme_class
from gradcode.codes.ring import RingCode
from gradcode.codes.tree import MASTER, TreeCode

__all__ = [
    "MASTER",
    "AggregationInputs",
    "Capabilities",
    "CompletionRule",
    "DecodeResult",
    "GradientCode",
    "LinearCode",
    "NotDecodableError",
    "Pattern",
    "RingCode",
    "TreeCode",
    "available",
    "build",
    "register",
    "scheme_class",
]
