"""A tree: every parent (the master at the root) reduces its children's results on the way up
(``gradcode.codes.TreeCode``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any, ClassVar

from gradcode.codes.base import GradientCode
from gradcode.codes.completion import CompletionRule
from gradcode.codes.tree import MASTER, TreeCode
from gradcode.topology.base import T, Topology, TopologyVisitor, needed


class Tree(Topology):
    name: ClassVar[str] = "tree"
    nodes: ClassVar[str] = "tree nodes"

    def check(self, code: GradientCode) -> None:
        super().check(code)
        if not isinstance(code, TreeCode):
            raise ValueError(f"{code.name} declares topology 'tree' but is not a TreeCode")

    def tree(self, code: GradientCode) -> TreeCode:
        self.check(code)
        assert isinstance(code, TreeCode)
        return code

    def accept(self, visitor: TopologyVisitor[T], code: GradientCode) -> T:
        return visitor.tree(self.tree(code))

    def handoffs(self, code: GradientCode) -> int:
        """The model down ``height`` levels, a leaf's computation, the results up again."""
        return 2 * self.tree(code).height + 1

    def combines(self, code: GradientCode, worker: int) -> bool:
        return not self.tree(code).is_leaf(worker)

    def pull_refusal(self, code: GradientCode, *, tolerant: bool) -> str | None:
        if tolerant:
            return "faults.tolerate: a tree parent would wait for a pulled child that died"
        return None

    def pull_gain(self, code: GradientCode) -> tuple[bool, str]:
        spared = spared_children(self.tree(code))
        if not spared:
            return False, "every parent of the tree uses all its children"
        return True, f"{spared} children's results go unused at some parent"

    def collector_rule(
        self, code: GradientCode, node: int
    ) -> tuple[CompletionRule | None, Callable[[Sequence[Any]], bool]]:
        tree = self.tree(code)
        return tree.children_rule(node), partial(tree.children_decodable, node)

    def collector_keys(self, code: GradientCode, node: int) -> tuple[Any, ...]:
        return tuple(self.tree(code).children(node))

    def incoming(self, code: GradientCode, rank: int) -> int:
        return len(self.tree(code).children(MASTER if rank == 0 else rank - 1))

    def scatter_refusal(self, *, tolerant: bool) -> str | None:
        if tolerant:
            return "faults.tolerate: a tree's dead node would hold others' chunks"
        return None

    def copies_seconds(
        self, code: GradientCode, size: float, master_rate: float, worker_rate: float
    ) -> float:
        """Every parent forwards a copy to each child once it holds one."""
        tree = self.tree(code)
        held = [0.0] * tree.n
        for depth in range(tree.height):  # parents before their children
            for parent in tree.nodes_at_depth(depth):
                kids = list(tree.children(parent))
                if kids:
                    at, rate = (
                        (0.0, master_rate) if parent == MASTER else (held[parent], worker_rate)
                    )
                    for kid in kids:
                        held[kid] = at + len(kids) * size / rate
        return max(held)


def spared_children(tree: TreeCode) -> int:
    """How many children's results the parents of ``tree`` can do without, added up: for
    every parent its children less those its declared rule needs (``children_rule``), or
    without one less the fewest of them, first in order, it decodes from."""
    spared = 0
    for parent in tree.parents():
        kids = list(tree.children(parent))
        decodable = partial(tree.children_decodable, parent)
        spared += len(kids) - needed(kids, tree.children_rule(parent), decodable)
    return spared
