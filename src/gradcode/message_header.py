"""The header of every result message, field by field (all float64), before its payload.

The rank program sends it (``gradcode.train.protocol``, the wire format) and every logged
message's ``bytes`` include it, so what reads finished runs back (``gradcode.runlogs``, the fit,
the figures) needs its length without importing the rank program: its home is here, below both.
"""

from __future__ import annotations

#: fields of a result message's header, in order (all float64)
HEADER = (
    "iteration",  # t of the model the message was computed from
    "key",  # index of the message key in code.all_message_keys() (tree: the sender's node)
    "worker",  # the sending worker (code index)
    "compute",  # measured seconds of computation (partials + encoding) behind this message
    "injected_compute",  # seconds of injected compute delay behind this message
    "injected_comm",  # seconds of injected link delay of this message
    "started",  # sender's clock when it began the iteration (received the model)
    "sent",  # sender's clock when the message left (same host: comparable with the master's)
    "corrupted",  # 1.0 when an adversary corrupted the payload (for the log only)
    "model_last",  # scatter: the chunk that completed the sender's model (-1: none, isend)
    "model_wait",  # scatter: seconds the sender held every chunk but that one
    "model_span",  # scatter: seconds from its first chunk to the one before the last
)
H = len(HEADER)
FIELD = {name: index for index, name in enumerate(HEADER)}
