"""Verification harness: decode every claimed straggler pattern and compare with a plain sum.

The reference gradient is ``partials.sum(axis=0)`` computed here, never by the code under test,
passed through the code's ``reference`` (the identity, except for a code that decodes a
function of the sum: ``heterogeneous-poly`` computes ``h`` of the matrix sum by numpy matrix
powers, independently of its encoder and decoder). The support of every worker's encoding is
probed: each of its partials is fed alone, and the partitions whose partial changes some
message (from its value on all-zero partials: a non-linear code's need not be zero) must be
exactly ``partitions(worker)``. Codes with matrix messages get a square gradient length.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from gradcode.codes.base import GradientCode, NotDecodableError

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
) -> VerificationReport:
    """Check ``decode`` on the patterns ``code.patterns`` yields.

    ``length`` defaults to a prime so that message padding (``m > 1``) is exercised (codes
    with matrix messages: the next square, 49).
    """
    rng = np.random.default_rng(seed)
    length = gradient_length(code, length)
    total = code.count_patterns()
    if exhaustive is None:
        exhaustive = total <= EXHAUSTIVE_LIMIT
    failures: list[str] = []
    support_ok = True
    for worker in range(code.n):
        used = probe_support(code, worker, rng)
        if used != set(code.partitions(worker)):
            support_ok = False
            failures.append(
                f"worker {worker}: message depends on partitions {sorted(used)}, "
                f"declared {sorted(code.partitions(worker))}"
            )
    instance, partials = code.random_instance(rng, length)
    reference = code.reference(partials.sum(axis=0))
    scale = float(np.linalg.norm(reference)) or 1.0
    worst_error = 0.0
    worst_condition = 0.0
    checked = 0
    for pattern in code.patterns(exhaustive=exhaustive, rng=rng, limit=limit):
        checked += 1
        try:
            result = code.run_pattern(instance, pattern, rng)
        except NotDecodableError as error:
            failures.append(f"responders {sorted(pattern.responders, key=repr)}: {error}")
            continue
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
    )
