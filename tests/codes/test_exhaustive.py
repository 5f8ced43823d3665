"""Every scheme, every valid parameter combination with n <= 12, every straggler pattern.

Beyond n = 12, random patterns on sampled parameters up to n = 50, stopping at the n up to
which each scheme states (from measurement) that its decoding error stays below 1e-8.
"""

import random

import pytest

from gradcode.codes import available, build, scheme_class
from tests.codes.harness import SOUND_TOLERANCE, assert_exact

EXHAUSTIVE_MAX_N = 12


@pytest.mark.slow
@pytest.mark.parametrize("name", available())
def test_every_pattern_small_n(name):
    checked = 0
    for params in scheme_class(name).parameter_grid(EXHAUSTIVE_MAX_N):
        code = build(name, **params)
        assert code.n <= EXHAUSTIVE_MAX_N
        report = assert_exact(code, exhaustive=True)
        assert report.patterns_checked == report.patterns_total
        checked += 1
    assert checked > 0


@pytest.mark.slow
@pytest.mark.parametrize("name", available())
def test_random_patterns_up_to_50(name):
    cls = scheme_class(name)
    limit = min(50, cls.numerically_sound_up_to or 50)
    if limit <= EXHAUSTIVE_MAX_N:
        pytest.skip(f"{name} is numerically sound only up to n = {limit}")
    small = {repr(params) for params in cls.parameter_grid(EXHAUSTIVE_MAX_N)}
    candidates = [p for p in cls.parameter_grid(limit) if repr(p) not in small]
    if not candidates:
        pytest.skip(f"{name} has no parameters with n > {EXHAUSTIVE_MAX_N}")
    for params in random.Random(name).sample(candidates, min(12, len(candidates))):
        assert_exact(build(name, **params), exhaustive=False, limit=40, tolerance=SOUND_TOLERANCE)
