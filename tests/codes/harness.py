"""Shared assertions for scheme tests: exact decoding against an independent sum."""

from __future__ import annotations

import numpy as np

from gradcode.codes import GradientCode
from gradcode.codes.verify import VerificationReport, verify

#: exact decoding at n <= 12 (every pattern)
TOLERANCE = 1e-9
#: the numerical-soundness bound each scheme's ``numerically_sound_up_to`` is measured against
SOUND_TOLERANCE = 1e-8


def assert_exact(
    code: GradientCode,
    *,
    exhaustive: bool | None = None,
    limit: int = 300,
    seed: int = 0,
    tolerance: float = TOLERANCE,
) -> VerificationReport:
    """Every pattern decodes to the plain sum of the partials within ``tolerance``."""
    report = verify(code, exhaustive=exhaustive, limit=limit, seed=seed, tolerance=tolerance)
    assert report.support_ok, report.failures
    assert not report.failures, f"{code!r}: {report.failures[:3]}"
    assert report.patterns_checked > 0
    if code.exact:
        assert report.max_relative_error <= tolerance, (code, report.max_relative_error)
    return report


def independent_sum(partials: np.ndarray) -> np.ndarray:
    """Reference gradient by compensated summation, column by column."""
    import math

    return np.array([math.fsum(column) for column in partials.T])
