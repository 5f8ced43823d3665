"""What the master does with the messages its ``Intake`` refused (``gradcode.train.intake``).

A refused message is never used; what takes its place follows the code's own rules:

- a code that **corrects adversaries** (``capabilities.corrects_adversaries``, ``a > 0``) and
  decodes: the message is erased and its sender is a named liar, counted within ``a`` with
  those the decoder names. The decoder is handed a zero vector in the erased message's place,
  a wrong message like any liar's, which its correction removes (every such code here needs
  every message, ``s = 0`` or not: a vote, a syndrome); more than ``a`` liars in all stop the
  run (``DecodingFailed``, exit 4), as a decoder naming more than ``a`` does;
- a run with a **robust aggregator**: the value is kept out; the aggregator gets the rest,
  and the refused key counts as answered for the code's waiting rule (it will not come);
- **any other code** (no adversary correction, a tree): the message is an erasure, as a
  straggler's that never comes; once the code cannot decode without the messages refused (and
  the workers lost), the run stops cleanly (``DecodingFailed``, exit 4, one line).

The sender is named in the iteration's log record (``refused``: worker, key, kind, reason and
``as``, "liar" when the run has adversaries, else "failed") and in ``summary.json``
(``refused``), and on stderr the first time each worker is refused.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

from gradcode.train.intake import Refusal


class Refused:
    """The master's refusals (module docstring): per iteration the keys erased and the
    workers named, and every refusal of the run.

    ``keys_of(refusal)``: the message keys a refusal erases (none when no worker is served on
    its channel); ``liars``: the run has adversaries (a refused sender is named a liar, else a
    failed worker)."""

    def __init__(self, keys_of: Callable[[Refusal], list[Any]], *, liars: bool) -> None:
        self.keys_of, self.liars = keys_of, liars
        self.iteration = -1
        #: this iteration's erased keys, with the refusal that erased each
        self.erased: dict[Any, Refusal] = {}
        self._records: list[dict[str, Any]] = []
        self.history: list[dict[str, Any]] = []
        self._told: set[int | None] = set()

    def start(self, iteration: int) -> None:
        self.iteration = iteration
        self.erased, self._records = {}, []

    def take(self, refusals: list[Refusal], ignored: Callable[[Refusal], bool]) -> bool:
        """Record ``refusals`` (those ``ignored`` are of dropped liars: not counted again);
        whether any of them erased a key of this iteration."""
        fresh = False
        for refusal in refusals:
            if ignored(refusal):
                continue
            record = refusal.as_dict() | {"as": "liar" if self.liars else "failed"}
            self.history.append(record)
            if refusal.iteration != self.iteration:
                continue  # a later iteration's (a tree's early results): named, not erased
            self._records.append(record)
            for key in self.keys_of(refusal):
                if key not in self.erased:
                    self.erased[key] = refusal
                    fresh = True
            if refusal.worker not in self._told:
                self._told.add(refusal.worker)
                who = "a liar" if self.liars else "a failed worker"
                print(
                    f"gradcode.train: iteration {refusal.iteration}: worker {refusal.worker} "
                    f"(channel rank {refusal.source}) refused as {who}: {refusal.reason}",
                    file=sys.stderr,
                    flush=True,
                )
        return fresh

    def workers(self) -> list[int]:
        """The workers whose messages of this iteration were refused."""
        return sorted({r.worker for r in self.erased.values() if r.worker is not None})

    def placeholders(self, width: int) -> dict[Any, np.ndarray]:
        """Zero messages in the erased messages' places (a correcting decoder's input)."""
        return {key: np.zeros(width) for key in self.erased}

    def fields(self) -> dict[str, Any]:
        """The iteration record's ``refused`` (nothing when none was)."""
        return {"refused": list(self._records)} if self._records else {}

    def reason(self) -> str:
        """The erasures of this iteration in one phrase."""
        parts = [
            f"worker {r.worker}'s message refused ({r.reason})"
            for r in {id(r): r for r in self.erased.values()}.values()
        ]
        return "; ".join(parts)
