"""Link rates with intervals (``gradcode.fit.links``): coverage, and what too few transfers give."""

from __future__ import annotations

import numpy as np
import pytest

from gradcode.fit.links import master_link, result_link
from gradcode.fit.shifted_exponential import FitError

RATE = 12.5e6  # bytes per second: 100 Mbit/s


def test_a_links_interval_covers_its_rate_in_most_seeds():
    covered = 0
    for seed in range(200):
        rng = np.random.default_rng(seed)
        # 40 results: the link's time per byte plus contention and polling (heavy-tailed)
        x = 1 / RATE + rng.exponential(0.3 / RATE, 40) * rng.choice([1, 5], 40)
        link = result_link(x, 0.95)
        assert link.rate == pytest.approx(1 / x.min()) and link.measured == 40
        low, high = link.interval
        assert low == link.rate <= high
        covered += low <= RATE <= high
    assert covered >= 180  # measured 199 of 200


def test_too_few_transfers_give_the_rate_without_an_interval_and_say_why():
    link = result_link([1e-7, 1.2e-7, 1.1e-7], 0.95)
    assert link.rate == pytest.approx(1e7) and link.interval is None
    assert "no interval" in link.reason and link.as_dict()["interval"] is None
    with pytest.raises(FitError, match="no measured transfer"):
        result_link([], 0.95)


def test_the_master_ports_median_interval_is_distribution_free():
    covered = 0
    for seed in range(400):
        rates = np.random.default_rng(seed).lognormal(np.log(2.5e7), 0.3, 30)
        low, high = master_link(rates, 0.95).interval
        covered += low <= 2.5e7 <= high
    assert covered >= 0.95 * 400 - 10
    assert master_link([1.0, 2.0, 3.0], 0.95).interval is None
