"""Verification harness: decode every claimed straggler pattern and compare with a plain sum.

The reference gradient is ``partials.sum(axis=0)`` computed here, never by the code under test,
passed through the code's ``reference`` (the identity, except for a code that decodes a
function of the sum: ``heterogeneous-poly`` computes ``h`` of the matrix sum by numpy matrix
powers, independently of its encoder and decoder). The support of every worker's encoding is
probed: each of its partials is fed alone, and the partitions whose partial changes some
message (from its value on all-zero partials: a non-linear code's need not be zero) must be
exactly ``partitions(worker)``. Codes with matrix messages get a square gradient length.

Liars: a code that corrects adversaries yields patterns with corrupted responders; their
messages get Gaussian noise (``pattern_messages``) or, with ``attack``, what that
``gradcode.attacks`` attack forges from the honest messages of the pattern's other responders.
Either way the decode must be exact and, for a code declaring ``corrects_adversaries``, name
exactly the lying workers in ``DecodeResult.adversaries``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from gradcode.codes.base import DecodeResult, GradientCode, NotDecodableError, Pattern

if TYPE_CHECKING:
    from gradcode.attacks import Attack

#: exhaustive by default when a code has at most this many patterns
EXHAUSTIVE_LIMIT = 20_000


@dataclass
class VerificationReport:
    scheme: str
    params: dict[str, Any]
    exact: bool
    exhaustive: bool
    patterns_checked: int
    patterns_total: int
    max_relative_error: float
    worst_condition_number: float
    loads: list[int]
    message_fraction: float
    messages_per_worker: list[int]
    support_ok: bool
    failures: list[str] = field(default_factory=list)
    #: the attack the liars ran (``{"name", "params"}``), ``None`` for the default noise
    attack: dict[str, Any] | None = None
    #: patterns with liars, and of those the ones whose liars were named exactly
    patterns_with_liars: int = 0
    liars_named: int = 0

    def passed(self, tolerance: float = 1e-9) -> bool:
        if not self.support_ok or self.failures:
            return False
        return not self.exact or self.max_relative_error <= tolerance

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def gradient_length(code: GradientCode, length: int) -> int:
    """``length``, or the smallest square ``d * d >= length`` for a code whose messages are
    ``d x d`` matrices (``capabilities.message == "matrix"``)."""
    if code.capabilities.message == "matrix":
        side = math.isqrt(max(length, 1) - 1) + 1
        return side * side
    return length


def probe_support(code: GradientCode, worker: int, rng: np.random.Generator) -> set[int]:
    """Partitions of ``worker`` whose partial changes at least one of its messages."""
    parts = code.partitions(worker)
    width = gradient_length(code, 8)
    baseline = code.encode_all(worker, np.zeros((len(parts), width)))
    used: set[int] = set()
    for row, partition in enumerate(parts):
        partials = np.zeros((len(parts), width))
        partials[row] = rng.standard_normal(width)
        messages = code.encode_all(worker, partials)
        if any(np.any(messages[key] != baseline[key]) for key in messages):
            used.add(partition)
    return used


def verify(
    code: GradientCode,
    *,
    exhaustive: bool | None = None,
    limit: int = 500,
    length: int = 37,
    seed: int = 0,
    tolerance: float = 1e-9,
    attack: Attack | None = None,
) -> VerificationReport:
    """Check ``decode`` on the patterns ``code.patterns`` yields.

    ``length`` defaults to a prime so that message padding (``m > 1``) is exercised (codes
    with matrix messages: the next square, 49). ``attack``: what the liars send (see the
    module docstring); refused in one line (``AttackError``) for a code that corrects no
    adversaries or whose decoding leaves the attack too few honest messages.
    """
    if attack is not None:
        refuse_attack(code, attack)
    rng = np.random.default_rng(seed)
    length = gradient_length(code, length)
    total = code.count_patterns()
    if exhaustive is None:
        exhaustive = total <= EXHAUSTIVE_LIMIT
    failures = _support_failures(code, rng)
    support_ok = not failures
    instance, partials = code.random_instance(rng, length)
    reference = code.reference(partials.sum(axis=0))
    scale = float(np.linalg.norm(reference)) or 1.0
    worst_error = 0.0
    worst_condition = 0.0
    checked = with_liars = named = 0
    names_liars = code.capabilities.corrects_adversaries
    for pattern in code.patterns(exhaustive=exhaustive, rng=rng, limit=limit):
        checked += 1
        # liars whose forged message is (nearly) their honest one lied in name only: the
        # decoder need not name them (ALIE forges the honest value when the honest agree)
        visible = pattern.corrupted
        try:
            if attack is not None and pattern.corrupted:
                result, visible = _attacked(code, instance, pattern, attack, rng)
            else:
                result = code.run_pattern(instance, pattern, rng)
        except NotDecodableError as error:
            failures.append(f"responders {sorted(pattern.responders, key=repr)}: {error}")
            continue
        if names_liars and pattern.corrupted:
            with_liars += 1
            wrong = _naming_failure(code, pattern, visible, result)
            named += wrong is None
            if wrong is not None and len(failures) < 20:
                failures.append(wrong)
        error = float(np.linalg.norm(result.gradient - reference)) / scale
        worst_error = max(worst_error, error)
        condition = result.condition
        if not math.isnan(condition):
            worst_condition = max(worst_condition, condition)
        if code.exact and not error <= tolerance and len(failures) < 20:
            failures.append(
                f"responders {sorted(pattern.responders, key=repr)}: relative error {error:.3g}"
            )
    return VerificationReport(
        scheme=code.name,
        params=code.params(),
        exact=code.exact,
        exhaustive=exhaustive,
        patterns_checked=checked,
        patterns_total=total,
        max_relative_error=worst_error,
        worst_condition_number=worst_condition if worst_condition else float("nan"),
        loads=[int(v) for v in code.loads()],
        message_fraction=1.0 / code.m,
        messages_per_worker=[len(code.message_keys(i)) for i in range(code.n)],
        support_ok=support_ok,
        failures=failures,
        attack=None if attack is None else {"name": attack.name, "params": attack.params()},
        patterns_with_liars=with_liars,
        liars_named=named,
    )


def _support_failures(code: GradientCode, rng: np.random.Generator) -> list[str]:
    """One line per worker whose messages depend on other partitions than it declares."""
    failures = []
    for worker in range(code.n):
        used = probe_support(code, worker, rng)
        if used != set(code.partitions(worker)):
            failures.append(
                f"worker {worker}: message depends on partitions {sorted(used)}, "
                f"declared {sorted(code.partitions(worker))}"
            )
    return failures


def _naming_failure(
    code: GradientCode, pattern: Pattern, visible: frozenset, result: DecodeResult
) -> str | None:
    """What is wrong with the liars ``result`` named (``None``: every visible liar, and no
    honest worker)."""
    liars = sorted({int(code.worker_of(key)) for key in pattern.corrupted})
    must = {int(code.worker_of(key)) for key in visible}
    caught = sorted({int(code.worker_of(key)) for key in result.adversaries})
    if must <= set(caught) <= set(liars):
        return None
    return f"responders {sorted(pattern.responders, key=repr)}: liars {liars}, named {caught}"


def refuse_attack(code: GradientCode, attack: Attack) -> None:
    """``AttackError`` (one line) when ``code``'s liars cannot run ``attack``: the code
    corrects no adversaries, or it decodes from so few responders (``min_responders``, of
    which ``a`` lie) that the attack lacks the honest messages it needs."""
    from gradcode.attacks import AttackError, honest_floor

    if not code.capabilities.corrects_adversaries or code.a == 0:
        raise AttackError(
            f"attack {attack.name}: {code.name} {code.params()} corrects no adversaries "
            f"(a = {code.a}): there are no liars to run it"
        )
    honest = honest_floor(code.min_responders(), code.a)
    problem = attack.refusal(honest)
    if problem:
        raise AttackError(
            f"{problem}: {code.name} decodes from {code.min_responders()} responders, "
            f"a = {code.a} of them liars"
        )


#: a forged message this far (relative) from the liar's honest one must be named
VISIBLE_LIE = 1e-6


def _attacked(
    code: GradientCode, instance: Any, pattern: Pattern, attack: Attack, rng: np.random.Generator
) -> tuple[DecodeResult, frozenset]:
    """Decode ``pattern`` with its corrupted messages forged by ``attack`` from the honest
    messages of the pattern's other responders; also the keys whose forgery is visible (more
    than ``VISIBLE_LIE`` from the honest message)."""
    honest = code.pattern_messages(instance, Pattern(pattern.responders), rng)
    liars = sorted(pattern.corrupted, key=repr)
    forged = attack.apply(honest, liars, rng)
    visible = frozenset(
        key
        for key in liars
        if np.linalg.norm(forged[key] - honest[key])
        > VISIBLE_LIE * max(float(np.linalg.norm(honest[key])), 1e-300)
    )
    return code.decode_result(forged, code.instance_length(instance)), visible
