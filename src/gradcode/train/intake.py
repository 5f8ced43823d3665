"""What a rank takes in of a result message, checked once where it is read, before any use.

A worker (or a tree child) is not trusted to send what the protocol says (``protocol``): a
Byzantine one sends whatever bytes it likes. Every result a ``ResultPort`` receives for the
current iteration (or a later one) passes ``Intake.check`` before it is queued, so no decoder,
forged attack or aggregator ever sees a message that fails it; a refused message is a
``Refusal`` naming its sender and the reason, and its buffer goes back to the port's pool.

Refused, in the order checked (the first that applies is the reason):

- **oversized**: longer than the receive buffer (``header + width`` floats): MPI truncated it
  (``MPI_ERR_TRUNCATE`` in its status); its bytes are never read;
- **not float64**: a byte count that is not a whole number of float64 (receives are posted
  as bytes, so MPI never unpacks a foreign length; a message of another dtype with the same
  byte count is indistinguishable from float64 values, and is checked as such);
- **wrong length**: shorter than a header, header only where no notice is expected (only
  ``runtime.collection`` pull sends header-only notices), or a payload of another length than
  the code's ``message_length`` (every message of a code has that one length);
- **header**: a non-finite header field, a tag that is not the result tag of the header's
  iteration, a non-integer iteration, an iteration ahead of the receiver (``ahead``), a
  ``worker`` field naming another worker than the channel's, a ``key`` not among the
  sender's message keys;
- **non-finite payload**: NaN, ``+inf`` or ``-inf`` anywhere in the message (counted by kind).

Messages of past iterations (stale by tag and header) are not inspected: they are never used.
Nothing a worker sends is unpickled anywhere (pickles travel only from the master to spares,
``gradcode.train.faults.spares``), so no message can run code on the master.

The finiteness test is one dot product ``x . x``, a sum of squares: finite only if every value
is (NaN propagates, an infinity squares to ``+inf``, and no two terms of a sum of squares
cancel); only when it is not finite (large finite values, beyond about ``1e154``, overflow it
too) are the values tested one by one. It reads the message once without a temporary array
(measured against ``np.isfinite(x).all()`` and a plain sum: ``docs/measurements/intake.md``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np

from gradcode.train.protocol import FIELD, RESULT_BASE, TAG_WRAP, H

#: ``Refusal.kind`` of a message with NaN or infinity in its payload
NON_FINITE = "non-finite"
#: ``Refusal.kind`` of a message that is not a result of the protocol's layout
MALFORMED = "malformed"


@dataclass(frozen=True)
class Sender:
    """Who may send on a channel: the worker (tree: node) it serves and the indices of the
    message keys that worker sends (``code.all_message_keys()``; a tree node's is itself)."""

    worker: int
    keys: frozenset[int]


@dataclass(frozen=True)
class Refusal:
    """A message refused by ``Intake.check``: its channel (``source``), the worker that channel
    serves (``None``: not known to the receiver), the iteration it counts against (its
    header's when the header is sound, else the receiver's current one), the key index it
    claimed when the header is sound, ``kind`` (``NON_FINITE`` or ``MALFORMED``) and the
    reason in one line."""

    source: int
    worker: int | None
    iteration: int
    kind: str
    reason: str
    key: int | None = None

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


class Intake:
    """The checks of one receiving rank (module docstring).

    ``width``: the code's message length; ``sender(source)``: who may send on channel
    ``source`` (``None``: no worker is served on it now, and a result on it is refused);
    ``notices``: header-only results are pull's notices; ``ahead``: how many iterations past
    the receiver's current one a result may claim (``None``: any; a tree parent's children
    may answer an iteration it has not begun)."""

    def __init__(
        self,
        width: int,
        sender: Callable[[int], Sender | None],
        *,
        notices: bool = False,
        ahead: int | None = None,
    ) -> None:
        self.width, self.sender, self.notices, self.ahead = width, sender, notices, ahead

    def check(
        self,
        source: int,
        tag: int,
        nbytes: int,
        buffer: np.ndarray,
        current: int,
        *,
        truncated: bool = False,
    ) -> Refusal | None:
        """``None`` if the message received on channel ``source`` with ``tag`` (its first
        ``nbytes`` bytes in ``buffer``, float64) may be used in iteration ``current`` or
        later; else why not. ``truncated``: MPI reported it longer than ``buffer``."""
        sender = self.sender(source)
        worker = sender.worker if sender is not None else None

        def refuse(reason: str, kind: str = MALFORMED, iteration: int = current, key=None):
            return Refusal(source, worker, iteration, kind, reason, key)

        limit = (H + self.width) * 8
        if truncated:
            return refuse(f"oversized: longer than {limit} bytes (MPI truncated it)")
        if nbytes % 8:
            return refuse(f"not float64: {nbytes} bytes, not a multiple of 8")
        count = nbytes // 8
        if count < H:
            return refuse(f"wrong length: {count} floats, shorter than the {H}-float header")
        if count == H and not self.notices:
            return refuse("wrong length: a header without a message (no notice expected)")
        if count != H and count != H + self.width:
            return refuse(
                f"wrong length: a message of {count - H} floats, the code's are {self.width}"
            )
        header = buffer[:H]
        if not np.isfinite(header).all():
            bad = [name for name, v in zip(FIELD, header, strict=True) if not np.isfinite(v)]
            return refuse(f"header: non-finite field(s) {', '.join(bad)}")
        raw = header[FIELD["iteration"]]
        if raw != int(raw) or raw < 0:
            return refuse(f"header: iteration {raw!r} is not an iteration")
        iteration = int(raw)
        if tag != RESULT_BASE + iteration % TAG_WRAP:
            return refuse(f"header: iteration {iteration} sent with tag {tag}, not its own")
        if iteration < current:
            return None  # stale: never used, not inspected
        if self.ahead is not None and iteration > current + self.ahead:
            return refuse(f"header: iteration {iteration}, ahead of the current {current}")
        if sender is None:  # a spare not serving yet, a dropped liar a spare replaced
            return refuse("sent on a channel that serves no worker now", iteration=iteration)
        raw_key = header[FIELD["key"]]
        claimed = header[FIELD["worker"]]
        if claimed != sender.worker:
            return refuse(
                f"header: names worker {claimed:g}, sent by worker {sender.worker}",
                iteration=iteration,
            )
        if raw_key != int(raw_key) or int(raw_key) not in sender.keys:
            return refuse(
                f"header: key {raw_key:g} is not one of worker {sender.worker}'s",
                iteration=iteration,
            )
        key = int(raw_key)
        if count > H:
            reason = non_finite(buffer[H:count])
            if reason is not None:
                return refuse(reason, NON_FINITE, iteration, key)
        return None


def non_finite(values: np.ndarray) -> str | None:
    """``None`` if every value is finite; else how many are NaN, ``+inf`` and ``-inf``."""
    with np.errstate(over="ignore", invalid="ignore"):
        if np.isfinite(values.dot(values)):
            return None
    if np.isfinite(values).all():  # the sum of squares overflowed: large finite values
        return None
    nan = int(np.isnan(values).sum())
    plus = int(np.isposinf(values).sum())
    minus = int(np.isneginf(values).sum())
    return f"non-finite payload: {nan} NaN, {plus} +inf, {minus} -inf of {values.size} values"


def report_refusal(
    nbytes: int,
    buffer: np.ndarray,
    *,
    truncated: bool,
    iteration: int,
    worker: int,
    fields: dict[str, int],
) -> str | None:
    """Why a ring worker's report (``gradcode.train.ring``: ``fields`` by index, then worker
    0's reduced sum; ``buffer`` the length expected) cannot be taken in ``iteration``, or
    ``None``: the same checks as a result's, on the report's layout."""
    limit = buffer.nbytes
    if truncated:
        return f"oversized: longer than {limit} bytes (MPI truncated it)"
    if nbytes != limit:
        return f"wrong length: {nbytes} bytes, the report's are {limit}"
    header = buffer[: len(fields)]
    if not np.isfinite(header).all():
        return "header: non-finite field(s)"
    if header[fields["iteration"]] != iteration or header[fields["worker"]] != worker:
        return (
            f"header: names worker {header[fields['worker']]:g}, iteration "
            f"{header[fields['iteration']]:g}"
        )
    return non_finite(buffer[len(fields) :]) if buffer.size > len(fields) else None
