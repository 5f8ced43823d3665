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
infinity agrees with no value (``same_value``), so it is outvoted and named as a liar, and
more than ``a`` of them are refused at once (``gradcode.codes.liars.nonfinite``).
``is_decodable`` asks for ``2a + 1`` responders in every group: then ``a + 1`` of them are
honest wherever the liars are, so any ``s`` stragglers leave the code decodable (the
paper's ``s = 0``: groups of ``2a + 1``). Two messages agree when they differ by at most
``agreement_tol`` of the larger norm: honest copies are the same computation on the same
data, equal to round-off when the ranks' BLAS kernels differ; a liar within that distance
changes the sum by as little.

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

import math
from collections.abc import Iterable, Iterator, Mapping
from typing import ClassVar

import numpy as np

from gradcode.codes.base import (
    Capabilities,
    DecodeResult,
    LinearCode,
    MessageKey,
    NotDecodableError,
    check_int,
    message_vectors,
    require,
)
from gradcode.codes.completion import CompletionRule
from gradcode.codes.liars import EveryLiarPatterns, beyond_a_nonfinite, nonfinite


def same_value(x: np.ndarray, y: np.ndarray, tol: float) -> bool:
    """Whether two copies are one value: ``||x - y|| <= tol * max(||x||, ||y||)`` (honest
    copies differ by round-off where the ranks' kernels differ). A copy that is not finite
    agrees with nothing, itself included: an infinity would otherwise agree with every value
    (``inf <= tol * inf``), and a NaN is no gradient."""
    norms = (float(np.linalg.norm(x)), float(np.linalg.norm(y)))
    if not (math.isfinite(norms[0]) and math.isfinite(norms[1])):
        return False
    scale = max(norms)
    return float(np.linalg.norm(x - y)) <= tol * scale


class DracoRepetition(EveryLiarPatterns, LinearCode):
    """DRACO's repetition code: groups of ``2a + s + 1`` replicas and a vote per group.

    Parameters: ``n`` workers (``k = n`` partitions), ``a`` adversaries, ``s`` stragglers;
    needs ``(2a + s + 1) | n``.
    """

    name = "draco-repetition"
    capabilities: ClassVar[Capabilities] = Capabilities(corrects_adversaries=True)
    numerically_sound_up_to = None  # only additions and comparisons
    #: relative distance within which two messages count as the same value
    agreement_tol: ClassVar[float] = 1e-9

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

    def _by_group(self, keys: Iterable[MessageKey]) -> dict[int, list[int]]:
        found: dict[int, list[int]] = {g: [] for g in range(self.groups)}
        for key in keys:
            if not isinstance(key, int | np.integer) or not 0 <= key < self.n:
                raise ValueError(f"{self.name}: unknown message key {key!r}")
            found[int(key) // self.r].append(int(key))
        return {g: sorted(set(members)) for g, members in found.items()}

    def is_decodable(self, keys: Iterable[MessageKey]) -> bool:
        """``2a + 1`` responders in every group."""
        return all(len(m) >= 2 * self.a + 1 for m in self._by_group(keys).values())

    # -- decoding ---------------------------------------------------------------------------
    def decode_result(self, messages: Mapping[MessageKey, np.ndarray], length: int) -> DecodeResult:
        """The sum of the groups' votes; ``adversaries``: responders outvoted in their group."""
        groups = self._by_group(messages)
        short = {g: members for g, members in groups.items() if len(members) < 2 * self.a + 1}
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
        broken = nonfinite(messages)  # no vote counts them (``same_value``): outvoted below
        if len(broken) > self.a:
            raise beyond_a_nonfinite(self.name, self.a, broken)
        width = self.message_length(length)
        total = np.zeros(width)
        used: list[int] = []
        outvoted: list[int] = []
        for group in range(self.groups):
            members = groups[group]
            vectors = message_vectors(self.name, messages, members, width)
            winner = self._vote(vectors)
            if winner is None:
                raise self._beyond_a(
                    f"no value has a + 1 = {self.a + 1} senders in group {group} (workers "
                    f"{members})"
                )
            rival = self._vote(vectors, besides=winner)
            if rival is not None:
                raise self._beyond_a(
                    f"workers {members[winner]} and {members[rival]} of group {group} send "
                    f"different values with a + 1 = {self.a + 1} senders each"
                )
            total += vectors[winner]
            used.append(members[winner])
            outvoted += [
                w
                for w, vector in zip(members, vectors, strict=True)
                if not self._agree(vector, vectors[winner])
            ]
        if len(outvoted) > self.a:
            raise self._beyond_a(f"workers {sorted(outvoted)} are outvoted in their groups")
        return DecodeResult(total[:length], tuple(used), 1.0, adversaries=tuple(outvoted))

    def _beyond_a(self, what: str) -> NotDecodableError:
        return NotDecodableError(
            f"{self.name}: {what}: more than a = {self.a} liars (detected, not correctable)",
            needed=None,
        )

    def _agree(self, x: np.ndarray, y: np.ndarray) -> bool:
        return same_value(x, y, self.agreement_tol)

    def _vote(self, vectors: list[np.ndarray], besides: int | None = None) -> int | None:
        """Index of the first vector that ``a + 1`` of ``vectors`` agree with (``None``: none);
        ``besides``: the first such vector that differs from ``vectors[besides]``."""
        for index, candidate in enumerate(vectors):
            if besides is not None and self._agree(candidate, vectors[besides]):
                continue
            if sum(self._agree(candidate, other) for other in vectors) >= self.a + 1:
                return index
        return None
