"""How results reach a collector (the master, a tree parent) through its link
(``gradcode.timing.links``' model, its docstring's "Collection"): pushed, each flowing once
ready, or pulled, only those the collector asks for after their notices (``Pulls`` by a
declared ``CompletionRule``, ``GreedyPulls`` until decodable); ``collect`` gives the arrivals.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcode.codes.base import GradientCode
from gradcode.codes.completion import CompletionRule, decodable_prefix
from gradcode.codes.tree import MASTER
from gradcode.timing.fair_share import equal_flows, equal_flows_finish, fair_finish_trials
from gradcode.topology import topology_of


@dataclass(frozen=True)
class Pulls:
    """Which messages the master pulls under ``collection: pull`` (``gradcode.timing.links``'
    docstring): in every group of a code's ``CompletionRule``, the first ``needed`` by notice."""

    columns: tuple[np.ndarray, ...]  # every group's message columns, in key order
    needed: tuple[int, ...]

    @classmethod
    def of(cls, code: GradientCode, node: int = MASTER) -> Pulls | GreedyPulls:
        """What collector ``node`` (the master: ``MASTER``, a tree's parents) pulls: by its
        declared rule (``Topology.collector_rule``), else ``GreedyPulls`` by its test of
        whether what it pulled suffices (the runtime's ``collector_puller``)."""
        topology = topology_of(code)
        keys = topology.collector_keys(code, node)
        rule, decodable = topology.collector_rule(code, node)
        if rule is None:
            return GreedyPulls(keys, decodable)
        return cls.by(rule, keys)

    @classmethod
    def by(cls, rule: CompletionRule, keys: Sequence[Any]) -> Pulls:
        """``rule`` over messages in ``keys`` order (a tree parent's: its children)."""
        column = {key: q for q, key in enumerate(keys)}
        columns = tuple(
            np.array(sorted(column[key] for key in group), dtype=np.intp) for group in rule.groups
        )
        return cls(columns, rule.needed)

    def select(self, notices: np.ndarray) -> np.ndarray:
        """Which messages are pulled, ``(trials, keys)`` booleans, for their notices'
        arrivals ``notices[t, q]`` (``inf``: never sent, never pulled)."""
        notices = np.asarray(notices, dtype=np.float64)
        chosen = np.zeros(notices.shape, dtype=bool)
        rows = np.arange(notices.shape[0])[:, None]
        for columns, count in zip(self.columns, self.needed, strict=True):
            # a stable sort of the group's columns in key order: ties go to the first key
            first = np.argsort(notices[:, columns], axis=1, kind="stable")[:, :count]
            chosen[rows, columns[first]] = True
        return chosen & np.isfinite(notices)


@dataclass(frozen=True)
class GreedyPulls:
    """Which messages a collector whose rule is not declared as groups pulls under
    ``collection: pull``: by notice (ties in key order), while those pulled so far are not
    ``decodable`` (``decodable_prefix``; the runtime's ``DecodablePuller``)."""

    keys: Sequence[Any]  # the collector's messages (a tree parent's: its children), in order
    decodable: Callable[[list[Any]], bool]

    def select(self, notices: np.ndarray) -> np.ndarray:
        """``Pulls.select`` for messages ``keys``, ``notices[t, q]`` the ``q``-th's."""
        notices = np.asarray(notices, dtype=np.float64)
        chosen = np.zeros(notices.shape, dtype=bool)
        for trial, row in enumerate(notices):
            order = [q for q in np.argsort(row, kind="stable") if np.isfinite(row[q])]
            count = decodable_prefix([self.keys[q] for q in order], self.decodable)
            chosen[trial, order if count is None else order[:count]] = True
        return chosen


def _chains_of(after: np.ndarray, keep: np.ndarray) -> np.ndarray:
    """Per trial, ``after`` (each flow's predecessor, -1: none) with the flows not in
    ``keep[t]`` skipped: each flow's nearest kept predecessor, ``(trials, flows)``."""
    after = np.asarray(after, dtype=np.intp)
    chains = np.broadcast_to(after, keep.shape).copy()
    rows = np.arange(keep.shape[0])[:, None]
    for _ in range(after.size):  # a chain skips at most every flow once
        skipped = (chains >= 0) & ~keep[rows, np.maximum(chains, 0)]
        if not skipped.any():
            break
        chains = np.where(skipped, after[np.maximum(chains, 0)], chains)
    return chains


def collect(
    ready: np.ndarray,
    sizes: Sequence[float],
    caps: Sequence[float],
    capacity: float,
    after: Sequence[int] | None,
    latency: float,
    pulls: Pulls | GreedyPulls | None = None,
) -> np.ndarray:
    """When each result reaches the master, ``(trials, keys)``, for results ready at
    ``ready[t, q]`` (``inf``: never) of ``sizes[q]`` bytes, capped at ``caps[q]``, through
    the master's link of ``capacity``, a sender's previous one ``after[q]`` (``fair_finish``):
    pushed (``pulls`` None: each flows once ready) or pulled by ``pulls``
    (``gradcode.timing.links``' docstring: the others never arrive, ``inf``)."""
    ready = np.atleast_2d(np.asarray(ready, dtype=np.float64))
    count = ready.shape[1]
    before = np.full(count, -1, dtype=np.intp) if after is None else np.asarray(after, np.intp)
    size = np.asarray(sizes, dtype=np.float64)
    cap = np.asarray(caps, dtype=np.float64)
    equal = equal_flows(size, cap, before)
    arrivals = np.full(ready.shape, np.inf)
    if pulls is None:
        if equal:
            return latency + equal_flows_finish(ready, size[0], cap[0], capacity)
        return latency + fair_finish_trials(ready, size, cap, capacity, before)
    notices = ready + latency
    chosen = pulls.select(notices)
    asked = np.where(chosen, notices + latency, np.inf)  # the PULL reaches the worker
    if equal:  # the flows not pulled never start (inf) and hold up none
        finish = equal_flows_finish(asked, size[0], cap[0], capacity)
        arrivals[chosen] = latency + finish[chosen]
        return arrivals
    finish = fair_finish_trials(asked, size, cap, capacity, _chains_of(before, chosen))
    arrivals[chosen] = latency + finish[chosen]
    return arrivals
