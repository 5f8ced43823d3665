"""Omniscient attacks, emulated where the messages meet (as DRACO's and DETOX's own code
emulate them at the parameter server).

An attack whose ``gradcode.attacks`` class declares ``omniscient`` forges from the honest
messages of others, which no worker holds: the lying workers send their honest messages
(flagged ``corrupted``), and just before the reduction the master replaces each with the
attack's forgery from the honest messages in hand (``Attack.apply``, seeded per
``(seed, iteration, key)`` like a worker's forgery). No byte more crosses the network; the
forgery's time is the master's, logged as ``attack_time`` and included in ``decode_time``.
The emulated attacker knows the honest messages of this reduction, not those of the
stragglers still on their way. A forgery meets the finiteness check its bytes would have met
on the wire (``refusals``: a non-finite one is refused like a received one).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from gradcode.attacks import Attack, AttackPlan, attack_rng
from gradcode.codes import GradientCode
from gradcode.train.intake import NON_FINITE, Refusal, non_finite


class Forgery:
    """The master's emulation of ``attack`` (``None``: nothing to forge there) by the liars of
    ``attacks`` (module docstring). ``replaced(worker)``: a spare serves it now, another
    process, honest; ``rank_of(worker)``: the channel rank that serves it."""

    def __init__(
        self,
        code: GradientCode,
        attacks: AttackPlan,
        attack: Attack | None,
        seed: int,
        replaced: Callable[[int], bool],
        rank_of: Callable[[int], int],
    ) -> None:
        self.code, self.attacks, self.seed = code, attacks, seed
        self.attack = attack if attack is not None and attack.omniscient else None
        self.replaced, self.rank_of = replaced, rank_of
        self.keys = code.all_message_keys()

    def active(self, t: int) -> bool:
        """Whether iteration ``t``'s messages are forged here."""
        return self.attack is not None and self.attacks.active(t)

    def forge(self, messages: dict[Any, np.ndarray], t: int) -> dict[Any, np.ndarray]:
        """The attack's messages in place of the liars' honest ones; the received buffers stay
        untouched."""
        assert self.attack is not None
        code = self.code
        liars = [
            key
            for key in messages
            if int(code.worker_of(key)) in self.attacks.workers
            and not self.replaced(int(code.worker_of(key)))
        ]
        # one generator per message, seeded as a worker seeds its own forgery
        return self.attack.apply(
            messages, liars, lambda key: attack_rng(self.seed, t, self.keys.index(key))
        )

    def refusals(
        self, forged: dict[Any, np.ndarray], honest: dict[Any, np.ndarray], t: int
    ) -> list[Refusal]:
        """The forgeries the intake would have refused (non-finite ones)."""
        refusals = []
        for key, value in forged.items():
            reason = non_finite(value) if value is not honest[key] else None
            if reason is not None:
                worker = int(self.code.worker_of(key))
                reason += " (an omniscient forgery, emulated at the master)"
                rank, index = self.rank_of(worker), self.keys.index(key)
                refusals.append(Refusal(rank, worker, t, NON_FINITE, reason, index))
        return refusals
