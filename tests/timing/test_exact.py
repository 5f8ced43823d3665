"""Closed forms against each other and against the paper's Table 3."""

import numpy as np
import pytest

from gradcode.sim.presets import TABLE3
from gradcode.timing.exact import (
    harmonic,
    hypoexponential_cdf,
    order_statistic_mean,
    shifted_exponential_order_mean,
    ye_abbe_expected_time,
)


def test_harmonic():
    assert harmonic(0) == 0 and harmonic(3) == pytest.approx(11 / 6)


@pytest.mark.parametrize("n, r", [(1, 1), (8, 3), (8, 8), (40, 31)])
def test_quadrature_matches_renyi_for_exponentials(n, r):
    rate = 2.5
    numeric = order_statistic_mean(lambda t: 1 - np.exp(-rate * t), n, r)
    assert numeric == pytest.approx(shifted_exponential_order_mean(0.0, rate, n, r), rel=1e-9)


def test_hypoexponential_cdf_is_the_convolution():
    rng = np.random.default_rng(1)
    samples = rng.exponential(1 / 0.3, 400_000) + rng.exponential(1 / 1.1, 400_000)
    for t in (0.5, 2.0, 6.0):
        assert hypoexponential_cdf(0.3, 1.1)(t) == pytest.approx((samples <= t).mean(), abs=3e-3)
    # equal rates: the Erlang-2 limit of the general formula
    assert hypoexponential_cdf(1.0, 1.0)(2.0) == pytest.approx(
        hypoexponential_cdf(1.0, 1.0 + 1e-7)(2.0), rel=1e-6
    )


def test_every_table3_cell_is_the_exact_expectation():
    """The paper printed exact expectations: all 36 agree to its four decimals."""
    for m, row in TABLE3.items():
        for d, paper in zip(range(m, 9), row, strict=True):
            exact = ye_abbe_expected_time(8, d, m, lambda1=0.8, t1=1.6, lambda2=0.1, t2=6)
            assert abs(exact - paper) <= 5.1e-5, (d, m, exact, paper)


def test_rank_is_checked():
    with pytest.raises(ValueError, match="1 <= r <= n"):
        shifted_exponential_order_mean(0, 1, 3, 4)
