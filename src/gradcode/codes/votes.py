"""The vote of the codes that send copies of one value: DRACO's repetition code, DETOX and
ByzShield.

Each of them cuts the messages into *units* (DRACO's and DETOX's groups of replicas,
ByzShield's files) whose honest messages are the same vector, and takes per unit the value
``quorum = a + 1`` of the copies in hand agree with (``vote``). Two copies agree when they
differ by at most ``agreement_tol`` of the larger norm (``same_value``): honest copies are the
same computation on the same data, equal to round-off where the ranks' BLAS kernels differ, and
a liar within that distance changes the sum by as little. A copy holding a NaN or an infinity
agrees with nothing, itself included, so it is outvoted and named; more than ``a`` workers
sending such copies are refused before any vote (``Voting._refuse_nonfinite``, with
``gradcode.codes.liars``' words).

``Voting`` is the mixin the three codes derive from (before the ``GradientCode`` base): the
code says how keys fall into units (``_units``) and what one unit is called (``vote_unit``);
the mixin gives the ballots (``_ballots``), the refusal beyond ``a`` liars (``_beyond_a``) and
the inputs of a robust aggregator, one vote per unit that has one (``majority_inputs``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from gradcode.codes.base import AggregationInputs, MessageKey, NotDecodableError
from gradcode.codes.combine import message_vectors
from gradcode.codes.liars import beyond_a_nonfinite, nonfinite

#: relative distance within which two messages count as the same value
AGREEMENT_TOL = 1e-9


def same_value(x: np.ndarray, y: np.ndarray, tol: float) -> bool:
    """Whether two copies are one value: ``||x - y|| <= tol * max(||x||, ||y||)`` (honest
    copies differ by round-off where the ranks' kernels differ). A copy that is not finite
    agrees with nothing, itself included: an infinity would otherwise agree with every value
    (``inf <= tol * inf``), and a NaN is no gradient."""
    return _agree(x, y, _norm(x), _norm(y), tol)


def _agree(x: np.ndarray, y: np.ndarray, x_norm: float, y_norm: float, tol: float) -> bool:
    """``same_value`` with both norms in hand."""
    if not (math.isfinite(x_norm) and math.isfinite(y_norm)):
        return False
    return _norm(x - y) <= tol * max(x_norm, y_norm)


def _norm(vector: np.ndarray) -> float:
    """``np.linalg.norm`` of a float64 vector, bit for bit (the square root of its dot with
    itself, which is what numpy computes) without its checks: a vote takes one per copy and
    per pair, and the checks were two thirds of ByzShield's decode (4 us of 6 a norm)."""
    if vector.dtype != np.float64:
        return float(np.linalg.norm(vector))
    flat = vector.ravel(order="K")
    return math.sqrt(float(flat.dot(flat)))


class Copies:
    """A unit's copies with each one's norm taken once and each pair compared once: a vote
    compares every copy with the candidates, and the outvoted are found by comparing them
    with the winner again (the same answers as ``same_value``, pair by pair)."""

    def __init__(self, vectors: Sequence[np.ndarray], tol: float) -> None:
        self.vectors = vectors
        self.tol = tol
        self._norms = [_norm(vector) for vector in vectors]
        self._pairs: dict[tuple[int, int], bool] = {}

    def same(self, i: int, j: int) -> bool:
        """``same_value(vectors[i], vectors[j], tol)``."""
        pair = (i, j) if i <= j else (j, i)
        found = self._pairs.get(pair)
        if found is None:
            x, y = self.vectors[pair[0]], self.vectors[pair[1]]
            found = _agree(x, y, self._norms[pair[0]], self._norms[pair[1]], self.tol)
            self._pairs[pair] = found
        return found

    def vote(self, quorum: int, besides: int | None = None) -> int | None:
        """``vote(vectors, quorum, tol, besides)``."""
        for index in range(len(self.vectors)):
            if besides is not None and self.same(index, besides):
                continue
            # counting stops at the quorum: the rest of the pairs cannot change the answer
            agreeing = 0
            for other in range(len(self.vectors)):
                agreeing += self.same(index, other)
                if agreeing >= quorum:
                    return index
        return None


def vote(
    vectors: Sequence[np.ndarray], quorum: int, tol: float, besides: int | None = None
) -> int | None:
    """Index of the first vector that ``quorum`` of ``vectors`` agree with (``None``: none);
    ``besides``: the first such vector that differs from ``vectors[besides]``."""
    return Copies(vectors, tol).vote(quorum, besides)


def by_unit(
    keys: Iterable[MessageKey], unit_of: Callable[[MessageKey], int], units: int
) -> list[list[MessageKey]]:
    """``keys`` without repeats, sorted, in ``units`` lists by ``unit_of``."""
    found: list[list[MessageKey]] = [[] for _ in range(units)]
    for key in set(keys):
        found[unit_of(key)].append(key)
    return [sorted(members) for members in found]


@dataclass(frozen=True)
class Ballot:
    """One unit's vote: its copies in hand (``keys``, ``vectors``) and the index of the value
    ``quorum`` of them agree with (``winner``, ``None``: no such value); ``copies``: the
    comparisons the vote made, reused."""

    unit: int
    keys: list[MessageKey]
    vectors: list[np.ndarray]
    winner: int | None
    tol: float
    copies: Copies | None = None

    def _copies(self) -> Copies:
        return self.copies if self.copies is not None else Copies(self.vectors, self.tol)

    def agreeing(self, agree: bool = True) -> list[MessageKey]:
        """The keys whose copy agrees with the winner's (``agree=False``: the outvoted ones)."""
        assert self.winner is not None
        copies = self._copies()
        return [key for i, key in enumerate(self.keys) if copies.same(i, self.winner) == agree]

    def rival(self, quorum: int) -> int | None:
        """Index of a second value ``quorum`` copies agree with, different from the winner's."""
        return self._copies().vote(quorum, besides=self.winner)


class Voting:
    """Mixin (before the ``GradientCode`` base) for a code that votes per unit of copies."""

    name: str
    a: int
    #: relative distance within which two messages count as the same value
    agreement_tol: ClassVar[float] = AGREEMENT_TOL
    #: what one vote is over, in messages: "group", "file"
    vote_unit: ClassVar[str]

    @property
    def quorum(self) -> int:
        """Copies that make a unit's vote: ``a + 1`` (a majority of ``2a + 1``)."""
        return self.a + 1

    def _units(self, keys: Iterable[MessageKey]) -> list[list[MessageKey]]:
        """``keys`` per unit (``by_unit``); an unknown key raises ``ValueError``."""
        raise NotImplementedError

    if TYPE_CHECKING:  # the GradientCode base's; defining them here would shadow it

        def message_length(self, length: int) -> int: ...

        def worker_of(self, key: MessageKey) -> int: ...

    def _ballots(
        self,
        messages: Mapping[MessageKey, np.ndarray],
        length: int,
        units: list[list[MessageKey]] | None = None,
    ) -> Iterator[Ballot]:
        """Per unit, in order, its ballot (``units``: ``_units(messages)`` if already in hand);
        lazily, so a refusal at one unit leaves the next unread."""
        width = self.message_length(length)
        units = self._units(messages) if units is None else units
        for unit, keys in enumerate(units):
            vectors = message_vectors(self.name, messages, keys, width) if keys else []
            copies = Copies(vectors, self.agreement_tol)
            winner = copies.vote(self.quorum)
            yield Ballot(unit, keys, vectors, winner, self.agreement_tol, copies)

    def _refuse_nonfinite(self, messages: Mapping[MessageKey, np.ndarray]) -> None:
        """Refuse messages holding a NaN or an infinity from more than ``a`` workers; fewer
        are outvoted by the vote (``same_value``) and named as liars."""
        broken = nonfinite(messages)
        senders = {self.worker_of(key) for key in broken}
        if len(senders) > self.a:
            raise beyond_a_nonfinite(self.name, self.a, broken, liars=len(senders))

    def _beyond_a(self, what: str) -> NotDecodableError:
        """The refusal of a vote that shows more than ``a`` liars (``needed=None``: more
        responders may settle it, none may)."""
        return NotDecodableError(
            f"{self.name}: {what}: more than a = {self.a} liars (detected, not correctable)",
            needed=None,
        )

    def majority_inputs(
        self, messages: Mapping[MessageKey, np.ndarray], length: int, total: int
    ) -> AggregationInputs:
        """A robust aggregator's inputs: one vote per unit whose copies in hand have a value
        sent by ``quorum`` of them; ``total`` units make the gradient."""
        values: list[np.ndarray] = []
        keys: list[tuple[MessageKey, ...]] = []
        for ballot in self._ballots(messages, length):
            if ballot.winner is None:  # no majority: too many liars (or too few copies) to trust
                continue
            values.append(ballot.vectors[ballot.winner][:length])
            keys.append(tuple(ballot.agreeing()))
        if not values:
            raise NotDecodableError(f"{self.name}: no {self.vote_unit} has a majority", needed=None)
        return AggregationInputs(np.stack(values), tuple(keys), total)
