"""A small least-recently-used cache: the one every decoder and the simulator use.

Decoders cache their coefficients per responder set and the simulator its random draws per
chunk; all of them want the same thing: bounded memory, the most recently used entries kept.
The bound counts entries, or with ``weight`` any size (the simulator's is bytes). An entry
heavier than the whole bound is returned but not kept. (``functools.lru_cache`` caches
functions, not the per-instance tables these are.)
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class LRUCache(Generic[V]):
    """Entries of total ``weight`` at most ``maxsize`` (default weight: 1 per entry); ``get``
    refreshes an entry, ``put`` evicts the least recently used until the new one fits."""

    def __init__(self, maxsize: int, *, weight: Callable[[V], int] | None = None) -> None:
        if maxsize < 0:  # 0 keeps nothing: every get_or_compute computes
            raise ValueError(f"LRUCache needs maxsize >= 0 (got {maxsize})")
        self.maxsize = maxsize
        self._weight = weight
        self._entries: OrderedDict[Hashable, tuple[V, int]] = OrderedDict()
        self.total = 0

    def get(self, key: Hashable) -> V | None:
        """The entry of ``key`` (now the most recent), or ``None``."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        self._entries.move_to_end(key)
        return entry[0]

    def put(self, key: Hashable, value: V) -> V:
        """Store ``value`` under ``key``, evicting the least recently used; returns ``value``."""
        size = 1 if self._weight is None else int(self._weight(value))
        old = self._entries.pop(key, None)
        if old is not None:
            self.total -= old[1]
        while self._entries and self.total + size > self.maxsize:
            _, (_, evicted) = self._entries.popitem(last=False)
            self.total -= evicted
        if size <= self.maxsize:
            self._entries[key] = (value, size)
            self.total += size
        return value

    def get_or_compute(self, key: Hashable, compute: Callable[[], V]) -> V:
        """The entry of ``key``, computed by ``compute()`` and stored on a miss."""
        value = self.get(key)
        return value if value is not None else self.put(key, compute())

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._entries

    def clear(self) -> None:
        self._entries.clear()
        self.total = 0
