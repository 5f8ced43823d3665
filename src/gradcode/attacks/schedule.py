"""Who attacks when: the workers, the iterations and the attack of a run or a simulation.

``AttackPlan`` is what the run file's ``adversaries:`` block becomes (``gradcode.runfile``):
the attack built from its registry, the workers that lie, and the iterations ``start, start +
every, ...`` before ``stop`` (``None``: to the end) in which they do. Its ``honest_floor``
check refuses, before the run, an omniscient attack that the code's decoding could leave
with fewer honest messages than it needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gradcode.attacks.base import Attack
from gradcode.attacks.registry import DEFAULT_ATTACK, build

#: second word of the seed of an adversary's draws (the MPI runtime's since its first noise)
ADVERSARY_STREAM = 0xAD5


def attack_rng(seed: int, iteration: int, key: int) -> np.random.Generator:
    """The generator of message ``key``'s forgery in ``iteration`` of a run seeded ``seed``:
    a function of those alone, so a resumed run forges the same messages."""
    return np.random.default_rng([seed, ADVERSARY_STREAM, iteration, key])


@dataclass(frozen=True)
class AttackPlan:
    """The adversaries of one run: ``attack`` at ``workers`` in the scheduled iterations."""

    workers: tuple[int, ...] = ()
    attack_name: str = DEFAULT_ATTACK
    attack_params: dict[str, Any] = field(default_factory=dict)
    start: int = 0
    stop: int | None = None
    every: int = 1

    def attack(self) -> Attack:
        """The attack object (validated; a bad parameter is a one-line error)."""
        return build(self.attack_name, self.attack_params)

    def lies(self, worker: int, iteration: int) -> bool:
        """Whether ``worker`` forges its messages in ``iteration``."""
        return worker in self.workers and self.active(iteration)

    def active(self, iteration: int) -> bool:
        """Whether ``iteration`` is one the schedule attacks in."""
        if iteration < self.start or (self.stop is not None and iteration >= self.stop):
            return False
        return (iteration - self.start) % self.every == 0


def honest_floor(responders: int, liars: int) -> int:
    """Honest messages a decoder holds at least when it decodes from ``responders`` messages
    of which ``liars`` lie."""
    return max(responders - liars, 0)
