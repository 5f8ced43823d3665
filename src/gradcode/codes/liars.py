"""Liars for codes that correct adversaries: every placement of them (verification patterns),
and the messages no honest worker sends (non-finite ones).

``GradientCode.patterns`` draws one random placement of ``a`` liars per straggler pattern; a
code that claims to correct *any* ``a`` liars is verified here on all of them: every choice of
``s`` stragglers, and for each every set of ``0 .. a`` liars among the responders
(``every_liar_pattern``), or ``limit`` random ones. DRACO's codes and ByzShield take them by
deriving from ``EveryLiarPatterns``.

A message holding a NaN or an infinity is a liar's: an honest worker computes finite partial
gradients from finite data and a finite model, and the decoders' tests (a syndrome's norm
against a tolerance, a vote within a distance) are comparisons that NaN passes silently
(``not nan > tol`` is true). ``nonfinite`` finds them before any such test; each code that
corrects adversaries counts them among its ``a`` liars (``beyond_a_nonfinite`` past it).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Mapping

import numpy as np

from gradcode.codes.base import GradientCode, MessageKey, NotDecodableError, Pattern
from gradcode.finite import nonfinite_reason


def nonfinite(messages: Mapping[MessageKey, np.ndarray]) -> dict[MessageKey, str]:
    """The messages holding a NaN or an infinity, each with ``nonfinite_reason``'s words."""
    found = {}
    for key, vector in messages.items():
        reason = nonfinite_reason(vector)
        if reason is not None:
            found[key] = reason
    return found


def describe_nonfinite(found: Mapping[MessageKey, str]) -> str:
    """``found`` in one phrase: "messages 1 (NaN), 4 (+inf)"."""
    return "messages " + ", ".join(f"{key!r} ({why})" for key, why in found.items())


def beyond_a_nonfinite(
    scheme: str, a: int, found: Mapping[MessageKey, str], liars: int | None = None
) -> NotDecodableError:
    """The refusal when the non-finite messages ``found`` come from more than ``a`` liars
    (``liars``: how many workers sent them, default one per message)."""
    count = len(found) if liars is None else liars
    return NotDecodableError(
        f"{scheme}: {describe_nonfinite(found)} are not finite: {count} liar"
        f"{'s' * (count != 1)}, more than a = {a} (detected, not correctable)",
        needed=None,
    )


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
