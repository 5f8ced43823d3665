"""A tree code (``topology="tree"``, e.g. CodedReduce) under paper 001's communication model
(Section III-C).

Every node ``v`` computes its own coded partial in ``T_v``. A parent receives its children's
messages through a single port, one at a time, first ready first served, ``tc`` each
(``queue.fifo_departures``); it can reduce its children as soon as the received ones satisfy
its rule (``code.children_completion_times`` on the reception times, i.e. the code's own
per-parent decodability rule), and its message is ready when it has both reduced and computed:
``U_v = max(T_v, reduced_v)``. Leaves are ready at ``T_v``. The master reduces the same way
from its children; that is the completion time. Parents are handled bottom up, each
vectorised over the trials.

With ``tc = 0`` this is exactly the code's ``completion_times`` (the tree's decodability rule
over time), which the tests check for CodedReduce; Theorem 2 of paper 001 bounds its mean for
large ``n``.

Communication load: every parent (the master included) counts the messages it received before
it reduced, and before the master finished (later transfers would be cancelled).
"""

from __future__ import annotations

import numpy as np

from gradcode.codes.tree import MASTER, TreeCode
from gradcode.timing.model import Outcome
from gradcode.timing.queue import fifo_departures


def tree_outcome(code: TreeCode, compute: np.ndarray, tc: float) -> Outcome:
    """Completion time and parent receptions; ``compute`` is ``(trials, N)``, node order."""
    ready = np.array(compute, dtype=np.float64)  # when each node's message can leave
    received: list[tuple[np.ndarray, np.ndarray]] = []
    times = np.full(ready.shape[0], np.inf)
    for depth in range(code.height - 1, -1, -1):
        for parent in code.nodes_at_depth(depth):
            kids = list(code.children(parent))
            if not kids:
                continue
            departures = fifo_departures(ready[:, kids], tc)
            reduced = code.children_completion_times(parent, departures)
            received.append((departures, reduced))
            if parent == MASTER:
                times = reduced
            else:
                ready[:, parent] = np.maximum(ready[:, parent], reduced)
    messages = np.zeros(ready.shape[0], dtype=np.int64)
    for departures, reduced in received:
        cutoff = np.minimum(reduced, times)[:, None]
        messages += np.count_nonzero(departures <= cutoff, axis=1)
    return Outcome(times, messages)
