"""The checks of a constructor's parameters, for every room that builds by name (codes,
attacks, aggregators, plug-ins'): one argument order, ``(name, owner, value, ...)``.

``name`` is the parameter, ``owner`` what takes it as the message names it (a scheme, ``"detox"``;
``"attack alie"``; ``"aggregator krum"``), ``value`` what was given. A failed check is a one-line
``ParameterError`` (a ``ValueError`` and a ``UserError``) naming owner, parameter, constraint and
the value; a passed one returns the value as the plain Python type the owner keeps.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcode.errors import ParameterError


def check_int(name: str, owner: str, value: Any, *, minimum: int = 0) -> int:
    """An integer ``>= minimum``, as ``int`` (a ``bool`` is no integer here)."""
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ParameterError(f"{owner} needs an integer {name} (got {name}={value!r})")
    if value < minimum:
        raise ParameterError(f"{owner} needs {name} >= {minimum} (got {name}={int(value)})")
    return int(value)


def check_number(
    name: str,
    owner: str,
    value: Any,
    *,
    positive: bool = False,
    within: tuple[float, float] | None = None,
) -> float:
    """A finite number, as ``float``: ``> 0`` if ``positive``; in ``[low, high)`` for ``within
    = (low, high)``."""
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise ParameterError(f"{owner} needs a number {name} (got {name}={value!r})")
    number = float(value)
    if within is not None:
        low, high = within
        if not (np.isfinite(number) and low <= number < high):
            raise ParameterError(
                f"{owner} needs {name} in [{low:g}, {high:g}) (got {name}={value!r})"
            )
    elif not np.isfinite(number) or (positive and not number > 0):
        need = "a finite number > 0" if positive else "a finite number"
        raise ParameterError(f"{owner} needs {name} to be {need} (got {name}={value!r})")
    return number
