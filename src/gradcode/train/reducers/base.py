"""What the master asks of its reducer, whatever the reduction (``gradcode.train.reducers``).

Every iteration the master hands the reducer what arrived (``held``: the results it keeps, by
key) and asks: is it enough (``decodable``)? then: the update (``reduce``), or why not
(``NotDecodableError``: wait for more; ``DecodingFailed``: the run cannot go on). The reducer
also owns what a refused message means for it (``refused``, ``erase``,
``gradcode.train.refusals``), which results go under which key (``key``, ``sender``), and what
it adds to the run's summary (``summary``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from gradcode.codes import GradientCode
from gradcode.runfile.plan import alive_decodable
from gradcode.train.faults.caught import DecodingFailed
from gradcode.train.faults.roster import Roster
from gradcode.train.intake import Refusal, Sender
from gradcode.train.refusals import Refused
from gradcode.train.transport import Result


class Reducer:
    """The master's reduction (module docstring). Subclasses say how keys are read and when
    held results suffice (``_ready``, ``_decodes_without``), and how they reduce."""

    #: a refused message's place: a zero message the decoder corrects (``correct``), a key
    #: answered that the aggregator does without (``aggregate``), or an erasure (``None``)
    erasure: str | None = None

    def __init__(self, code: GradientCode, roster: Roster, *, liars: bool) -> None:
        self.code, self.roster = code, roster
        #: this run's refusals (``liars``: the run has adversaries)
        self.refused = Refused(self.refused_keys, liars=liars)
        self.t = -1

    # -- keys -------------------------------------------------------------------------------
    def key(self, result: Result) -> Any:
        raise NotImplementedError

    def sender(self, source: int) -> Sender | None:
        """Who may send on ``down_comm`` rank ``source`` (``gradcode.train.intake``)."""
        raise NotImplementedError

    def refused_keys(self, refusal: Refusal) -> list[Any]:
        raise NotImplementedError

    def hold(self, result: Result) -> Result:
        """``result`` as kept until the reduction (a copy where that is faster to reduce)."""
        return result

    # -- one iteration ----------------------------------------------------------------------
    def start(self, t: int) -> None:
        self.t = t
        self.refused.start(t)

    def lost(self) -> set[int]:
        return set(self.roster.lost(self.t))

    def decodable(self, held: dict[Any, Result]) -> bool:
        """Whether the results ``held`` (and the refused keys, where they count as answered)
        are enough to reduce."""
        keys = list(held)
        if self.erasure is not None:  # a refused key is answered: it will not come
            keys += [key for key in self.refused.erased if key not in held]
        return bool(keys) and self._ready(keys, held)

    def _ready(self, keys: list[Any], held: dict[Any, Result]) -> bool:
        raise NotImplementedError

    def complete(self, held: dict[Any, Result]) -> bool:
        """Whether everything that can still come is in hand though the rule does not hold
        (an aggregator past lost workers)."""
        return False

    def can_go_on(self, lost: list[int]) -> bool:
        """Whether an iteration can end without the workers ``lost``."""
        return alive_decodable(self.code, lost)

    def erase(self, held: dict[Any, Result]) -> None:
        """Messages of this iteration were refused: none of them is used (a result taken
        before its refusal leaves ``held``), and ``DecodingFailed`` once the reduction cannot
        do without them."""
        for key in self.refused.erased:
            held.pop(key, None)
        self._check_erased()

    def _check_erased(self) -> None:
        """An erasure: ``DecodingFailed`` when what is left cannot be decoded."""
        if not self._decodes_without(self.lost()):
            raise DecodingFailed(
                self.t,
                f"{self.refused.reason()}: {self.code.name} {self.code.params()} cannot "
                "decode without it",
            )

    def _decodes_without(self, lost: set[int]) -> bool:
        raise NotImplementedError

    def refused_everything(self, held: dict[Any, Result], refusals: list[str]) -> None:
        """The decoder refused ``held``, every result seen: ``DecodingFailed`` when that was
        every message that can still come."""

    def reduce(self, held: dict[Any, Result]) -> tuple[np.ndarray, dict[str, Any]]:
        """The update from ``held`` and the record's fields it adds, or
        ``NotDecodableError``."""
        raise NotImplementedError

    # -- the run ----------------------------------------------------------------------------
    def summary(self, reports: dict[int, np.ndarray], out: Path, start: int) -> dict[str, Any]:
        """What the reduction adds to ``summary.json`` from the children's ``DONE`` reports
        (and writes beside it in ``out``; iterations before ``start`` are a resumed run's)."""
        return {}

    def orphans(self) -> list[int]:
        """World ranks alive that a ``STOP`` through the children cannot reach."""
        return []
