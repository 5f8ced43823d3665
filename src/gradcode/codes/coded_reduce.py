"""CodedReduce: gradient coding over a tree (paper 001, Reisizadeh, Prakash, Pedarsani,
Avestimehr, "CodedReduce: A Fast and Robust Framework for Gradient Aggregation in Distributed
Learning", IEEE/ACM ToN 2021; Sections III-A to III-C, Appendices A to D).

Topology (Section III-A). An ``(n, L)``-regular tree: the master (root, not a worker) has ``n``
children, and every worker above the bottom layer has ``n`` children, so there are
``N = n + n^2 + ... + n^L`` workers. Workers are numbered breadth first: layer ``l`` (``1..L``)
holds nodes ``n + ... + n^(l-1)`` to ``n + ... + n^l - 1``; the children of the node at position
``i`` of layer ``l`` are positions ``i n .. i n + n - 1`` of layer ``l + 1``. The master is
``MASTER = -1``. ``children``, ``parent``, ``depth``, ``nodes_at_depth`` and ``is_leaf`` expose
the tree; ``branching`` is ``n`` and ``L`` the depth.

Per-parent code (CompAlloc, Appendix A). Every parent (the master included) uses the same
Tandon-style gradient code over its ``n`` children, built with the registry: ``frc`` (Tandon's
fractional repetition, needs ``(s + 1) | n``, 0/1 coefficients) or ``crc`` (Tandon's cyclic
repetition, their Algorithm 2, the one the paper cites; seeded). ``inner="auto"`` takes ``frc``
when ``(s + 1) | n`` (exact arithmetic, and it covers every configuration of the paper's
experiments) and ``crc`` otherwise. The per-parent code has encoding matrix ``B`` (``n x n``,
each child holds ``s + 1`` of ``n`` blocks) and decodes from any ``n - s`` children (``frc``:
from any set covering every group, a weaker condition).

Allocation (CR.Allocate, Appendix B). The data set is cut into ``k`` equal partitions. The
master splits all ``k`` of them (each carrying coefficient 1) into ``n`` contiguous blocks and
gives child ``j`` the blocks ``B`` assigns to it, every partition multiplied by ``B[j, block]``:
that is the data of the subtree ``T(1, j)``. A node keeps the first ``r_CR k`` partitions of
its subtree data (with their coefficients) as its own data and splits the rest among its
children in the same way, down to the leaves, which keep everything. Every worker thus computes
on exactly ``r_CR = 1 / (q + q^2 + ... + q^L)``, ``q = n / (s + 1)``, of the data (Theorem 1,
``r_cr``). ``k`` is the smallest integer making every load and every block a whole number of
partitions: the least common multiple of the denominators of ``r_CR`` and of the block size
(a parent's remaining data over ``n``) at every layer (e.g. ``k = 15`` for
``(n, L, s) = (3, 2, 1)``, as in the paper's Example 2, and ``k = 12`` for ``(4, 2, 1)``).
Within one subtree every partition appears at most once, so ``partitions(node)`` are distinct;
the same partition appears in several subtrees with different coefficients (products of ``B``
entries along the path). Deviations from the paper: none in the construction. Its ``B`` is
one random draw of Tandon's Algorithm 2 (Example 2 shows a hand-picked one), ours the seeded
draw of ``crc``; where ``(s + 1) | n`` we default to ``frc`` instead, which has the same load and
resiliency and exact arithmetic.

Execution (CR.Execute). Node ``v`` computes its own coded partial
``g_v = sum_p c_v[p] g_p`` over ``partitions(v)`` (``encode``), waits for enough children,
combines their messages with the per-parent decoding vector ``a`` and sends
``m_v = g_v + sum_u a_u m_u`` (``encode_node``). By induction ``m_v`` is the coded gradient of
the subtree's data, ``subtree_coefficients(v) @ G``, and the master's combination of its
children's messages (``decode_root``) is the full gradient. A node that straggles loses its
whole subtree for its parent; every parent tolerates ``s`` straggling children.

Interface mapping (a deliberate choice, since the flat interface has one master):

- ``n`` (attribute) is ``N``, the number of workers (the constructor's ``n`` is the branching,
  stored as ``branching``); ``k`` as above; ``s`` stragglers per parent; ``m = 1``; ``a = 0``.
- ``encode(node, partials)`` is the node's *own* coded partial ``g_v`` (for a leaf, its whole
  message); ``partials`` has shape ``(load, l)`` in ``partitions(node)`` order.
- ``decode(messages, length)`` takes the own coded partials of any set of nodes, keyed by node
  (what ``encode`` returns, so ``pattern_messages`` and a flat runtime work unchanged), and
  performs the whole tree reduction centrally: a node's message is usable when the node
  responded and the usable messages among its children are decodable by the per-parent code
  (leaves: when they responded). It raises ``NotDecodableError`` unless the master's usable
  children are decodable; ``needed`` is the exact minimum number of further nodes, and
  ``candidates`` the nodes of one such cheapest completion. The coefficients of all nodes
  (products of per-parent decoding coefficients along the path) are cached per responder set,
  so a repeated decode is one pass over the messages.
- ``is_decodable(keys)`` is that same rule, vectorized layer by layer (a few numpy operations
  per layer, no solve).
- The distributed path: ``encode_node(node, partials, children_messages)`` is the message a
  node sends up, ``reduce_children(node, children_messages, length)`` the per-parent decoding
  step, ``decode_root(children_messages, length)`` the master's step; ``run_pattern`` runs the
  tree bottom up through them (independently of ``decode``'s cached weights).
- ``patterns`` chooses ``s`` straggling children for every parent (master included),
  independently: ``C(n, s) ** (N / n)`` patterns, enumerated exhaustively where feasible.

Theorems 1 and 2 (the load ``r_cr`` and the run-time bounds ``theorem2_bounds``) live in
``gradcode.codes.coded_reduce_theory``, the per-parent code's rule in
``gradcode.codes.coded_reduce_siblings``.

Numerics. Measured with ``verify`` (gradient length 37, 40 random straggler patterns, seed 1)
on every tree of ``parameter_grid(50)``, i.e. every ``(n, L, s)`` with ``N <= 50`` and both
per-parent codes where ``frc`` applies: ``frc`` trees stay at ~3e-16 (additions only); ``crc``
trees with ``L >= 2`` at most 7.2e-12 (``(n, L, s) = (6, 2, 3)``, ``N = 42``); the flat
``L = 1`` trees, which are the ``crc`` code itself, reach 3.7e-9 (``n = 36``; above 1e-9 also at
``n = 29, 33, 49``). Larger trees, same protocol: ``(12, 2, s)`` with ``crc`` (``N = 156``, the
paper's cluster) at most 4.6e-10 (``s = 3``), ``(3, 4, 1)`` ``crc`` 1.8e-11, ``(5, 3, 2)``
``crc`` 6.5e-13. Every error stays below 1e-8 through ``N = 50``, so
``numerically_sound_up_to = None``; it is stated in units of ``N`` (the attribute ``n``, which
``parameter_grid`` bounds), not of the branching factor.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from fractions import Fraction
from typing import Any, ClassVar

import numpy as np

from gradcode.codes.base import (
    DecodeResult,
    GradientCode,
    NotDecodableError,
    Pattern,
    check_int,
    require,
)
from gradcode.codes.coded_reduce_siblings import SiblingRule
from gradcode.codes.coded_reduce_theory import check_tree, r_cr, theorem2_bounds, tree_size
from gradcode.codes.combine import linear_combination, message_vectors
from gradcode.codes.completion import CompletionRule
from gradcode.codes.registry import build
from gradcode.codes.tree import MASTER, TreeCode
from gradcode.lru import LRUCache

__all__ = ["MASTER", "CodedReduce", "r_cr", "theorem2_bounds", "tree_size"]

INNER_CODES = ("auto", "frc", "crc")


class CodedReduce(TreeCode):
    """CodedReduce on an ``(n, L)``-regular tree, ``s`` stragglers tolerated per parent.

    Parameters
    ----------
    n : int
        Children per parent (the branching factor, stored as ``branching``; the attribute
        ``n`` is the number of workers ``N = n + ... + n^L``).
    L : int
        Layers of workers below the master, ``L >= 1`` (``L = 1`` is the flat per-parent code).
    s : int
        Straggling children tolerated by every parent, ``0 <= s < n``.
    inner : {"auto", "frc", "crc"}
        Per-parent gradient code; ``"auto"`` is ``"frc"`` when ``(s + 1) | n``, else ``"crc"``.
    seed : int
        Seed of the ``crc`` construction (ignored by ``frc``).
    """

    name = "coded-reduce"
    #: measured (module docstring): below 1e-8 through N = 50 workers (the attribute ``n``)
    numerically_sound_up_to: ClassVar[int | None] = None
    cache_size: ClassVar[int] = 4096

    def __init__(self, n: int, L: int, s: int, inner: str = "auto", seed: int = 0) -> None:
        branching, depth, s = check_tree(self.name, n, L, s)
        require(
            inner in INNER_CODES,
            f"{self.name} needs inner in {INNER_CODES} (got inner={inner!r})",
        )
        if inner == "auto":
            inner = "frc" if branching % (s + 1) == 0 else "crc"
        require(
            inner != "frc" or branching % (s + 1) == 0,
            f"{self.name} with inner='frc' needs (s + 1) | n (got n={branching}, s={s})",
        )
        self.seed = check_int("seed", self.name, seed)
        self.branching, self.L, self.s, self.inner = branching, depth, s, inner
        self.n = tree_size(branching, depth)
        self.a, self.m = 0, 1
        self.r = r_cr(branching, depth, s)
        extra = {"seed": self.seed} if inner == "crc" else {}
        self._rule = SiblingRule(build(inner, n=branching, s=s, **extra))
        # first node of every layer, index 1..L (index L + 1 is the end of the tree)
        self._offsets = [0, *itertools.accumulate(branching**l for l in range(1, depth + 1))]
        self._offsets.insert(0, -1)
        self._depth = np.repeat(
            np.arange(1, depth + 1), [branching**l for l in range(1, depth + 1)]
        )
        self.k = self._sizes()[0]
        self._local = int(self.r * self.k)
        self._parts: list[tuple[int, ...]] = [()] * self.n
        self._coefficients: list[np.ndarray] = [np.empty(0)] * self.n
        self._allocate()
        self._cache: LRUCache[tuple[tuple[int, ...], np.ndarray, float]] = LRUCache(self.cache_size)

    # -- construction -----------------------------------------------------------------------
    def _sizes(self) -> tuple[int, list[Fraction]]:
        """Smallest ``k`` and the block size (fraction of the data) a parent of each layer cuts.

        ``blocks[l]`` is the size of one of the ``n`` blocks the parents in layer ``l`` (0: the
        master) split their remaining data into.
        """
        n, s, r = self.branching, self.s, self.r
        remaining, blocks = Fraction(1), []
        for _layer in range(1, self.L + 1):
            blocks.append(remaining / n)
            remaining = blocks[-1] * (s + 1) - r
        if remaining != 0:
            raise AssertionError(f"{self!r}: leaves do not end with load r_CR")
        k = math.lcm(r.denominator, *(block.denominator for block in blocks))
        return k, blocks

    def _split(self, parent: int, data: list[tuple[int, float]]) -> list[list[tuple[int, float]]]:
        """CompAlloc: the subtree data of each child of ``parent`` from its remaining data."""
        rule = self._rule
        size = len(data) // self.branching
        blocks = [data[c * size : (c + 1) * size] for c in range(self.branching)]
        return [
            [(p, float(rule.b[j, c]) * w) for c in rule.parts[j] for p, w in blocks[c]]
            for j in range(self.branching)
        ]

    def _allocate(self) -> None:
        """CR.Allocate: the partitions and coefficients of every node."""
        remaining = {MASTER: [(p, 1.0) for p in range(self.k)]}
        for layer in range(1, self.L + 1):
            below: dict[int, list[tuple[int, float]]] = {}
            for parent, data in remaining.items():
                for child, subtree in zip(
                    self.children(parent), self._split(parent, data), strict=True
                ):
                    own, below[child] = subtree[: self._local], subtree[self._local :]
                    self._parts[child] = tuple(p for p, _ in own)
                    self._coefficients[child] = np.array([w for _, w in own])
            remaining = below if layer < self.L else {}
        if any(len(parts) != self._local for parts in self._parts):
            raise AssertionError(f"{self!r}: a node's load differs from r_CR k")

    # -- parameters -------------------------------------------------------------------------
    @classmethod
    def parameter_grid(cls, max_n: int) -> Iterator[dict[str, Any]]:
        """Every ``(n, L, s)`` whose tree has ``N <= max_n`` workers, ``inner="auto"``.

        ``max_n`` bounds the number of workers ``N`` (the attribute ``n`` the harness checks),
        not the branching. Where ``auto`` picks ``frc`` (``(s + 1) | n``, ``s >= 1``) the same
        tree with ``inner="crc"`` follows, so that trees of both per-parent codes are covered.
        """
        depth = 1
        while tree_size(1, depth) <= max_n:
            branching = 1
            while tree_size(branching, depth) <= max_n:
                for s in range(branching):
                    yield {"n": branching, "L": depth, "s": s}
                    if s and branching % (s + 1) == 0:
                        yield {"n": branching, "L": depth, "s": s, "inner": "crc"}
                branching += 1
            depth += 1

    def params(self) -> dict[str, Any]:
        params: dict[str, Any] = {"n": self.branching, "L": self.L, "s": self.s}
        params["inner"] = self.inner
        if self.inner == "crc":
            params["seed"] = self.seed
        return params

    @property
    def inner_code(self) -> GradientCode:
        """The per-parent gradient code over ``n`` children (shared by every parent)."""
        return self._rule.inner

    # -- tree -------------------------------------------------------------------------------
    def _check_node(self, node: int, *, master: bool = False) -> int:
        if master and node == MASTER:
            return MASTER
        if isinstance(node, bool) or not isinstance(node, int | np.integer):
            raise ValueError(f"{self.name}: node must be an integer (got {node!r})")
        if not 0 <= node < self.n:
            raise ValueError(f"{self.name}: node {node} is not in 0..{self.n - 1}")
        return int(node)

    def depth(self, node: int) -> int:
        """Layer of ``node``: ``1..L`` for workers, 0 for ``MASTER``."""
        node = self._check_node(node, master=True)
        return 0 if node == MASTER else int(self._depth[node])

    def nodes_at_depth(self, depth: int) -> range:
        """The nodes of layer ``depth`` (``0``: just ``MASTER``)."""
        require(0 <= depth <= self.L, f"{self.name} has layers 0..{self.L} (got {depth})")
        if depth == 0:
            return range(MASTER, MASTER + 1)
        return range(self._offsets[depth], self._offsets[depth + 1])

    def children(self, node: int) -> range:
        """Children of ``node`` (of ``MASTER``: layer 1); empty for leaves."""
        node = self._check_node(node, master=True)
        depth = self.depth(node)
        if depth == self.L:
            return range(0)
        position = 0 if node == MASTER else node - self._offsets[depth]
        start = self._offsets[depth + 1] + position * self.branching
        return range(start, start + self.branching)

    def parent(self, node: int) -> int:
        """Parent of worker ``node`` (``MASTER`` for layer 1)."""
        node = self._check_node(node)
        depth = self.depth(node)
        if depth == 1:
            return MASTER
        position = node - self._offsets[depth]
        return self._offsets[depth - 1] + position // self.branching

    def is_leaf(self, node: int) -> bool:
        return self.depth(node) == self.L

    @property
    def height(self) -> int:
        return self.L

    def parents(self) -> tuple[int, ...]:
        """Every node with children, ``MASTER`` first (``N / n`` of them)."""
        return (MASTER, *range(self._offsets[1], self._offsets[self.L]))

    # -- assignment -------------------------------------------------------------------------
    def partitions(self, worker: int) -> tuple[int, ...]:
        return self._parts[self._check_node(worker)]

    def load(self, worker: int) -> int:
        return self._local

    def coefficients(self, worker: int) -> np.ndarray:
        """Coefficients of ``worker``'s own coded partial, ``(load,)`` in ``partitions`` order."""
        return self._coefficients[self._check_node(worker)].copy()

    def subtree_coefficients(self, node: int) -> np.ndarray:
        """Coefficients of each partition in the message ``node`` sends up, shape ``(k,)``.

        For ``MASTER``: all ones (the gradient). Recomputed along the path from the master.
        """
        node = self._check_node(node, master=True)
        path = []
        while node != MASTER:
            path.append(node)
            node = self.parent(node)
        subtree = data = [(p, 1.0) for p in range(self.k)]
        parent = MASTER
        for child in reversed(path):
            subtree = self._split(parent, data)[child - self.children(parent).start]
            data, parent = subtree[self._local :], child
        result = np.zeros(self.k)
        for p, w in subtree:
            result[p] = w
        return result

    def min_responders(self) -> int:
        """Nodes needed when ``n - s`` children of every parent are usable: ``sum (n - s)^l``."""
        return tree_size(self.branching - self.s, self.L)

    # -- messages ---------------------------------------------------------------------------
    def encode(self, worker: int, partials: np.ndarray) -> np.ndarray:
        """``worker``'s own coded partial gradient, ``(l,)``; ``partials``: ``(load, l)``."""
        worker = self._check_node(worker)
        partials = np.asarray(partials, dtype=np.float64)
        if partials.ndim != 2 or partials.shape[0] != self._local:
            raise ValueError(
                f"{self.name}: node {worker} needs partials of shape ({self._local}, l) "
                f"(got {partials.shape})"
            )
        return self._coefficients[worker] @ partials

    def children_decodable(self, node: int, children: Iterable[int]) -> bool:
        """The per-parent code's rule on the children of ``node`` that sent."""
        kids = self.children(node)
        mask = np.zeros(self.branching, dtype=bool)
        mask[[int(child) - kids.start for child in children]] = True
        return bool(self._rule.ok(mask[None, :])[0])

    def children_rule(self, node: int) -> CompletionRule | None:
        """The per-parent code's ``completion_rule``, its workers as ``node``'s children."""
        inner = self.inner_code
        rule = inner.completion_rule()
        if rule is None:
            return None
        first = self.children(node).start
        groups = [[first + inner.worker_of(key) for key in group] for group in rule.groups]
        return CompletionRule(tuple(map(tuple, groups)), rule.needed)

    def children_completion_times(self, node: int, arrivals: np.ndarray) -> np.ndarray:
        """The per-parent code's own ``completion_times`` (every parent uses the same code)."""
        return self.inner_code.completion_times(arrivals)

    def reduce_children(
        self, node: int, children_messages: Mapping[int, np.ndarray], length: int
    ) -> DecodeResult:
        """Per-parent decoding: ``sum_u a_u m_u`` over the messages of ``node``'s children.

        ``node`` may be ``MASTER``. Raises ``NotDecodableError`` when the children that sent do
        not suffice (``candidates``: the children missing).
        """
        node = self._check_node(node, master=True)
        kids = self.children(node)
        stray = [key for key in children_messages if key not in kids]
        require(not stray, f"{self.name}: nodes {stray} are not children of node {node}")
        local = tuple(sorted(int(key) - kids.start for key in children_messages))
        if not self._rule.ok(np.isin(np.arange(self.branching), local)[None, :])[0]:
            costs = np.ones((1, self.branching), dtype=np.int64)
            costs[0, list(local)] = 0
            missing = [kids[j] for j in range(self.branching) if costs[0, j]]
            needed = int(self._rule.fix_cost(costs)[0])
            raise NotDecodableError(
                f"{self.name}: node {node} cannot decode its children from {sorted(local)} "
                f"(local indices; {self.inner} with n={self.branching}, s={self.s})",
                needed=needed,
                candidates=missing,
            )
        used, weights, condition = self._rule.coefficients(local)
        senders = tuple(kids[int(j)] for j in used)
        vectors = message_vectors(
            self.name, children_messages, senders, self.message_length(length)
        )
        gradient = linear_combination(np.empty(len(vectors[0])), weights, vectors)
        return DecodeResult(gradient, senders, condition)

    def encode_node(
        self,
        node: int,
        partials: np.ndarray,
        children_messages: Mapping[int, np.ndarray] | None = None,
    ) -> np.ndarray:
        """The message ``node`` sends to its parent: ``encode`` plus its decoded children.

        ``children_messages`` (the messages ``encode_node`` produced at the children that
        responded) must be decodable for an inner node and empty for a leaf.
        """
        own = self.encode(node, partials)
        if self.is_leaf(node):
            require(not children_messages, f"{self.name}: leaf {node} has no children")
            return own
        return own + self.reduce_children(node, children_messages or {}, own.shape[0]).gradient

    # -- decoding ---------------------------------------------------------------------------
    def _responded(self, keys: Iterable[int]) -> np.ndarray:
        index = np.fromiter(keys, dtype=np.int64)
        if index.size and (index.min() < 0 or index.max() >= self.n):
            bad = sorted({int(i) for i in index if not 0 <= i < self.n})
            raise ValueError(f"{self.name}: unknown nodes {bad} (workers are 0..{self.n - 1})")
        responded = np.zeros(self.n, dtype=bool)
        responded[index] = True
        return responded

    def _layer(self, values: np.ndarray, depth: int) -> np.ndarray:
        return values[self._offsets[depth] : self._offsets[depth + 1]]

    def _usable(self, responded: np.ndarray) -> list[np.ndarray]:
        """Per layer (index ``l - 1``): which nodes' full messages can be formed."""
        usable = [self._layer(responded, self.L)]
        for depth in range(self.L - 1, 0, -1):
            fed = self._rule.ok(usable[0].reshape(-1, self.branching))
            usable.insert(0, self._layer(responded, depth) & fed)
        return usable

    def is_decodable(self, keys: Iterable[int]) -> bool:
        """The master can decode when its usable children suffice (see module docstring)."""
        usable = self._usable(self._responded(keys))
        return bool(self._rule.ok(usable[0][None, :])[0])

    def completion_times(self, arrivals: np.ndarray) -> np.ndarray:
        """The tree rule over time: ``is_decodable`` on the nodes arrived so far, per trial.

        A node's message is usable from ``max(arrival, when its usable children become
        decodable)`` (leaves: from their arrival); the master decodes when its usable children
        do. "Decodable" is the per-parent code's own ``completion_times`` on the children's
        usable times, applied to all parents of a layer at once. Forwarding is instantaneous
        here; ``gradcode.timing`` adds the transfers of paper 001's model.
        """
        arrivals = self._arrivals(arrivals)
        trials, n = arrivals.shape[0], self.branching
        layer = self.nodes_at_depth(self.L)
        usable = arrivals[:, layer.start : layer.stop]
        for depth in range(self.L - 1, -1, -1):
            decoded = self.inner_code.completion_times(usable.reshape(-1, n))
            if depth == 0:
                return decoded
            layer = self.nodes_at_depth(depth)
            usable = np.maximum(arrivals[:, layer.start : layer.stop], decoded.reshape(trials, -1))
        raise AssertionError("unreachable: the loop returns at depth 0")

    def _not_decodable(self, responded: np.ndarray) -> NotDecodableError:
        """The exact cheapest completion: fewest extra nodes, and one set achieving it."""
        missing = (~responded).astype(np.int64)
        costs = [self._layer(missing, self.L)]
        for depth in range(self.L - 1, 0, -1):
            below = self._rule.fix_cost(costs[0].reshape(-1, self.branching))
            costs.insert(0, self._layer(missing, depth) + below)
        needed = int(self._rule.fix_cost(costs[0][None, :])[0])
        chosen: list[int] = []
        frontier = [(1, 0)]  # (layer of the children, position of their first child)
        while frontier:
            depth, first = frontier.pop()
            row = costs[depth - 1][first : first + self.branching]
            for j in self._rule.cheapest(row):
                if row[j] == 0:
                    continue
                node = self._offsets[depth] + first + j
                if not responded[node]:
                    chosen.append(node)
                if depth < self.L:
                    frontier.append((depth + 1, (first + j) * self.branching))
        return NotDecodableError(
            f"{self.name}: the master cannot decode; at least {needed} more node(s) needed "
            f"(each parent needs its usable children to be decodable by {self.inner} with "
            f"n={self.branching}, s={self.s})",
            needed=needed,
            candidates=sorted(chosen),
        )

    def _weights(self, keys: Iterable[int]) -> tuple[tuple[int, ...], np.ndarray, float]:
        """Nodes used and their overall coefficients for responder set ``keys`` (cached)."""
        cache_key = frozenset(keys)
        hit = self._cache.get(cache_key)
        if hit is not None:
            return hit
        responded = self._responded(cache_key)
        usable = self._usable(responded)
        if not self._rule.ok(usable[0][None, :])[0]:
            raise self._not_decodable(responded)
        weights = np.zeros(self.n)
        condition = 0.0
        parents = [(MASTER, 1.0)]
        while parents:
            node, scale = parents.pop()
            kids = self.children(node)
            depth = self.depth(node) + 1
            first = kids.start - self._offsets[depth]
            row = usable[depth - 1][first : first + self.branching]
            local = tuple(int(j) for j in np.flatnonzero(row))
            used, a, cond = self._rule.coefficients(local)
            condition = max(condition, cond) if not math.isnan(cond) else condition
            for j, coefficient in zip(used, a, strict=True):
                child = kids[int(j)]
                weights[child] = scale * coefficient
                if depth < self.L:
                    parents.append((child, weights[child]))
        used_nodes = tuple(int(v) for v in np.flatnonzero(weights))
        entry = (used_nodes, weights[list(used_nodes)], condition or float("nan"))
        return self._cache.put(cache_key, entry)

    def node_weights(self, keys: Iterable[int]) -> dict[int, float]:
        """Overall coefficient of each node's own partial in the gradient, for responders
        ``keys``: the product of the per-parent decoding coefficients along its path."""
        used, weights, _ = self._weights(keys)
        return dict(zip(used, weights.tolist(), strict=True))

    def decode_result(self, messages: Mapping[int, np.ndarray], length: int) -> DecodeResult:
        """The gradient from the nodes' own coded partials (``encode``), reduced centrally;
        the condition number is the worst of the per-parent systems."""
        used, weights, condition = self._weights(messages)
        vectors = message_vectors(self.name, messages, used, self.message_length(length))
        gradient = linear_combination(np.empty(len(vectors[0])), weights, vectors)
        return DecodeResult(gradient, used, condition)

    def predicted_times(self, model: str, params: Mapping[str, float]) -> dict[str, float]:
        """Theorem 2's bounds (``o``-terms dropped) under ``single-port`` with ``s >= 1``."""
        if model != "single-port" or self.s < 1:
            return {}
        bounds = theorem2_bounds(
            self.branching,
            self.L,
            self.s,
            d=params["data"],
            mu=params["mu"],
            a=params["a"],
            tc=params["tc"],
        )
        return {
            "theorem2_lower": bounds.lower,
            "theorem2_upper": bounds.upper,
            "theorem2_computation": bounds.computation,
        }

    # -- verification hooks -----------------------------------------------------------------
    def count_patterns(self) -> int:
        return math.comb(self.branching, self.s) ** len(self.parents())

    def patterns(
        self, *, exhaustive: bool = True, rng: np.random.Generator | None = None, limit: int = 200
    ) -> Iterator[Pattern]:
        """``s`` straggling children for every parent (master included), independently."""
        rng = rng if rng is not None else np.random.default_rng(0)
        starts = [self.children(parent).start for parent in self.parents()]
        choices: Iterable[Sequence[Sequence[int]]]
        if exhaustive:
            per_parent = list(itertools.combinations(range(self.branching), self.s))
            choices = itertools.product(per_parent, repeat=len(starts))
        else:
            choices = (
                [rng.choice(self.branching, size=self.s, replace=False) for _ in starts]
                for _ in range(limit)
            )
        everyone = frozenset(range(self.n))
        for choice in choices:
            stragglers = {
                start + int(j) for start, local in zip(starts, choice, strict=True) for j in local
            }
            yield Pattern(everyone - stragglers)
