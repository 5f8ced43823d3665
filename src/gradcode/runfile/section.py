"""The strict reader of one mapping of a run file: every key is taken or is an error, and every
error is one line naming the field (``data.seed: must be an integer (got 'x')``).

The run file's blocks (``gradcode.runfile.blocks``) read their keys through it; nothing here
knows which keys a block has.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from gradcode.errors import UserError

#: "no default given": the key is required (``None`` is a default like any other)
MISSING = object()


class ConfigError(UserError):
    """A bad run configuration; the message is one line naming the key."""


class Section:
    """Strict reader of one mapping of the YAML: every key must be taken or is an error."""

    def __init__(self, value: Any, path: str, allowed: tuple[str, ...]) -> None:
        where = path or "the run file"
        if not isinstance(value, Mapping):
            raise ConfigError(f"{where}: must be a mapping (got {show(value)})")
        self.data, self.path = dict(value), path
        bad = [key for key in self.data if not isinstance(key, str)]
        if bad:
            raise ConfigError(f"{self.key(str(bad[0]))}: keys must be strings")
        unknown = [key for key in self.data if key not in allowed]
        if unknown:
            raise ConfigError(
                f"{self.key(unknown[0])}: unknown key (allowed: {', '.join(allowed)})"
            )

    def key(self, name: str) -> str:
        return f"{self.path}.{name}" if self.path else name

    def has(self, name: str) -> bool:
        return self.data.get(name) is not None

    def raw(self, name: str, default: Any = MISSING) -> Any:
        value = self.data.get(name)
        if value is None:
            if default is MISSING:
                raise ConfigError(f"{self.key(name)}: missing")
            return default
        return value

    def integer(self, name: str, default: Any = MISSING, *, minimum: int = 0) -> Any:
        value = self.raw(name, default)
        if value is default and default is not MISSING:
            return value
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError(f"{self.key(name)}: must be an integer (got {show(value)})")
        if value < minimum:
            raise ConfigError(f"{self.key(name)}: must be >= {minimum} (got {value})")
        return value

    def number(self, name: str, default: Any = MISSING, *, positive: bool = False) -> Any:
        value = self.raw(name, default)
        if value is default and default is not MISSING:
            return value
        return number(self.key(name), value, positive=positive)

    def string(self, name: str, default: Any = MISSING, choices: tuple[str, ...] = ()) -> Any:
        value = self.raw(name, default)
        if value is default and default is not MISSING:
            return value
        if not isinstance(value, str) or not value:
            raise ConfigError(f"{self.key(name)}: must be a non-empty string (got {show(value)})")
        if choices and value not in choices:
            raise ConfigError(
                f"{self.key(name)}: must be one of {', '.join(choices)} (got {value!r})"
            )
        return value

    def boolean(self, name: str, default: bool) -> bool:
        value = self.raw(name, default)
        if not isinstance(value, bool):
            raise ConfigError(f"{self.key(name)}: must be true or false (got {show(value)})")
        return value

    def mapping(self, name: str) -> dict[str, Any]:
        value = self.raw(name, {})
        if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
            raise ConfigError(f"{self.key(name)}: must be a mapping (got {show(value)})")
        return dict(value)

    def workers(self, name: str) -> tuple[int, ...]:
        value = self.raw(name, [])
        if not isinstance(value, list):
            raise ConfigError(f"{self.key(name)}: must be a list of worker indices")
        for index, item in enumerate(value):
            if isinstance(item, bool) or not isinstance(item, int) or item < 0:
                raise ConfigError(
                    f"{self.key(name)}[{index}]: must be a worker index >= 0 (got {show(item)})"
                )
        if len(set(value)) != len(value):
            raise ConfigError(f"{self.key(name)}: lists a worker twice")
        return tuple(sorted(value))

    def section(self, name: str, allowed: tuple[str, ...]) -> Section:
        return Section(self.raw(name, {}), self.key(name), allowed)


def number(path: str, value: Any, *, positive: bool = False) -> float:
    """``value`` as a finite float >= 0 (> 0 with ``positive``); ``path`` names the field."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{path}: must be a number (got {show(value)})")
    if not math.isfinite(value) or value < 0 or (positive and value == 0):
        raise ConfigError(f"{path}: must be a finite number {'> 0' if positive else '>= 0'}")
    return float(value)


def show(value: Any) -> str:
    """``value`` as an error message quotes it: its repr, cut to 60 characters."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
