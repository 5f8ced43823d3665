"""The one interface every attack implements.

An attack is what an adversarial worker sends instead of its honest message. It sees its own
honest message (``own``, shape ``(width,)``) and, when it is *omniscient*, the honest messages
of the other responders (``honest``, shape ``(count, width)``); it returns the forged message,
of ``own``'s shape. Attacks work on messages, not gradients: under a gradient code a message is
a coded combination, and the attack mimics or distorts those combinations, as the public
Byzantine-robustness work (DRACO, DETOX, ByzShield) does on the messages its workers send.

What the runtime, the simulator and ``gradcode codes verify`` need to know about an attack is
declared: ``omniscient`` (it reads ``honest``) and ``honest_needed()`` (how many honest
messages it must be given). Nothing outside ``gradcode.attacks`` asks which attack it is
(``tests/capabilities/test_no_scheme_identity.py`` enforces it).

Randomness comes in as ``rng`` so the caller seeds it (the MPI worker per ``(seed, iteration,
key)``, which makes a resumed run draw the same noise).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

import numpy as np

from gradcode.errors import UserError


class AttackError(UserError):
    """An attack cannot be given in this setting (the line names the attack and the
    constraint)."""


class Attack(ABC):
    """Base class of the attacks; subclasses validate their parameters in ``__init__`` (by
    keyword, like codes) and implement ``forge``."""

    #: the registry's name of the attack ("" on the base class: a subclass must set it)
    name: ClassVar[str] = ""
    #: the attack reads the other responders' honest messages
    omniscient: ClassVar[bool] = False
    #: honest messages the attack needs (``honest_needed`` may refine it per parameters)
    min_honest: ClassVar[int] = 0

    def honest_needed(self) -> int:
        """How many honest messages ``forge`` must be given (0 for attacks that are not
        omniscient)."""
        return self.min_honest

    def params(self) -> dict[str, Any]:
        """The parameters that rebuild the attack (``build(name, **params())``)."""
        return {}

    @abstractmethod
    def forge(self, own: np.ndarray, honest: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """The forged message, shape ``own.shape``; ``honest`` is ``(count, width)``."""

    # -- refusals ---------------------------------------------------------------------------
    def refusal(self, honest: int) -> str | None:
        """Why the attack cannot be given when ``honest`` honest messages are available
        (``None``: it can)."""
        needed = self.honest_needed()
        if honest < needed:
            return (
                f"attack {self.name} needs at least {needed} honest message"
                f"{'s' * (needed != 1)} to forge from (got {honest})"
            )
        return None

    def require(self, honest: int, where: str = "") -> None:
        """``AttackError`` (one line, prefixed with ``where``) when ``refusal`` says no."""
        problem = self.refusal(honest)
        if problem:
            raise AttackError(f"{where}: {problem}" if where else problem)

    def apply(
        self,
        messages: Mapping[Any, np.ndarray],
        liars: Sequence[Any],
        rng: np.random.Generator | Callable[[Any], np.random.Generator],
    ) -> dict[Any, np.ndarray]:
        """``messages`` with those of ``liars`` forged; the others are the honest ones.

        ``rng``: one generator for all, or a function of the liar's key giving its own (the
        MPI master seeds each message's forgery as its worker would).

        Every liar forges from the same honest messages (colluding omniscient liars see each
        other's honest messages as theirs, not as honest ones). Refused in one line when fewer
        honest messages are in ``messages`` than the attack needs.
        """
        liars = [key for key in liars if key in messages]
        out = dict(messages)
        if not liars:
            return out
        bad = set(liars)
        honest_keys = [key for key in messages if key not in bad]
        self.require(len(honest_keys))
        first = np.asarray(messages[liars[0]], dtype=np.float64)
        honest = (
            np.stack([np.asarray(messages[k], dtype=np.float64) for k in honest_keys])
            if self.omniscient and honest_keys
            else np.empty((0, first.size))
        )
        for key in liars:
            own = np.asarray(messages[key], dtype=np.float64)
            out[key] = self.forge(own, honest, rng(key) if callable(rng) else rng)
        return out

    def __repr__(self) -> str:
        args = ", ".join(f"{key}={value!r}" for key, value in self.params().items())
        return f"{type(self).__name__}({args})"
