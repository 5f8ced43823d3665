"""DRACO's repetition code with a majority vote (Chen, Wang, Charles, Papailiopoulos, "DRACO:
Byzantine-resilient Distributed Training via Redundant Gradients", ICML 2018, Sec. 4.1).

Layout (fractional repetition's, ``gradcode.codes.frc``, with groups of ``r = 2a + s + 1``):
``k = n`` partitions; the workers form ``n / r`` groups of ``r`` consecutive workers, group
``g`` holds the block of partitions ``g r .. g r + r - 1``, and each worker sends the plain sum
of its block (``m = 1``), so the ``r`` honest messages of a group are the same vector.

Decoding is a vote per group: a value sent by at least ``a + 1`` responders of the group is
the group's sum (with at most ``a`` liars overall, no wrong value can gather ``a + 1``
senders), and the gradient is the sum of the groups' values. Responders that disagree with
their group's vote are named in ``DecodeResult.adversaries``; a message holding a NaN or an
infinity agrees with no value (``gradcode.codes.votes.same_value``), so it is outvoted and
named as a liar, and more than ``a`` of them are refused at once
(``gradcode.codes.liars.nonfinite``).
``is_decodable`` asks for ``2a + 1`` responders in every group: then ``a + 1`` of them are
honest wherever the liars are, so any ``s`` stragglers leave the code decodable (the
paper's ``s = 0``: groups of ``2a + 1``). Two messages agree when they differ by at most
``agreement_tol`` of the larger norm (the vote DETOX and ByzShield share,
``gradcode.codes.votes``).

What it detects beyond ``a`` liars (``NotDecodableError``, ``needed=None``: more responders
may settle it, none may): a group with no value sent by ``a + 1`` of its responders; a group
where two different values each have ``a + 1`` senders (``a + 1`` colluding liars beside
``a + 1`` honest responders, possible once ``s > 0`` lets a group hold more than ``2a + 1``);
and more than ``a`` responders outvoted in all (every group's vote may then be right, but
the bound it was decoded under is broken, so the result is not vouched for).

What it cannot detect, the paper's bound (``2a + 1`` copies correct ``a``, not more): ``a +
1`` liars agreeing on one wrong value in a group where at most ``a`` honest responders are in
hand (e.g. the ``2a + 1`` first of a group, ``a + 1`` of them colluding) outvote the honest
ones silently; the honest ones are then named as the liars. Nothing in the messages tells
that word from an honest one with ``a`` liars. The MPI runtime's emulation, which knows who
lies, catches it when an honest worker is named (``gradcode.train.faults.caught``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import ClassVar

import numpy as np

from gradcode.codes.base import DecodeResult, MessageKey, NotDecodableError, check_int, require
from gradcode.codes.capabilities import Capabilities
from gradcode.codes.completion import CompletionRule
from gradcode.codes.liars import EveryLiarPatterns
from gradcode.codes.linear import LinearCode
from gradcode.codes.votes import Voting, by_unit


class DracoRepetition(EveryLiarPatterns, Voting, LinearCode):
    """DRACO's repetition code: groups of ``2a + s + 1`` replicas and a vote per group.

    Parameters: ``n`` workers (``k = n`` partitions), ``a`` adversaries, ``s`` stragglers;
    needs ``(2a + s + 1) | n``.
    """

    name = "draco-repetition"
    capabilities: ClassVar[Capabilities] = Capabilities(corrects_adversaries=True)
    numerically_sound_up_to = None  # only additions and comparisons
    vote_unit = "group"

    def __init__(self, n: int, a: int = 1, s: int = 0) -> None:
        self.n = check_int("n", self.name, n, minimum=1)
        self.a = check_int("a", self.name, a)
        self.s = check_int("s", self.name, s)
        self.r = 2 * self.a + self.s + 1
        require(
            self.n % self.r == 0,
            f"{self.name} needs (2a + s + 1) | n (got n={self.n}, a={self.a}, s={self.s})",
        )
        self.k, self.m = self.n, 1
        self.groups = self.n // self.r
        group_of = np.arange(self.n) // self.r
        encoding = (group_of[:, None] == group_of[None, :]).astype(np.float64)
        self._init_linear(encoding[:, :, None])

    @classmethod
    def parameter_grid(cls, max_n: int) -> Iterator[dict[str, int]]:
        """Every ``(n, a, s)`` with ``a <= 2``, ``s <= 2`` and ``(2a + s + 1) | n``."""
        for n in range(1, max_n + 1):
            for a in range(3):
                for s in range(3):
                    if n % (2 * a + s + 1) == 0:
                        yield {"n": n, "a": a, "s": s}

    def params(self) -> dict[str, int]:
        return {"n": self.n, "a": self.a, "s": self.s}

    def group_workers(self, group: int) -> tuple[int, ...]:
        """The ``r`` workers of ``group``."""
        return tuple(range(group * self.r, (group + 1) * self.r))

    def partitions(self, worker: int) -> tuple[int, ...]:
        return self.group_workers(worker // self.r)

    # -- decodability -----------------------------------------------------------------------
    def min_responders(self) -> int:
        return self.n - self.s

    def completion_rule(self) -> CompletionRule:
        """``2a + 1`` of each group of ``r`` workers."""
        groups = tuple(self.group_workers(g) for g in range(self.groups))
        return CompletionRule(groups, (2 * self.a + 1,) * self.groups)

    def completion_times(self, arrivals: np.ndarray) -> np.ndarray:
        """The slowest group's ``(2a + 1)``-th arrival."""
        arrivals = self._arrivals(arrivals).reshape(-1, self.groups, self.r)
        return np.partition(arrivals, 2 * self.a, axis=2)[:, :, 2 * self.a].max(axis=1)

    def _units(self, keys: Iterable[MessageKey]) -> list[list[MessageKey]]:
        """The responders among ``keys`` per group."""
        return by_unit([self._worker(key) for key in keys], lambda w: w // self.r, self.groups)

    def _worker(self, key: MessageKey) -> int:
        if not isinstance(key, int | np.integer) or not 0 <= key < self.n:
            raise ValueError(f"{self.name}: unknown message key {key!r}")
        return int(key)

    def is_decodable(self, keys: Iterable[MessageKey]) -> bool:
        """``2a + 1`` responders in every group."""
        return all(len(m) >= 2 * self.a + 1 for m in self._units(keys))

    # -- decoding ---------------------------------------------------------------------------
    def decode_result(self, messages: Mapping[MessageKey, np.ndarray], length: int) -> DecodeResult:
        """The sum of the groups' votes; ``adversaries``: responders outvoted in their group."""
        groups = self._units(messages)
        short = {g: m for g, m in enumerate(groups) if len(m) < 2 * self.a + 1}
        if short:
            missing = sum(2 * self.a + 1 - len(members) for members in short.values())
            raise NotDecodableError(
                f"{self.name} needs 2a + 1 = {2 * self.a + 1} responders in every group of "
                f"{self.r}; groups {sorted(short)} have fewer",
                needed=missing,
                candidates=[
                    w for g in short for w in self.group_workers(g) if w not in set(short[g])
                ],
            )
        self._refuse_nonfinite(messages)
        total = np.zeros(self.message_length(length))
        used: list[MessageKey] = []
        outvoted: list[MessageKey] = []
        for ballot in self._ballots(messages, length, groups):
            group, members = ballot.unit, ballot.keys
            if ballot.winner is None:
                raise self._beyond_a(
                    f"no value has a + 1 = {self.a + 1} senders in group {group} (workers "
                    f"{members})"
                )
            rival = ballot.rival(self.quorum)
            if rival is not None:
                raise self._beyond_a(
                    f"workers {members[ballot.winner]} and {members[rival]} of group {group} "
                    f"send different values with a + 1 = {self.a + 1} senders each"
                )
            total += ballot.vectors[ballot.winner]
            used.append(members[ballot.winner])
            outvoted += ballot.agreeing(False)
        if len(outvoted) > self.a:
            raise self._beyond_a(f"workers {sorted(outvoted)} are outvoted in their groups")  # type: ignore[type-var]
        return DecodeResult(total[:length], tuple(used), 1.0, adversaries=tuple(outvoted))
