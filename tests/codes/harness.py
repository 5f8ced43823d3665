"""Shared assertions for scheme tests: exact decoding against an independent sum."""

from __future__ import annotations

import numpy as np

from gradcode.codes import GradientCode
from gradcode.codes.verify import VerificationReport, verify

TOLERANCE = 1e-9


def assert_exact(
    code: GradientCode, *, exhaustive: bool | None = None, limit: int = 300, seed: int = 0
) -> VerificationReport:
    """Every pattern decodes to the plain sum of the partials within ``TOLERANCE``."""
    report = verify(code, exhaustive=exhaustive, limit=limit, seed=seed, tolerance=TOLERANCE)
    assert report.support_ok, report.failures
    assert not report.failures, f"{code!r}: {report.failures[:3]}"
    assert report.patterns_checked > 0
    if code.exact:
        assert report.max_relative_error <= TOLERANCE, (code, report.max_relative_error)
    return report


def independent_sum(partials: np.ndarray) -> np.ndarray:
    """Reference gradient by compensated summation, column by column."""
    import math

    return np.array([math.fsum(column) for column in partials.T])
