"""Link rates: the one value type (``Rate``) and the one grammar for every rate gradcode reads
or prints: the cluster's options and spec files, run files, workflow configs, the link probe,
simulation specs, figures and ``tc``'s commands.

A rate is written ``<number><unit>`` (no space), the number decimal (``100``, ``12.5``,
``1.25e7``) and the unit one of

- bits per second, as ``tc`` spells them, in any case: ``bit``, ``kbit``, ``mbit``, ``gbit``;
- bytes per second, only with the explicit ``/s``: ``B/s``, ``kB/s`` (or ``KB/s``), ``MB/s``,
  ``GB/s`` (a capital ``B``: bytes).

Multiples are SI (decimal): ``1kbit`` = 1000 bit/s, ``1MB/s`` = 10^6 bytes per second.
Binary multiples (``kibit``, ``KiB/s``, ...) are refused, with the SI spelling of the same
rate: one meaning per prefix everywhere.

Refused with one line naming both readings, because conventions disagree on them: ``bps``,
``kbps``, ``mbps``, ``gbps`` in any case (``tc`` reads them as *bytes* per second, most other
tools as bits), ``b/s`` with a small ``b`` (``Mb/s``) and a bare number (no unit at all).
So ``100mbit`` is 100 Mbit/s and ``100MB/s`` 100 megabytes per second wherever they are
written, and ``100mbps`` nowhere.

``PATTERN`` is the grammar as one regular expression (the workflow's config schema carries the
same one, checked by the tests); ``str(rate)`` is the canonical spelling, in bits as ``tc``
takes them (``100mbit``; ``Rate.parse(str(rate)) == rate`` exactly), ``format(rate, ".4g")``
the same rounded (``95.68mbit``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from gradcode.errors import UserError

_NUMBER = r"[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?"
#: the grammar: every spelling ``Rate.parse`` accepts, and nothing else
PATTERN = rf"^{_NUMBER}([kKmMgG]?[bB][iI][tT]|[kKMG]?B/s)$"
_ACCEPTED = re.compile(rf"^(?P<number>{_NUMBER})(?P<unit>[kKmMgG]?[bB][iI][tT]|[kKMG]?B/s)$")
#: a number and whatever follows it, to say what is wrong with a refused spelling
_ANY = re.compile(rf"^(?P<number>[+-]?{_NUMBER})(?P<unit>.*)$")
#: spellings read as bits by some tools and as bytes by others (tc: kbps = kilobytes/s)
_AMBIGUOUS = re.compile(r"^(?P<prefix>[kKmMgG]?)(?:[bB][pP][sS]|b/s)$")
_BINARY = re.compile(r"^(?P<prefix>[kKmMgG])i(?P<unit>[bB][iI][tT]|B/s)$")
_SCALE = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9}
_BINARY_SCALE = {"k": 1024.0, "m": 1024.0**2, "g": 1024.0**3}
#: the prefixes as the two readings of an ambiguous spelling write them
_BIG = {"": "", "k": "k", "m": "M", "g": "G"}
_BYTES_WORD = {"": "", "k": "kilo", "m": "mega", "g": "giga"}
#: the canonical spelling's units, largest first (bits, as tc takes them)
_CANONICAL = (("gbit", 10**9), ("mbit", 10**6), ("kbit", 10**3))
EXAMPLE = "100mbit or 12.5MB/s"
UNITS = "bits per second: bit, kbit, mbit, gbit; bytes per second: B/s, kB/s, MB/s, GB/s"


class RateError(UserError):
    """A rate that is not in the grammar, or not a finite positive rate (one line naming the
    field, and for an ambiguous spelling both readings)."""


@dataclass(frozen=True, order=True)
class Rate:
    """A positive, finite link rate, held as bytes per second (ordered by it)."""

    bytes_per_second: float

    def __post_init__(self) -> None:
        value = self.bytes_per_second
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise RateError(f"a rate holds a number of bytes per second, got {value!r}")
        number = float(value) if abs(value) < 2**1024 else math.inf  # a huge int: no float
        if not 0 < number * 8 < math.inf:  # in bits too
            raise RateError(f"a rate must be finite and > 0 bytes per second, got {value!r}")
        object.__setattr__(self, "bytes_per_second", number)

    @classmethod
    def from_bits(cls, bits_per_second: float) -> Rate:
        return cls(bits_per_second / 8)

    @property
    def bits_per_second(self) -> float:
        return self.bytes_per_second * 8

    @classmethod
    def parse(cls, value: Any, field: str) -> Rate:
        """The rate ``value`` spells (a ``Rate`` passes through); ``RateError`` naming
        ``field`` (e.g. ``run.yaml: network.links.rate``) otherwise."""
        if isinstance(value, Rate):
            return value
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise RateError(f"{field}: expected a rate like {EXAMPLE}, got {value!r}")
        if not isinstance(value, str):
            if not 0 < value < 2**1024:  # NaN, infinities and ints beyond a float too
                raise RateError(f"{field}: a rate must be finite and > 0, got {value!r}")
            number = _number_text(value)
            raise RateError(
                f"{field}: {value!r} has no unit: write {number}bit ({number} bit/s) or "
                f"{number}B/s ({number} bytes per second)"
            )
        match = _ACCEPTED.match(value)
        if match is None:
            raise RateError(f"{field}: {_refusal(value)}")
        text, unit = match["number"], match["unit"]
        if not 0 < float(text) < math.inf:  # before the exact value: 1e99999999 is no number
            raise RateError(f"{field}: a rate must be finite and > 0, got {value!r}")
        # exactly, then rounded once: 1.1mbit is 1100000 bit/s, not 1100000.0000000002
        # (fractions loads here: the ranks that only receive a parsed config never parse)
        from fractions import Fraction

        scale = _SCALE[unit[:-3].lower()] * (1 if unit.endswith("B/s") else Fraction(1, 8))
        try:
            amount = float(Fraction(text) * scale)
        except OverflowError:
            amount = math.inf
        if not 0 < amount * 8 < math.inf:  # in bits too
            raise RateError(f"{field}: a rate must be finite and > 0, got {value!r}")
        return cls(amount)

    def __str__(self) -> str:
        bits = self.bits_per_second
        if not bits.is_integer():
            return f"{bits!r}bit"  # repr: the shortest decimal that reads back exactly
        whole = int(bits)
        for unit, scale in _CANONICAL:
            if whole % scale == 0:
                return f"{whole // scale}{unit}"
        return f"{whole}bit"

    def __format__(self, spec: str) -> str:
        """``format(rate, ".4g")``: the bits in the largest unit that keeps them >= 1,
        formatted by ``spec`` (``95.68mbit``); an empty ``spec``: ``str(rate)``."""
        if not spec:
            return str(self)
        bits = self.bits_per_second
        for unit, scale in _CANONICAL:
            if bits >= scale:
                return f"{format(bits / scale, spec)}{unit}"
        return f"{format(bits, spec)}bit"


def _number_text(value: float) -> str:
    """``value`` as the number of a spelling: ``12500000``, ``12.5``."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _refusal(text: str) -> str:
    """Why ``text`` is not a rate (it did not match the grammar)."""
    match = _ANY.match(text)
    if match is None:
        return f"expected a rate like {EXAMPLE} ({UNITS}), got {text!r}"
    number, unit = match["number"], match["unit"]
    if number.startswith(("-", "+")) or not unit:
        if number.startswith("-") or float(number) == 0:
            return f"a rate must be > 0, got {text!r}"
        if not unit:
            return (
                f"{text!r} has no unit: write {number}bit ({number} bit/s) or {number}B/s "
                f"({number} bytes per second)"
            )
        return f"expected a rate like {EXAMPLE} (no sign), got {text!r}"
    if unit[:1].isspace():
        return f"no space between the number and the unit: {text!r}"
    ambiguous = _AMBIGUOUS.match(unit)
    if ambiguous is not None:
        prefix = ambiguous["prefix"].lower()
        big = _BIG[prefix]
        return (
            f"{text!r} is ambiguous: write {number}{prefix}bit ({number} {big}bit/s) or "
            f"{number}{big}B/s ({number} {_BYTES_WORD[prefix]}bytes per second)"
        )
    binary = _BINARY.match(unit)
    if binary is not None:
        prefix = binary["prefix"].lower()
        amount = float(number) * _BINARY_SCALE[prefix]
        family = "B/s" if binary["unit"] == "B/s" else "bit"
        return (
            f"{text!r}: binary multiples are not accepted (SI only: 1kbit = 1000 bit/s); "
            f"write {_number_text(amount)}{family}"
        )
    return f"unknown rate unit {unit!r} in {text!r} (units: {UNITS})"
