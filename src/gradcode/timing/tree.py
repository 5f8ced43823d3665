"""CodedReduce over its tree under paper 001's communication model (Section III-C).

Every node ``v`` computes its own coded partial in ``T_v``. A parent receives its children's
messages through a single port, one at a time, first ready first served, ``tc`` each
(``queue.fifo_departures``); it can decode its children as soon as the received ones satisfy
the per-parent code (``code.inner_code.completion_times`` on the reception times, i.e. the
code's own decodability rule), and its message is ready when it has both decoded and computed:
``U_v = max(T_v, decoded_v)``. Leaves are ready at ``T_v``. The master decodes the same way
from layer 1; that is the completion time. Layers are handled bottom up, every parent of a
layer at once, so the cost is a few numpy passes per layer.

With ``tc = 0`` this is exactly ``CodedReduce.completion_times`` (the tree's decodability rule
over time), which the tests check; Theorem 2 of the paper bounds its mean for large ``n``.

Communication load: every parent (the master included) counts the messages it received before
it decoded, and before the master finished (later transfers would be cancelled).
"""

from __future__ import annotations

import numpy as np

from gradcode.codes.coded_reduce import CodedReduce
from gradcode.timing.model import Outcome
from gradcode.timing.queue import fifo_departures


def tree_outcome(code: CodedReduce, compute: np.ndarray, tc: float) -> Outcome:
    """Completion time and parent receptions; ``compute`` is ``(trials, N)``, node order."""
    trials, n = compute.shape[0], code.branching
    inner = code.inner_code

    def layer(depth: int) -> np.ndarray:
        nodes = code.nodes_at_depth(depth)
        return compute[:, nodes.start : nodes.stop]

    usable = layer(code.L)
    received: list[tuple[np.ndarray, np.ndarray]] = []
    for depth in range(code.L - 1, -1, -1):
        departures = fifo_departures(usable.reshape(-1, n), tc)
        decoded = inner.completion_times(departures)
        received.append((departures.reshape(trials, -1, n), decoded.reshape(trials, -1)))
        if depth:
            usable = np.maximum(layer(depth), decoded.reshape(trials, -1))
    times = received[-1][1][:, 0]
    messages = np.zeros(trials, dtype=np.int64)
    for departures, decoded in received:
        cutoff = np.minimum(decoded, times[:, None])[:, :, None]
        messages += np.count_nonzero(departures <= cutoff, axis=(1, 2))
    return Outcome(times, messages)
