"""One parent's work in a tree code (CodedReduce's): wait for its children by the code's
per-parent rule, then reduce their results with its own. A tree node
(``gradcode.train.worker``) and the root, the master (``gradcode.train.reducers.tree``), ask
the same object; it imports nothing of the runtime, so a worker can."""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcode.codes.tree import TreeCode


class TreeReduction:
    """Parent ``node``'s work in ``tree`` (``MASTER``: the root's)."""

    def __init__(self, tree: TreeCode, node: int) -> None:
        self.tree, self.node = tree, node

    def ready(self, children: list[Any]) -> bool:
        """Whether the results of ``children`` are enough to reduce."""
        return self.tree.children_decodable(self.node, children)

    def encode(self, partials: np.ndarray, messages: dict[Any, np.ndarray] | None) -> np.ndarray:
        """This node's message from its own ``partials`` and its children's ``messages``
        (``None``: a leaf)."""
        return self.tree.encode_node(self.node, partials, messages)
