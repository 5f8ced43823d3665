"""The interface of tree-shaped gradient codes: aggregation runs up a tree, not to one master.

A tree code's workers are the nodes ``0..n-1`` of a rooted tree whose root, ``MASTER``, is the
master (not a worker). Every node computes its own coded partial (``encode``); a parent waits
until the messages of the children in hand are decodable by *its* rule
(``children_decodable``), reduces them (``reduce_children``) and sends its own message
(``encode_node``) to its parent. The master's reduction of its children is the gradient.

The MPI runtime (``gradcode.train``) and the timing models (``gradcode.timing``) run any
``TreeCode`` through this interface alone: the shape of the tree (``children``, ``parent``,
``depth``, ``height``), the per-parent waiting rule (``children_decodable``, vectorised over
trials in ``children_completion_times``) and the per-node steps. ``decode`` performs the whole
reduction centrally from every node's own coded partial, so the flat verification harness and
simulator work unchanged; ``run_pattern`` runs the tree bottom up through the per-node steps.
"""

from __future__ import annotations

import math
from abc import abstractmethod
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from gradcode.codes.base import DecodeResult, GradientCode, Pattern, require
from gradcode.codes.capabilities import Capabilities
from gradcode.codes.completion import CompletionRule, decodable_prefix

#: the root of every tree: the master, which is not a worker and computes nothing
MASTER = -1


class TreeCode(GradientCode):
    """Base class of codes whose messages are reduced up a tree (see the module docstring).

    Message keys are node indices (one message per node). Subclasses implement the tree
    (``children``, ``parent``), the per-parent rule (``children_decodable``,
    ``reduce_children``) and ``encode_node``; the rest follows.
    """

    capabilities: ClassVar[Capabilities] = Capabilities(topology="tree")

    # -- the tree ---------------------------------------------------------------------------
    @abstractmethod
    def children(self, node: int) -> Sequence[int]:
        """Children of ``node`` (of ``MASTER``: the top layer), in order; empty for leaves."""

    @abstractmethod
    def parent(self, node: int) -> int:
        """Parent of worker ``node`` (``MASTER`` for the top layer)."""

    def depth(self, node: int) -> int:
        """Edges from ``MASTER`` to ``node`` (0 for ``MASTER``)."""
        depth = 0
        while node != MASTER:
            node, depth = self.parent(node), depth + 1
        return depth

    @property
    def height(self) -> int:
        """Depth of the deepest node."""
        return max(self.depth(node) for node in range(self.n))

    def is_leaf(self, node: int) -> bool:
        return len(self.children(node)) == 0

    def nodes_at_depth(self, depth: int) -> Sequence[int]:
        """The nodes at ``depth`` (``0``: just ``MASTER``), in breadth-first order."""
        require(0 <= depth <= self.height, f"{self.name} has depths 0..{self.height}")
        layer: list[int] = [MASTER]
        for _ in range(depth):
            layer = [child for node in layer for child in self.children(node)]
        return layer

    def parents(self) -> tuple[int, ...]:
        """Every node with children, ``MASTER`` first, breadth first."""
        found, layer = [], [MASTER]
        while layer:
            found += [node for node in layer if len(self.children(node))]
            layer = [child for node in layer for child in self.children(node)]
        return tuple(found)

    # -- the per-parent rule ----------------------------------------------------------------
    @abstractmethod
    def children_decodable(self, node: int, children: Iterable[int]) -> bool:
        """Whether ``node`` (or ``MASTER``) can reduce the messages of ``children``."""

    def children_rule(self, node: int) -> CompletionRule | None:
        """``node``'s rule (``children_decodable``) as a ``CompletionRule`` over its
        children, where it is one: a parent that pulls its children's messages
        (``runtime.collection``) then asks for the first ``needed`` of every group and for no
        child its rule can do without. Default ``None``: it asks while the children it asked
        are not decodable. The conformance kit checks a declared rule against
        ``children_completion_times``."""
        return None

    def children_completion_times(self, node: int, arrivals: np.ndarray) -> np.ndarray:
        """Earliest time ``node`` can reduce its children, per trial.

        ``arrivals`` has shape ``(trials, len(children(node)))`` in ``children`` order;
        returns ``(trials,)`` (``inf`` where never). This generic version adds children in
        arrival order and asks ``children_decodable``; subclasses vectorise it.
        """
        kids = list(self.children(node))
        result = np.full(arrivals.shape[0], np.inf)
        for trial, row in enumerate(np.asarray(arrivals, dtype=np.float64)):
            order = [j for j in np.argsort(row, kind="stable") if np.isfinite(row[j])]
            count = decodable_prefix(
                [kids[j] for j in order], lambda held: self.children_decodable(node, held)
            )
            if count is not None:
                result[trial] = row[order[count - 1]]
        return result

    @abstractmethod
    def reduce_children(
        self, node: int, children_messages: Mapping[int, np.ndarray], length: int
    ) -> DecodeResult:
        """``node``'s reduction of its children's messages (``MASTER``: the gradient).

        Raises ``NotDecodableError`` when the children that sent do not suffice.
        """

    @abstractmethod
    def encode_node(
        self,
        node: int,
        partials: np.ndarray,
        children_messages: Mapping[int, np.ndarray] | None = None,
    ) -> np.ndarray:
        """The message ``node`` sends up: its own coded partial and its children's reduction.

        ``partials``: ``(load(node), l)`` in ``partitions(node)`` order; ``children_messages``
        must satisfy ``children_decodable`` for an inner node and be empty for a leaf.
        """

    def decode_root(self, children_messages: Mapping[int, np.ndarray], length: int) -> DecodeResult:
        """The master's step: the gradient from the messages of its children."""
        return self.reduce_children(MASTER, children_messages, length)

    # -- verification -----------------------------------------------------------------------
    def run_pattern(
        self, instance: Any, pattern: Pattern, rng: np.random.Generator
    ) -> DecodeResult:
        """Bottom up: every responder that can sends ``encode_node``; the master reduces.

        A node whose children in hand are not decodable cannot send (its subtree is lost to
        its parent). The condition number is the worst of every reduction on the way.
        """
        partials = np.asarray(instance)
        length = partials.shape[1]
        sent: dict[int, np.ndarray] = {}
        conditions: list[float] = []
        for depth in range(self.height, 0, -1):
            for node in self.nodes_at_depth(depth):
                if node not in pattern.responders:
                    continue
                heard = {u: sent[u] for u in self.children(node) if u in sent}
                if not self.is_leaf(node):
                    if not self.children_decodable(node, heard):
                        continue
                    conditions.append(self.reduce_children(node, heard, length).condition)
                mine = partials[list(self.partitions(node))]
                sent[node] = self.encode_node(node, mine, heard)
        root = self.decode_root({u: sent[u] for u in self.children(MASTER) if u in sent}, length)
        known = [c for c in (*conditions, root.condition) if not math.isnan(c)]
        return DecodeResult(
            root.gradient,
            tuple(sorted(sent)),
            max(known, default=float("nan")),
        )
