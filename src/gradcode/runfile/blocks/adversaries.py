"""The ``adversaries:`` block: which workers forge their messages, with which attack
(``gradcode.attacks``), when, and what becomes of a liar the decoder names."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, replace
from typing import Any

from gradcode.attacks import DEFAULT_ATTACK, AttackPlan
from gradcode.attacks import available as available_attacks
from gradcode.errors import UserError
from gradcode.runfile.section import ConfigError, Section
from gradcode.runfile.words import CAUGHT_POLICIES


@dataclass(frozen=True)
class AdversaryConfig:
    """The ``adversaries:`` block: ``attack`` with ``params`` at ``workers`` in iterations
    ``start, start + every, ...`` before ``stop``. The old form ``{workers, scale}`` is noise
    with ``params = {scale: ...}``; ``scale`` stays for it (and its fingerprint)."""

    workers: tuple[int, ...] = ()
    scale: float = 1.0
    attack: str = DEFAULT_ATTACK
    params: dict[str, Any] = field(default_factory=dict)
    start: int = 0
    stop: int | None = None
    every: int = 1
    #: what becomes of a worker the decoder names as a liar (``CAUGHT_POLICIES``)
    caught: str = "keep"
    #: workers that lie too, which the plan does not count against the code's ``a``
    unforeseen: tuple[int, ...] = ()
    #: a baseline without defence (no correcting code, no aggregator): the run is meant to
    #: be spoiled, which a plain ``adversaries`` block on such a code refuses to let happen
    undefended: bool = False

    def plan(self) -> AttackPlan:
        """Who attacks when, and with which attack (``gradcode.attacks.AttackPlan``): the
        planned liars and the unforeseen ones alike."""
        params = self.params if self._new_form() else {"scale": self.scale}
        liars = tuple(sorted({*self.workers, *self.unforeseen}))
        return AttackPlan(liars, self.attack, dict(params), self.start, self.stop, self.every)

    def _attack_fields(self) -> AdversaryConfig:
        """This block without the fields that say nothing of the attack itself."""
        return replace(self, caught="keep", unforeseen=())

    def _new_form(self) -> bool:
        return self._attack_fields() != AdversaryConfig(self.workers, self.scale)

    def fingerprint_fields(self) -> dict[str, Any]:
        """What enters the run's fingerprint: the old form's two fields alone when the block
        is in the old form, so checkpoints written before attacks existed still resume.
        ``caught`` never enters (like ``faults``, it decides who answers, not what an exact
        decoding computes), ``unforeseen`` only when it names a worker (blocks written
        before it existed keep their fingerprint)."""
        unforeseen = {"unforeseen": list(self.unforeseen)} if self.unforeseen else {}
        if not self._new_form():
            return {"workers": list(self.workers), "scale": self.scale} | unforeseen
        fields = asdict(self)
        del fields["caught"], fields["unforeseen"]
        if not self.undefended:  # absent before the key existed: those checkpoints resume
            del fields["undefended"]
        return fields | unforeseen


def parse(top: Section) -> AdversaryConfig:
    """The ``adversaries`` block of ``top``, its attack built once to check its name and
    parameters."""
    keys = ("workers", "scale", "attack", "params", "iterations", "caught", "unforeseen")
    section = top.section("adversaries", (*keys, "undefended"))
    workers = section.workers("workers")
    unforeseen = section.workers("unforeseen")
    both = sorted(set(workers) & set(unforeseen))
    if both:
        raise ConfigError(
            f"adversaries.unforeseen: worker {both[0]} is also in adversaries.workers"
        )
    if section.has("scale") and (section.has("attack") or section.has("params")):
        raise ConfigError(
            "adversaries.scale: the old form's noise scale; with attack or params give the "
            "attack's parameters in params (noise: params: {scale: ...})"
        )
    scale = section.number("scale", 1.0, positive=True)
    attack = section.string("attack", DEFAULT_ATTACK)
    params = section.mapping("params")
    schedule = section.section("iterations", ("start", "stop", "every"))
    start = schedule.integer("start", 0)
    stop = schedule.integer("stop", None, minimum=1)
    if stop is not None and stop <= start:
        raise ConfigError(
            f"adversaries.iterations.stop: must be > start (got start={start}, stop={stop})"
        )
    config = AdversaryConfig(
        workers=workers,
        scale=scale,
        attack=attack,
        params=params,
        start=start,
        stop=stop,
        every=schedule.integer("every", 1, minimum=1),
        caught=section.string("caught", "keep", choices=CAUGHT_POLICIES),
        unforeseen=unforeseen,
        undefended=section.boolean("undefended", False),
    )
    try:  # the attack's name and parameters, checked here where the key is known
        config.plan().attack()
    except UserError as error:
        key = "adversaries.params" if attack in available_attacks() else "adversaries.attack"
        raise ConfigError(f"{key}: {error}") from None
    return config
