"""Paper 000, Table 3: every cell within 0.5 % of the paper, and the paper's conclusions."""

import math

import pytest

from gradcode.sim import load_spec, preset, simulate
from gradcode.timing.exact import ye_abbe_expected_time

TRIALS = 200_000


@pytest.fixture(scope="module")
def table3():
    spec = load_spec(preset("ye-abbe-table3"), origin="preset")
    rows = simulate(spec, trials=TRIALS, seed=2018)
    return {(row.params["d"], row.params["m"]): row for row in rows}


def test_all_36_cells_within_half_a_percent_of_the_paper(table3):
    assert len(table3) == 36
    for (d, m), row in table3.items():
        assert row.params["s"] == d - m and row.workers == 8 and row.trials == TRIALS
        error = abs(row.mean_time / row.reference_time - 1)
        assert error < 0.005, (d, m, row.mean_time, row.reference_time)


def test_monte_carlo_agrees_with_the_exact_expectation(table3):
    """The simulation's own uncertainty: the exact mean lies within 4.5 standard errors."""
    for (d, m), row in table3.items():
        exact = ye_abbe_expected_time(8, d, m, lambda1=0.8, t1=1.6, lambda2=0.1, t2=6)
        standard_error = row.std_time / math.sqrt(row.trials)
        assert abs(row.mean_time - exact) < 4.5 * standard_error, (d, m)
        assert row.ci_low < row.mean_time < row.ci_high
        assert row.ci_high - row.ci_low == pytest.approx(2 * 1.96 * standard_error, rel=1e-3)


def test_the_papers_conclusions(table3):
    best = min(table3, key=lambda cell: table3[cell].mean_time)
    assert best == (4, 3)
    optimum = table3[best].mean_time
    uncoded = table3[1, 1].mean_time
    best_m1 = min(row.mean_time for (d, m), row in table3.items() if m == 1)
    assert min((d for d, m in table3 if m == 1), key=lambda d: table3[d, 1].mean_time) == 8
    assert round(100 * (1 - optimum / uncoded)) == 41  # "outperforms the uncoded scheme by 41%"
    assert round(100 * (1 - optimum / best_m1)) == 11  # "... Tandon et al. by 11%"


def test_communication_load_is_n_minus_s_messages_of_one_mth(table3):
    for (d, m), row in table3.items():
        assert row.messages == 8 - (d - m)
        assert row.vectors == pytest.approx((8 - (d - m)) / m)
        assert row.floats == (8 - (d - m)) * math.ceil(343474 / m)
