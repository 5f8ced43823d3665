"""Two gradient codes that exist only in the test suite, one of each shape the runtime knows
beyond flat gradient codes. They reach the simulator and the MPI runtime through
``gradcode.codes.register`` and their declared capabilities alone: nothing in ``gradcode``
names them.

- ``replica-tree`` (a ``TreeCode``): a ``b``-ary tree of height ``h`` in which every node at
  depth ``d`` holds partition ``d - 1`` and siblings are replicas. A node's message is its own
  partial plus the message of *any one* child, so every parent tolerates ``b - 1`` straggling
  children and the gradient is the sum along any complete root-to-leaf chain of responders.
- ``stacked-repetition`` (codes the data): fractional repetition in which the ``s + 1``
  workers of a group each hold their group's ``s + 1`` partitions *stacked into one data set*.
  A worker's message is the model's gradient on its stacked data, which is the sum of the
  group's partial gradients for any model whose gradient is a sum over rows (both of
  ``gradcode.models``), so one message per group decodes.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from gradcode.codes import (
    MASTER,
    Capabilities,
    DecodeResult,
    GradientCode,
    NotDecodableError,
    TreeCode,
    register,
)
from gradcode.codes.base import check_int, require
from gradcode.codes.registry import unregister


class ReplicaTree(TreeCode):
    """``b``-ary tree of height ``h``; the nodes at depth ``d`` hold partition ``d - 1``."""

    name: ClassVar[str] = "replica-tree"

    def __init__(self, b: int, h: int) -> None:
        self.b = check_int("b", self.name, b, minimum=1)
        self.h = check_int("h", self.name, h, minimum=1)
        self.k, self.s, self.a, self.m = self.h, self.b - 1, 0, 1
        # breadth-first numbering: layer d (1..h) starts at first[d]
        self.first = [0, 0]
        for depth in range(1, self.h + 1):
            self.first.append(self.first[-1] + self.b**depth)
        self.n = self.first[self.h + 1]

    @classmethod
    def parameter_grid(cls, max_n: int) -> Iterator[dict[str, Any]]:
        for b in range(1, 4):
            for h in range(1, 4):
                if sum(b**d for d in range(1, h + 1)) <= max_n:
                    yield {"b": b, "h": h}

    def params(self) -> dict[str, Any]:
        return {"b": self.b, "h": self.h}

    # -- the tree ---------------------------------------------------------------------------
    def _layer(self, node: int) -> int:
        return next(d for d in range(1, self.h + 1) if node < self.first[d + 1])

    def children(self, node: int) -> Sequence[int]:
        depth = 0 if node == MASTER else self._layer(node)
        if depth == self.h:
            return range(0)
        position = 0 if node == MASTER else node - self.first[depth]
        start = self.first[depth + 1] + position * self.b
        return range(start, start + self.b)

    def parent(self, node: int) -> int:
        depth = self._layer(node)
        if depth == 1:
            return MASTER
        return self.first[depth - 1] + (node - self.first[depth]) // self.b

    def partitions(self, worker: int) -> tuple[int, ...]:
        return (self._layer(worker) - 1,)

    # -- the per-parent rule: any one child ---------------------------------------------------
    def children_decodable(self, node: int, children: Iterable[int]) -> bool:
        return any(True for _ in children)

    def reduce_children(
        self, node: int, children_messages: Mapping[int, np.ndarray], length: int
    ) -> DecodeResult:
        if not children_messages:
            raise NotDecodableError(f"{self.name}: node {node} heard none of its children")
        first = min(children_messages)
        return DecodeResult(np.asarray(children_messages[first], dtype=float), (first,), 1.0)

    def encode(self, worker: int, partials: np.ndarray) -> np.ndarray:
        return np.asarray(partials, dtype=float)[0].copy()

    def encode_node(
        self,
        node: int,
        partials: np.ndarray,
        children_messages: Mapping[int, np.ndarray] | None = None,
    ) -> np.ndarray:
        own = self.encode(node, partials)
        if not self.children(node):
            return own
        return own + self.reduce_children(node, children_messages or {}, own.shape[0]).gradient

    # -- central decoding: a complete chain of responders -------------------------------------
    def _chain(self, responded: set[int]) -> list[int] | None:
        def down(node: int) -> list[int] | None:
            kids = list(self.children(node))
            if not kids:
                return []
            for child in kids:
                if child in responded:
                    rest = down(child)
                    if rest is not None:
                        return [child, *rest]
            return None

        return down(MASTER)

    def is_decodable(self, keys: Iterable[int]) -> bool:
        return self._chain(set(keys)) is not None

    def decode_result(self, messages: Mapping[int, np.ndarray], length: int) -> DecodeResult:
        chain = self._chain(set(messages))
        if chain is None:
            raise NotDecodableError(f"{self.name}: no complete chain of responders", needed=1)
        gradient = np.sum([np.asarray(messages[node], dtype=float) for node in chain], axis=0)
        return DecodeResult(gradient[:length], tuple(chain), 1.0)


class StackedRepetition(GradientCode):
    """Fractional repetition of *data*: groups of ``s + 1`` workers hold the same stacked data."""

    name: ClassVar[str] = "stacked-repetition"
    capabilities: ClassVar[Capabilities] = Capabilities(codes_data=("linear", "logistic"))

    def __init__(self, n: int, s: int) -> None:
        self.n = check_int("n", self.name, n, minimum=1)
        self.s = check_int("s", self.name, s)
        require(self.n % (self.s + 1) == 0, f"{self.name} needs (s + 1) | n")
        self.k, self.a, self.m = self.n, 0, 1

    @classmethod
    def parameter_grid(cls, max_n: int) -> Iterator[dict[str, Any]]:
        for n in range(1, max_n + 1):
            for s in range(n):
                if n % (s + 1) == 0:
                    yield {"n": n, "s": s}

    def params(self) -> dict[str, Any]:
        return {"n": self.n, "s": self.s}

    def _group(self, worker: int) -> int:
        return worker // (self.s + 1)

    def partitions(self, worker: int) -> tuple[int, ...]:
        start = self._group(worker) * (self.s + 1)
        return tuple(range(start, start + self.s + 1))

    def encode_data(
        self, X_parts: Sequence[np.ndarray], y_parts: Sequence[np.ndarray]
    ) -> list[tuple[np.ndarray, np.ndarray]]:
        """Worker ``i``: the rows of its group's partitions, stacked."""
        require(len(X_parts) == self.k == len(y_parts), f"{self.name} needs k = {self.k} parts")
        coded = []
        for worker in range(self.n):
            mine = self.partitions(worker)
            X = np.vstack([np.asarray(X_parts[p]) for p in mine])
            y = np.concatenate([np.asarray(y_parts[p]) for p in mine])
            coded.append((X, y))
        return coded

    def encode(self, worker: int, partials: np.ndarray) -> np.ndarray:
        """The flat view of the same message: the sum of the group's partial gradients."""
        return np.asarray(partials, dtype=float).sum(axis=0)

    def is_decodable(self, keys: Iterable[int]) -> bool:
        return len({self._group(int(w)) for w in keys}) == self.n // (self.s + 1)

    def decode_result(self, messages: Mapping[int, np.ndarray], length: int) -> DecodeResult:
        chosen: dict[int, int] = {}
        for worker in sorted(messages):
            chosen.setdefault(self._group(int(worker)), int(worker))
        groups = self.n // (self.s + 1)
        if len(chosen) < groups:
            raise NotDecodableError(
                f"{self.name} needs one worker of every group", needed=groups - len(chosen)
            )
        used = tuple(chosen[g] for g in range(groups))
        gradient = np.sum([np.asarray(messages[w], dtype=float) for w in used], axis=0)
        return DecodeResult(gradient[:length], used, 1.0)


TOY_CODES: dict[str, type[GradientCode]] = {
    ReplicaTree.name: ReplicaTree,
    StackedRepetition.name: StackedRepetition,
}


def register_toy_codes() -> None:
    """Register both toy codes in this process (idempotent)."""
    for name, cls in TOY_CODES.items():
        register(name, cls)


def unregister_toy_codes() -> None:
    for name in TOY_CODES:
        unregister(name)
