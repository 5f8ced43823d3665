"""The one JSON sanitiser: numpy values, tuples and fractions made JSON-safe.

Every sidecar, log line, summary and ``--json`` output goes through ``to_jsonable``. Mappings
get string keys; tuples, lists and arrays become lists; numpy scalars their Python values;
``Fraction`` its exact text (``"4/15"``). ``finite_only`` turns NaN and infinities into
``null`` (strict JSON, for logs and machine-read output); without it they stay as Python
floats (``json`` writes ``NaN``), as the simulation sidecars always have.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

import numpy as np


def to_jsonable(value: Any, *, finite_only: bool = False) -> Any:
    """``value`` as plain JSON types (see the module docstring)."""
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v, finite_only=finite_only) for k, v in value.items()}
    if isinstance(value, list | tuple | np.ndarray):
        return [to_jsonable(v, finite_only=finite_only) for v in value]
    if isinstance(value, Fraction):
        return str(value)
    if isinstance(value, np.generic):
        value = value.item()
    if finite_only and isinstance(value, float) and not math.isfinite(value):
        return None
    return value
