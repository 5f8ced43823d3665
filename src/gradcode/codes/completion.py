"""``CompletionRule``: a code's decodability rule in a form a closed formula can use.

Many codes decode as soon as *enough* messages have arrived, whichever they are: "any ``r``
of the ``n`` workers" (cyclic repetition, Ye-Abbe, LCC, uncoded with ``r = n``), or "at least
one of each group of ``s + 1``" (fractional repetition). Such a code declares it through
``GradientCode.completion_rule()``; the default is ``None`` (no such rule, or not declared),
and every consumer must then fall back on ``completion_times`` (the Monte Carlo).

A rule is a list of disjoint groups of message keys, each with the number of its messages the
master needs: the gradient is decodable once, in every group, at least ``needed`` messages
arrived, so the completion time is the largest over the groups of the ``needed``-th smallest
arrival in the group. With independent arrivals its distribution is a product over the groups
(``P(T <= t) = prod_g P(at least needed_g of group g by t)``), which is what
``gradcode.recommend.exact`` integrates. The conformance kit (``gradcode codes verify``)
checks that a declared rule gives the code's own ``completion_times`` on random arrivals.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import numpy as np

MessageKey = Hashable


@dataclass(frozen=True)
class CompletionRule:
    """Decodable once, in every group of ``groups``, ``needed`` of its messages arrived.

    ``groups``: disjoint, non-empty tuples of message keys; ``needed``: one count per group,
    ``1 <= needed[g] <= len(groups[g])``. Keys in no group do not matter for decoding.
    """

    groups: tuple[tuple[MessageKey, ...], ...]
    needed: tuple[int, ...]

    def __post_init__(self) -> None:
        groups = tuple(tuple(group) for group in self.groups)
        needed = tuple(int(count) for count in self.needed)
        object.__setattr__(self, "groups", groups)
        object.__setattr__(self, "needed", needed)
        if not groups or len(groups) != len(needed):
            raise ValueError("completion rule: one count per group, at least one group")
        seen: set[MessageKey] = set()
        for group, count in zip(groups, needed, strict=True):
            if not 1 <= count <= len(group):
                raise ValueError(
                    f"completion rule: a group of {len(group)} keys cannot need {count}"
                )
            if seen & set(group) or len(set(group)) != len(group):
                raise ValueError("completion rule: the groups must be disjoint, keys distinct")
            seen |= set(group)

    @classmethod
    def any_of(cls, keys: Sequence[MessageKey], count: int) -> CompletionRule:
        """Any ``count`` of ``keys``: one group."""
        return cls((tuple(keys),), (count,))

    def completion_times(self, keys: Sequence[MessageKey], arrivals: np.ndarray) -> np.ndarray:
        """The rule on ``arrivals`` ``(trials, len(keys))``, columns in ``keys`` order: per
        trial the largest over the groups of the ``needed``-th arrival (``inf``: never)."""
        arrivals = np.asarray(arrivals, dtype=np.float64)
        column = {key: c for c, key in enumerate(keys)}
        done = np.full(arrivals.shape[0], -np.inf)
        for group, count in zip(self.groups, self.needed, strict=True):
            times = arrivals[:, [column[key] for key in group]]
            done = np.maximum(done, np.partition(times, count - 1, axis=1)[:, count - 1])
        return done


def decodable_prefix(
    order: Sequence[MessageKey], decodable: Callable[[list[MessageKey]], bool]
) -> int | None:
    """How many of ``order``'s first keys a collector that takes them in that order needs:
    the smallest ``k`` with ``decodable(order[:k])``, ``None`` if not even all of them do.

    For a code without a ``CompletionRule`` this is the rule itself (``decodable``: the code's
    ``is_decodable``, or a tree parent's ``children_decodable``), asked of what a master or a
    parent holds in the order it received it: the arrival a completion time is, and the
    results a collector pulling by readiness asks for (``gradcode.runfile.collection``, the
    model's ``gradcode.timing.links.GreedyPulls``).
    """
    for count in range(1, len(order) + 1):
        if decodable(list(order[:count])):
            return count
    return None


def order_statistic(arrivals: np.ndarray, count: int) -> np.ndarray:
    """Per row, the time by which ``count`` of the messages have arrived: ``(trials,)``."""
    return np.partition(arrivals, count - 1, axis=1)[:, count - 1]
