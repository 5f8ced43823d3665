"""The per-parent code of CodedReduce (paper 001, CompAlloc): one gradient code over a parent's
``n`` children, shared by every parent of the tree, with its decodability rule vectorized over
many sibling groups at once (``gradcode.codes.coded_reduce`` walks the tree with it).
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from gradcode.codes.base import GradientCode
from gradcode.lru import LRUCache


class SiblingRule:
    """The per-parent code over ``n`` siblings, with vectorized combinatorial rules.

    ``ok``, ``fix_cost`` and ``cheapest`` work on many sibling groups at once (rows of a
    ``(P, n)`` array); ``coefficients`` returns the decoding vector for one responder set.
    """

    cache_size: ClassVar[int] = 4096

    def __init__(self, inner: GradientCode) -> None:
        self.inner = inner
        self.n, self.s = inner.n, inner.s
        self.b = inner.encoding_matrix()[:, :, 0]  # type: ignore[attr-defined]
        self.parts = tuple(tuple(inner.partitions(j)) for j in range(self.n))
        self.grouped = inner.name == "frc"
        if self.grouped:
            # children holding the same blocks form a group; one responder per group suffices
            labels: dict[frozenset, int] = {}
            group_of = np.array([labels.setdefault(frozenset(p), len(labels)) for p in self.parts])
            self.order = np.argsort(group_of, kind="stable")
            self.groups = len(labels)
            if np.bincount(group_of).tolist() != [self.s + 1] * self.groups:
                raise AssertionError(f"{inner!r}: groups are not of size s + 1")
        self._cache: LRUCache[tuple[np.ndarray, np.ndarray, float]] = LRUCache(self.cache_size)

    def _by_group(self, rows: np.ndarray) -> np.ndarray:
        return rows[:, self.order].reshape(rows.shape[0], self.groups, self.s + 1)

    def ok(self, present: np.ndarray) -> np.ndarray:
        """``(P, n)`` bool -> ``(P,)``: whether each row's present children suffice."""
        if self.grouped:
            return self._by_group(present).any(axis=2).all(axis=1)
        return present.sum(axis=1) >= self.n - self.s

    def fix_cost(self, costs: np.ndarray) -> np.ndarray:
        """``(P, n)`` costs of making each child usable -> ``(P,)`` cheapest total."""
        if self.grouped:
            return self._by_group(costs).min(axis=2).sum(axis=1)
        return np.sort(costs, axis=1)[:, : self.n - self.s].sum(axis=1)

    def cheapest(self, costs: np.ndarray) -> list[int]:
        """Children (local indices) of one cheapest decodable set, given ``(n,)`` costs."""
        if self.grouped:
            members = self.order.reshape(self.groups, self.s + 1)
            return [int(row[np.argmin(costs[row])]) for row in members]
        return [int(j) for j in np.argsort(costs, kind="stable")[: self.n - self.s]]

    def coefficients(self, local: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray, float]:
        """``(used, a, condition)`` for sorted responding children ``local``.

        Asks the per-parent code itself: decoding unit vectors returns its coefficients.
        """
        hit = self._cache.get(local)
        if hit is not None:
            return hit
        unit = np.eye(len(local))
        result = self.inner.decode_result({j: unit[row] for row, j in enumerate(local)}, len(local))
        used = np.flatnonzero(result.gradient)
        entry = (np.asarray(local)[used], result.gradient[used], result.condition)
        return self._cache.put(local, entry)
