"""Analysis heterogeneous-comm-cost (paper 004, Theorem 1) against independent counts."""

import itertools
from fractions import Fraction

import numpy as np
import pytest

from gradcode.analysis import heterogeneous_comm_cost as cost
from gradcode.codes import build
from gradcode.codes.placements import cyclic_placement, random_placement


def brute_replication(placement):
    k = 1 + max(p for parts in placement for p in parts)
    return min(sum(part in parts for parts in placement) for part in range(k))


@pytest.fixture
def small_grid(monkeypatch):
    monkeypatch.setattr(cost, "N", 6)
    monkeypatch.setattr(cost, "K_RANDOM", 8)
    monkeypatch.setattr(cost, "STRAGGLERS", (0, 1, 2))
    monkeypatch.setattr(cost, "ADVERSARIES", (0, 1))


def test_fig2_row_is_the_papers_example():
    # Sec. III-B: r = 3, s = 1, every worker sends d / 2 and any 4 of the 5 workers suffice
    row = cost.row_for("paper Fig. 2", cost.FIG2, 1, 0, 10, np.random.default_rng(0))
    assert (row["r"], row["m"], row["responders_needed"]) == (3, 2, 4)
    assert row["optimum_cost"] == row["achieved_cost"] == 0.5 and row["matches"]
    assert row["exhaustive"] and row["patterns"] == 5 and row["exact_fraction"] == 1.0
    assert (row["load_min"], row["load_max"]) == (1, 5)


@pytest.mark.parametrize(
    "placement, s, a",
    [
        (random_placement(9, 12, 5, seed=3), 1, 1),
        (random_placement(10, 10, 6, seed=4, weights=[5, 5] + [1] * 8), 0, 2),
        (cyclic_placement(8, 4), 3, 0),
    ],
)
def test_achieved_cost_is_theorem1_with_r_counted_by_brute_force(placement, s, a):
    r = brute_replication(placement)
    row = cost.row_for("x", placement, s, a, 12, np.random.default_rng(1))
    assert row["r"] == r
    assert Fraction(row["achieved_cost"]).limit_denominator(100) == Fraction(1, r - s - 2 * a)
    assert row["matches"] and row["refuses_m_above_optimum"] and row["holders_full_rank"]
    assert row["responders_needed"] == len(placement) - s
    assert row["exact_fraction"] == 1.0 and row["failed"] == 0
    assert row["max_rel_error"] < 1e-9
    if a:
        assert row["liars_named_fraction"] == 1.0
    assert row["load_per_iteration"] == pytest.approx((len(placement) - s) / (r - s - 2 * a))


def test_infeasible_settings_are_refused():
    placement = cyclic_placement(7, 3)
    row = cost.row_for("cyclic", placement, 1, 1, 5, np.random.default_rng(0))
    assert row["feasible"] is False and row["code_refuses"] is True
    assert row["optimum_cost"] is None and "achieved_cost" not in row


def test_holder_rank_matches_an_exhaustive_rank_computation():
    code = build("heterogeneous", placement=random_placement(8, 10, 5, seed=2), s=1)
    ok, checked = cost.holder_rank(code, np.random.default_rng(0))
    holders = code.assignment_matrix()
    part = int(np.argmin(holders.sum(axis=0)))
    owners = np.flatnonzero(holders[:, part])
    encoding = code.encoding_matrix()
    subsets = list(itertools.combinations(owners, code.m))
    ranks = [np.linalg.matrix_rank(encoding[list(c), part, :]) for c in subsets]
    assert checked == len(subsets) and ok == all(rank == code.m for rank in ranks) and ok


def test_the_grid_follows_theorem1(small_grid):
    result = cost.compute(trials=200, seed=5, progress=lambda line: None)
    rows = result.rows
    grid = [row for row in rows if row["placement"] != "paper Fig. 2"]
    assert len(grid) == 3 * 6 * 3 * 2
    for row in grid:
        feasible = row["r"] > row["s"] + 2 * row["a"]
        assert row["feasible"] is feasible and row["code_refuses"] is (not feasible)
        if feasible:
            assert row["achieved_cost"] == 1 / (row["r"] - row["s"] - 2 * row["a"])
            assert row["exact_fraction"] == 1.0
        if row.get("ye_abbe_m") is not None:
            assert row["ye_abbe_m"] == row["m"]
    # the target replication is what every placement family delivers
    assert sorted({(row["placement"], row["r"]) for row in grid}) == sorted(
        (family, r) for family in ("cyclic", "random", "speed-weighted") for r in range(1, 7)
    )
    again = cost.compute(trials=200, seed=5, progress=lambda line: None)
    assert again.render_csv() == result.render_csv()
