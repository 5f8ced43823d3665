"""A small least-recently-used cache: the one every decoder and the simulator use.

Decoders cache their coefficients per responder set and the simulator its draws per seed; all
of them want the same thing: bounded memory, the newest entries kept, a hit moved to the end.
(``functools.lru_cache`` caches functions, not the per-instance tables these are.)
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class LRUCache(Generic[V]):
    """At most ``maxsize`` entries; ``get`` refreshes an entry, ``put`` evicts the oldest."""

    def __init__(self, maxsize: int) -> None:
        if maxsize < 1:
            raise ValueError(f"LRUCache needs maxsize >= 1 (got {maxsize})")
        self.maxsize = maxsize
        self._entries: OrderedDict[Hashable, V] = OrderedDict()

    def get(self, key: Hashable) -> V | None:
        """The entry of ``key`` (now the most recent), or ``None``."""
        value = self._entries.get(key)
        if value is not None:
            self._entries.move_to_end(key)
        return value

    def put(self, key: Hashable, value: V) -> V:
        """Store ``value`` under ``key``, evicting the least recently used; returns ``value``."""
        self._entries[key] = value
        self._entries.move_to_end(key)
        if len(self._entries) > self.maxsize:
            self._entries.popitem(last=False)
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
