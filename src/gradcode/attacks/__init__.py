"""Attacks of Byzantine workers behind one interface: ``build(name, params)`` and
``available()``.

Built-ins: ``noise`` (Gaussian noise, the runtime's original adversary), ``reversed``,
``constant``, ``alie`` ("a little is enough") and ``ipm`` (inner-product manipulation); others
come from installed packages (entry-point group ``gradcode.attacks``) or ``register``. See
``gradcode.attacks.base`` for the interface and docs/guide/byzantine.md for their use.
"""

from gradcode.attacks.base import Attack, AttackError
from gradcode.attacks.registry import (
    DEFAULT_ATTACK,
    attack_class,
    available,
    build,
    register,
    source,
    unregister,
)
from gradcode.attacks.schedule import ADVERSARY_STREAM, AttackPlan, attack_rng, honest_floor

__all__ = [
    "ADVERSARY_STREAM",
    "DEFAULT_ATTACK",
    "Attack",
    "AttackError",
    "AttackPlan",
    "attack_class",
    "attack_rng",
    "available",
    "build",
    "honest_floor",
    "register",
    "source",
    "unregister",
]
