"""Verification patterns of codes that correct adversaries: every placement of the liars.

``GradientCode.patterns`` draws one random placement of ``a`` liars per straggler pattern; a
code that claims to correct *any* ``a`` liars is verified here on all of them: every choice of
``s`` stragglers, and for each every set of ``0 .. a`` liars among the responders
(``every_liar_pattern``), or ``limit`` random ones. DRACO's codes and ByzShield take them by
deriving from ``EveryLiarPatterns``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator

import numpy as np

from gradcode.codes.base import GradientCode, Pattern


def every_liar_pattern(
    code: GradientCode, *, exhaustive: bool, rng: np.random.Generator, limit: int
) -> Iterator[Pattern]:
    """Every ``(stragglers, liars)`` pair with ``s`` stragglers and ``0 .. a`` liars (or
    ``limit`` random pairs with exactly ``a`` liars); liars lie in all their messages."""
    n, s, a = code.n, code.s, code.a

    def pattern(stragglers: tuple[int, ...], liars: tuple[int, ...]) -> Pattern:
        alive = [w for w in range(n) if w not in set(stragglers)]
        keys = frozenset(k for w in alive for k in code.message_keys(w))
        return Pattern(keys, frozenset(k for w in liars for k in code.message_keys(w)))

    if not exhaustive:
        for _ in range(limit):
            stragglers = tuple(int(w) for w in rng.choice(n, size=s, replace=False))
            alive = [w for w in range(n) if w not in set(stragglers)]
            liars = tuple(int(w) for w in rng.choice(alive, size=min(a, len(alive)), replace=False))
            yield pattern(stragglers, liars)
        return
    for stragglers in itertools.combinations(range(n), s):
        alive = [w for w in range(n) if w not in set(stragglers)]
        for count in range(a + 1):
            for liars in itertools.combinations(alive, count):
                yield pattern(stragglers, liars)


def count_liar_patterns(code: GradientCode) -> int:
    """How many patterns ``every_liar_pattern(exhaustive=True)`` yields."""
    alive = code.n - code.s
    return math.comb(code.n, code.s) * sum(math.comb(alive, c) for c in range(code.a + 1))


class EveryLiarPatterns:
    """Mixin (before the ``GradientCode`` base) for a code verified on every placement of up
    to ``a`` liars: its ``patterns`` are ``every_liar_pattern``'s."""

    def patterns(
        self, *, exhaustive: bool = True, rng: np.random.Generator | None = None, limit: int = 200
    ) -> Iterator[Pattern]:
        """Every ``s`` stragglers with every set of ``0 .. a`` liars (``every_liar_pattern``)."""
        rng = rng if rng is not None else np.random.default_rng(0)
        return every_liar_pattern(self, exhaustive=exhaustive, rng=rng, limit=limit)  # type: ignore[arg-type]

    def count_patterns(self) -> int:
        return count_liar_patterns(self)  # type: ignore[arg-type]
