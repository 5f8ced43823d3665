"""A tree code's reduction (CodedReduce's): every parent, the master included, waits for its
children by the code's per-parent rule (``children_decodable``) and reduces their results on
the way up (``encode_node``; the master, the root: ``decode_root``). ``TreeReduction``
(``gradcode.train.reducers.parent``) is one parent's work, which a tree node
(``gradcode.train.worker``) and the master both ask; ``TreeReducer`` is the master's reducer
around it: results keyed by the child that sent them,
a refused one an erasure, and the run's ``relay_transfers`` and ``nodes.jsonl`` from the
nodes' ``DONE`` reports (``gradcode.runlogs.nodelog``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from gradcode.codes.tree import MASTER, TreeCode
from gradcode.runlogs import nodelog
from gradcode.train.faults.roster import Roster
from gradcode.train.intake import Refusal, Sender
from gradcode.train.reducers.base import Reducer
from gradcode.train.reducers.parent import TreeReduction
from gradcode.train.transport import RELAY_FIELDS, Result


class TreeReducer(Reducer):
    """The root's reduction over its ``children`` (module docstring)."""

    def __init__(
        self,
        tree: TreeCode,
        roster: Roster,
        children: list[int],
        features: int,
        *,
        one_clock: bool,
        liars: bool,
    ) -> None:
        super().__init__(tree, roster, liars=liars)
        self.tree, self.children, self.features = tree, children, features
        self.one_clock = one_clock
        self.reduction = TreeReduction(tree, MASTER)

    def key(self, result: Result) -> Any:
        return self.children[result.source - 1]

    def sender(self, source: int) -> Sender | None:
        node = self.children[source - 1]
        return Sender(node, frozenset([node]))

    def refused_keys(self, refusal: Refusal) -> list[Any]:
        return [] if refusal.worker is None else [refusal.worker]

    def _ready(self, keys: list[Any], held: dict[Any, Result]) -> bool:
        return self.reduction.ready(keys)

    def _decodes_without(self, lost: set[int]) -> bool:
        left = [c for c in self.children if c not in lost and c not in self.refused.erased]
        return bool(left) and self.reduction.ready(left)

    def reduce(self, held: dict[Any, Result]) -> tuple[np.ndarray, dict[str, Any]]:
        messages = {key: result.data for key, result in held.items()}
        return self.tree.decode_root(messages, self.features).gradient, {}

    def summary(self, reports: dict[int, np.ndarray], out: Path, start: int) -> dict[str, Any]:
        """``relay_transfers``: what every parent measured of its children's messages
        (``DONE`` reports after ``[stale, sent]``: ``RELAY_FIELDS``); ``nodes.jsonl`` from the
        rows after them."""
        after = 2 + len(RELAY_FIELDS)
        rows = [row for report in reports.values() for row in nodelog.decode(report[after:])]
        nodelog.write_nodes(out, rows, keep_below=start)
        relays = []
        for rank, report in sorted(reports.items()):
            if report.size < after:
                continue
            fields = dict(zip(RELAY_FIELDS, report[2:after], strict=True))
            count = int(fields["messages"])
            if count == 0:
                continue
            relays.append(
                {
                    "node": rank - 1,
                    "messages": count,
                    "bytes": int(fields["bytes"]),
                    "mean": fields["transfer_sum"] / count if self.one_clock else None,
                    "max": fields["transfer_max"] if self.one_clock else None,
                    "refused": int(fields["refused"]),
                }
            )
        return {"relay_transfers": relays}

    def orphans(self) -> list[int]:
        """Nodes alive whose parent died (the ``STOP`` cannot reach them through it)."""
        dead = self.roster.failures
        if dead is None:
            return []
        tree = self.tree
        return [
            node + 1
            for node in range(tree.n)
            if not dead.dead(node + 1)
            and tree.parent(node) != MASTER
            and dead.dead(tree.parent(node) + 1)
        ]
