"""A single-port receiver: messages are taken in one at a time, in order of readiness.

Paper 001's communication model (Section III-C): a node receives from one other node at a
time, and a transfer occupies its port for a fixed time. Message ``q`` is ready to send at
``R_q``; the receiver serves ready messages first come, first served, each for ``c_q``. With
the messages sorted by readiness (``R_(1) <= R_(2) <= ...``) the ``j``-th one is received at

    ``D_j = max(D_(j-1), R_(j)) + c_(j) = C_j + max_(i <= j) (R_(i) - C_(i-1))``,

``C_j = c_(1) + ... + c_(j)`` (unrolling the recursion), which is a cumulative maximum: no
Python loop over messages.
"""

from __future__ import annotations

import numpy as np


def fifo_departures(ready: np.ndarray, service: float | np.ndarray) -> np.ndarray:
    """When each message has been received, shape ``ready.shape`` (``(rows, messages)``).

    ``service`` is the port time per message: a scalar, or an array broadcastable to ``ready``
    (per message). Each row is an independent receiver; ties are served in column order.
    """
    ready = np.asarray(ready, dtype=np.float64)
    order = np.argsort(ready, axis=1, kind="stable")
    ordered = np.take_along_axis(ready, order, axis=1)
    if np.ndim(service) == 0:
        # C_j = (j + 1) c in 0-based positions
        steps = float(service) * np.arange(1, ready.shape[1] + 1)
        done = np.maximum.accumulate(ordered - (steps - float(service)), axis=1) + steps
    else:
        cost = np.take_along_axis(np.broadcast_to(service, ready.shape), order, axis=1)
        total = np.cumsum(cost, axis=1)
        done = np.maximum.accumulate(ordered - (total - cost), axis=1) + total
    departures = np.empty_like(done)
    np.put_along_axis(departures, order, done, axis=1)
    return departures
