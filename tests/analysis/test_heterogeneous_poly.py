"""Analysis heterogeneous-poly (paper 004, Sec. IV, Theorem 2) against independent counts."""

import numpy as np
import pytest

from gradcode.analysis import heterogeneous_poly as poly
from gradcode.codes.placements import cyclic_placement, random_placement


def brute_least_r(n, s, a, q):
    """The least r with N - s >= (N - r) q + 2a + 1, by search (eq. 23)."""
    return next((r for r in range(1, n + 1) if n - s >= (n - r) * q + 2 * a + 1), n + 1)


def test_theorem_rows_are_eq23_by_search():
    rows = poly.theorem_rows()
    assert len(rows) == len(poly.THEOREM_N) * len(poly.THEOREM_SA) * 6
    for row in rows:
        n, s, a, q = row["n"], row["s"], row["a"], row["deg_h"]
        least = brute_least_r(n, s, a, q)
        if least <= n:
            assert row["r_needed"] == least and row["feasible"]
            assert row["responders_needed"] == (n - least) * q + 2 * a + 1 <= n - s
        else:
            assert not row["feasible"]


def test_placement_row_finds_the_theorem_r_on_a_full_ladder():
    n = 8
    ladder = [(r, cyclic_placement(n, r)) for r in range(1, n + 1)]
    rng = np.random.default_rng(0)
    for q, s, a in [(1, 1, 1), (2, 0, 1), (3, 1, 0), (2, 2, 1)]:
        row = poly.placement_row("cyclic", ladder, q, s, a, 6, rng)
        least = brute_least_r(n, s, a, q)
        assert row["r_needed"] == least
        assert row["achieved_r"] == least and row["matches"]
        assert row["refused_below_r_needed"] and row["accepted_from_r_needed"]
        assert row["message_numbers"] == poly.SIDE**2
        assert row["exact_fraction"] == 1.0 and row["failed"] == 0
        assert row["max_rel_error"] < 1e-9
        if a:
            assert row["liars_named_fraction"] == 1.0


def test_infeasible_settings_build_nothing():
    ladder = [(r, random_placement(5, 7, r, seed=r)) for r in range(1, 6)]
    row = poly.placement_row("random", ladder, 2, 3, 1, 3, np.random.default_rng(1))
    assert row["r_needed"] > 5 and not row["feasible"]
    assert row["achieved_r"] is None and row["refused_below_r_needed"]


def test_direct_is_h_of_the_sum():
    rng = np.random.default_rng(2)
    partials = rng.standard_normal((3, 9))
    total = partials.sum(axis=0).reshape(3, 3)
    expected = 2.0 * np.eye(3) - total + 0.5 * total @ total @ total
    np.testing.assert_allclose(poly.direct([2.0, -1.0, 0.0, 0.5], partials), expected.reshape(-1))
    assert poly.polynomial(3) == pytest.approx((1.0, 1.0, 0.5, 1.0 / 6.0))


def test_compute_small(monkeypatch):
    monkeypatch.setattr(poly, "THEOREM_N", (6,))
    monkeypatch.setattr(poly, "DEGREES", (1, 2))
    monkeypatch.setattr(poly, "STRAGGLERS", (0, 1))
    monkeypatch.setattr(poly, "ADVERSARIES", (0, 1))
    monkeypatch.setattr(poly, "ERROR_N", (6, 10))
    result = poly.compute(trials=100, seed=0, progress=lambda _: None)
    parts = {row["part"] for row in result.rows}
    assert parts == {"theorem", "placements", "error"}
    placements = [row for row in result.rows if row["part"] == "placements"]
    full = [row for row in placements if row["placement"] != "paper Fig. 2" and row["feasible"]]
    assert full and all(row["matches"] for row in full)
    assert all(row["refused_below_r_needed"] for row in placements)
    errors = [row for row in result.rows if row["part"] == "error"]
    assert len(errors) == 3 * 2 and max(row["max_rel_error"] for row in errors) < 1e-9
    assert result.meta["paper"].startswith("004")
