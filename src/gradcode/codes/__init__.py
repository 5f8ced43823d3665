"""Gradient codes behind one interface: ``build(name, **params)`` and ``available()``.

See ``gradcode.codes.base`` for the interface and the shapes it uses.
"""

from gradcode.codes.base import GradientCode, LinearCode, NotDecodableError, Pattern
from gradcode.codes.registry import available, build, scheme_class

__all__ = [
    "GradientCode",
    "LinearCode",
    "NotDecodableError",
    "Pattern",
    "available",
    "build",
    "scheme_class",
]
