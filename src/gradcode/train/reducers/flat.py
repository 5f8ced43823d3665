"""What every flat code's reduction shares: results keyed by the code's message keys, sent by
the worker a channel serves now (a spare serves a dead worker's), held as consecutive rows
where the code decodes faster from them (``gradcode.train.rows``), and the omniscient
attack's forgery before the reduction (``gradcode.train.reducers.forgery``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcode.codes import GradientCode, NotDecodableError
from gradcode.train.faults.caught import DecodingFailed
from gradcode.train.faults.roster import Roster
from gradcode.train.intake import Refusal, Sender
from gradcode.train.protocol import clock
from gradcode.train.reducers.base import Reducer
from gradcode.train.reducers.forgery import Forgery
from gradcode.train.rows import MessageRows
from gradcode.train.transport import Result


@dataclass(frozen=True)
class FlatParts:
    """What every flat reducer is built from, whichever reduces: the code, the roster of its
    workers, the omniscient attack's forgery, the gradient's length (``features``) and whether
    the run has liars."""

    code: GradientCode
    roster: Roster
    forgery: Forgery
    features: int
    liars: bool


class FlatReducer(Reducer):
    """A flat code's results (module docstring); subclasses reduce them."""

    def __init__(self, parts: FlatParts) -> None:
        code = parts.code
        super().__init__(code, parts.roster, liars=parts.liars)
        self.features = parts.features
        self.width = width = code.message_length(parts.features)
        self.keys = code.all_message_keys()
        self.forgery = parts.forgery
        self.rows = MessageRows(len(self.keys), width) if code.decodes_faster_from_rows else None

    def key(self, result: Result) -> Any:
        return self.keys[result.key]

    def sender(self, source: int) -> Sender | None:
        for worker, (rank, _) in enumerate(self.roster.child_ranks):
            if rank == source:
                keys = self.code.message_keys(worker)
                return Sender(worker, frozenset(self.keys.index(k) for k in keys))
        return None

    def refused_keys(self, refusal: Refusal) -> list[Any]:
        if refusal.worker is None:
            return []
        if refusal.key is not None:
            return [self.keys[refusal.key]]
        return list(self.code.message_keys(refusal.worker))

    def hold(self, result: Result) -> Result:
        return result if self.rows is None else self.rows.hold(result)

    def start(self, t: int) -> None:
        super().start(t)
        if self.rows is not None:
            self.rows.start()

    def _ready(self, keys: list[Any], held: dict[Any, Result]) -> bool:
        return self.code.is_decodable(keys) or self.complete(held)

    def live_keys(self, lost: set[int]) -> list[Any]:
        """The message keys of every worker not ``lost``."""
        return [
            key for w in range(self.code.n) if w not in lost for key in self.code.message_keys(w)
        ]

    def _decodes_without(self, lost: set[int]) -> bool:
        left = [k for k in self.live_keys(lost) if k not in self.refused.erased]
        return bool(left) and self.code.is_decodable(left)

    def refused_everything(self, held: dict[Any, Result], refusals: list[str]) -> None:
        expected = set(self.live_keys(self.lost()))
        if expected <= set(held) | set(self.refused.erased):
            raise DecodingFailed(
                self.t,
                f"the decoder refused the messages of every live worker ({refusals[-1]})",
                refusals,
            )

    def _messages(self, held: dict[Any, Result], extras: dict[str, Any]) -> dict[Any, np.ndarray]:
        """The messages to reduce: those held, an omniscient attack's forged in the liars'
        places (its time in ``extras``' ``attack_time``)."""
        messages = {key: result.data for key, result in held.items()}
        if not self.forgery.active(self.t):
            return messages
        began = clock()
        forged = self.forgery.forge(messages, self.t)
        refusals = self.forgery.refusals(forged, messages, self.t)
        # refused like a received message: a code that must now wait for more results
        # refuses to reduce, and the wait goes on
        if refusals and self.refused.take(refusals, lambda refusal: False):
            self.erase(held)
            if self.erasure is None and not self.decodable(held):
                raise NotDecodableError(self.refused.reason(), needed=None)
            forged = {key: value for key, value in forged.items() if key not in self.refused.erased}
        extras["attack_time"] = clock() - began
        return forged
