"""Durations: the one value type (``Duration``) and the one grammar for every short time span
gradcode reads as a setting: the emulated cluster's link latency and jitter, in options and
spec files.

A duration is written ``<number><unit>`` (no space), the number decimal (``1``, ``0.25``,
``2.5e2``) and the unit one of ``us`` (microseconds), ``ms`` (milliseconds) or ``s`` (seconds),
in that case. A bare number is refused (a latency of ``1`` could mean a second or a
millisecond), except zero, which means the same in every unit. A duration is held as whole
nanoseconds, so one finer than a nanosecond is refused rather than rounded.

``str(duration)`` is the canonical spelling (``1ms``, ``250us``, ``1.5ms``;
``Duration.parse(str(d)) == d`` exactly).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from gradcode.errors import UserError

_NUMBER = r"[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?"
#: the grammar: every spelling ``Duration.parse`` accepts, besides zero
PATTERN = rf"^{_NUMBER}(us|ms|s)$"
_ACCEPTED = re.compile(rf"^(?P<number>{_NUMBER})(?P<unit>us|ms|s)$")
_SCALE = {"s": 10**9, "ms": 10**6, "us": 10**3}
EXAMPLE = "1ms or 250us"
#: the longest duration accepted (a latency of minutes is a cut link, not a latency)
LONGEST_NS = 60 * 10**9


class DurationError(UserError):
    """A duration that is not in the grammar, negative, or finer than a nanosecond (one line
    naming the field)."""


@dataclass(frozen=True, order=True)
class Duration:
    """A duration of zero or more whole nanoseconds (ordered by it)."""

    nanoseconds: int

    def __post_init__(self) -> None:
        value = self.nanoseconds
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= LONGEST_NS:
            raise DurationError(
                f"a duration holds whole nanoseconds from 0 to {LONGEST_NS}, got {value!r}"
            )

    @property
    def seconds(self) -> float:
        return self.nanoseconds / 1e9

    @classmethod
    def parse(cls, value: Any, field: str) -> Duration:
        """The duration ``value`` spells (a ``Duration`` passes through); ``DurationError``
        naming ``field`` (e.g. ``--latency``, ``spec.yaml: latency``) otherwise."""
        if isinstance(value, Duration):
            return value
        if (isinstance(value, int) and not isinstance(value, bool) and value == 0) or (
            value == "0"
        ):
            return cls(0)
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise DurationError(f"{field}: expected a duration like {EXAMPLE}, got {value!r}")
        if not isinstance(value, str) or re.fullmatch(_NUMBER, value.strip()):
            raise DurationError(
                f"{field}: {value!r} has no unit: write it with us, ms or s (e.g. {value}ms)"
            )
        match = _ACCEPTED.match(value)
        if match is None:
            if value.startswith("-"):
                raise DurationError(f"{field}: a duration must be >= 0, got {value!r}")
            raise DurationError(
                f"{field}: expected a duration like {EXAMPLE} (units us, ms, s; no space), "
                f"got {value!r}"
            )
        from fractions import Fraction

        exact = Fraction(match["number"]) * _SCALE[match["unit"]]
        if exact > LONGEST_NS:
            raise DurationError(f"{field}: {value!r} is longer than {LONGEST_NS // 10**9}s")
        if exact.denominator != 1:
            raise DurationError(f"{field}: {value!r} is finer than a nanosecond")
        return cls(int(exact))

    def __str__(self) -> str:
        ns = self.nanoseconds
        if ns == 0:
            return "0ms"
        for unit in ("s", "ms", "us"):
            if ns % _SCALE[unit] == 0:
                return f"{ns // _SCALE[unit]}{unit}"
        # not whole microseconds: decimals of the largest unit the duration reaches
        unit = next((u for u in ("s", "ms") if ns >= _SCALE[u]), "us")
        whole, rest = divmod(ns, _SCALE[unit])
        digits = len(str(_SCALE[unit])) - 1
        return f"{whole}.{str(rest).zfill(digits).rstrip('0')}{unit}"

    def __bool__(self) -> bool:
        return self.nanoseconds > 0
