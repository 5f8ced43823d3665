"""binary-loads (paper 003, Sec. V): loads against brute force and independent formulas."""

import functools
import itertools
import math

import numpy as np
import pytest

from gradcode.analysis.binary_loads import N_MAX, compute
from gradcode.analysis.registry import run_analysis
from gradcode.codes.binary import BinaryCode, congruence_classes


@pytest.fixture(scope="module")
def analysis():
    return run_analysis("binary-loads", trials=1, seed=0)


@pytest.fixture(scope="module")
def rows(analysis):
    return {(row["n"], row["s"]): row for row in analysis.rows}


def balanced_loads(n, s, k=None):
    """Loads of a class-wise balanced split, written from Section III, not from the code."""
    k = n if k is None else k
    loads = [0] * n
    for c in range(s + 1):
        members = list(range(c, n, s + 1))
        for j, worker in enumerate(members):
            loads[worker] = k // len(members) + (j < k % len(members))
    return loads


@functools.cache
def balanced_spread(n, s):
    loads = balanced_loads(n, s)
    return max(loads) - min(loads)


def compositions(total, parts):
    """Every tuple of ``parts`` integers >= 1 summing to ``total``."""
    for cuts in itertools.combinations(range(1, total), parts - 1):
        yield tuple(b - a for a, b in zip((0, *cuts), (*cuts, total), strict=True))


def test_grid_is_every_pair_and_loads_come_from_the_assignment(rows):
    assert set(rows) == {(n, s) for n in range(2, N_MAX + 1) for s in range(1, n)}
    for (n, s), row in rows.items():
        if n % 7:
            continue
        matrix = BinaryCode(n, s).assignment_matrix()
        loads = matrix.sum(axis=1)
        for members in congruence_classes(n, s):
            assert np.all(matrix[list(members)].sum(axis=0) == 1)  # each class covers once
        assert (row["min_load"], row["max_load"]) == (loads.min(), loads.max())
        assert loads.tolist() == balanced_loads(n, s)


def test_row_invariants(rows):
    for (n, s), row in rows.items():
        ell, r = divmod(n, s + 1)
        assert (row["l"], row["r"], row["k"]) == (ell, r, n)
        assert row["total_load"] == n * (s + 1)
        assert row["mean_load"] == pytest.approx(row["ideal_load"]) == s + 1
        assert row["ideal_fraction"] == pytest.approx((s + 1) / n)
        assert row["max_fraction"] == row["max_load"] / n
        assert row["spread"] == row["max_load"] - row["min_load"]
        assert (row["spread"] == 0) == row["divisible"] == (r == 0)
        assert row["spread"] != 1
        assert row["spread_small_classes"] <= 1
        assert row["spread_large_classes"] in ("", 0, 1)
        assert row["at_most_3_apart"] == (row["spread"] <= 3)
        assert row["two_l_ge_s"] == (2 * ell >= s)
        # Proposition 3's bound, from the class sizes: the smallest class has l members
        # and, when r > 0, the largest l + 1
        bound = math.ceil(n / ell) - (n // (ell + 1) if r else n // ell)
        assert row["spread"] == row["spread_lower_bound"] == bound == row["spread_closed_form"]


@pytest.mark.parametrize("n", range(2, 10))
def test_spread_and_distances_are_the_least_over_all_class_partitioning_assignments(rows, n):
    for s in range(1, n):
        sizes = [len(members) for members in congruence_classes(n, s)]
        best_spread, best_l1, best_l2 = math.inf, math.inf, math.inf
        for choice in itertools.product(*(list(compositions(n, c)) for c in sizes)):
            loads = np.concatenate(choice)
            deviation = loads - (s + 1)
            best_spread = min(best_spread, loads.max() - loads.min())
            best_l1 = min(best_l1, np.abs(deviation).sum())
            best_l2 = min(best_l2, np.sqrt((deviation**2).sum()))
        row = rows[(n, s)]
        assert row["spread"] == best_spread
        assert row["distance_l1"] == pytest.approx(best_l1)
        assert row["distance_l2"] == pytest.approx(best_l2)


def test_lemma4_holds_on_its_regime_except_n7_s3(rows):
    checked = 0
    for (n, s), row in rows.items():
        ell, r = divmod(n, s + 1)
        if r == 0 or ell < s - 2:
            assert row["lemma4_spread"] == (0 if r == 0 else "")
            continue
        checked += 1
        if (ell == s - 1 and r == s) or (ell == s - 2 and r in {1, s - 1, s}):
            predicted = 3
        else:
            predicted = 2
        assert row["lemma4_spread"] == predicted
        assert row["lemma4_holds"] == (row["spread"] == predicted)
        assert row["lemma4_holds"] or (n, s) == (7, 3)
    assert checked == 236
    assert BinaryCode(7, 3).loads().tolist() == [4, 4, 4, 7, 3, 3, 3]
    assert rows[(7, 3)]["spread"] == 4


def test_at_most_3_apart_for_every_remainder_exactly_when_2l_ge_s(rows):
    # independent of the code and of the grid's n <= 60: every (l, s) with s, l <= 24
    for s in range(1, 25):
        for ell in range(1, 25):
            worst = max(balanced_spread(ell * (s + 1) + r, s) for r in range(1, s + 1))
            assert (worst <= 3) == (2 * ell >= s), (ell, s)
            if ell == 1 and s == 3:
                assert worst == 4
    for (n, s), row in rows.items():
        ell = n // (s + 1)
        spreads = [balanced_spread(ell * (s + 1) + r, s) for r in range(1, s + 1)]
        assert row["worst_spread_over_r"] == max(spreads)
        # per (n, s) 2l >= s is sufficient for spread <= 3
        if 2 * ell >= s:
            assert row["at_most_3_apart"]
    assert rows[(5, 3)]["at_most_3_apart"] and not rows[(5, 3)]["two_l_ge_s"]


def test_meta_summary_and_determinism(analysis):
    summary = analysis.meta["summary"]
    assert summary["pairs"] == len(analysis.rows) == 1770
    assert summary["divisible_pairs"] == sum(row["divisible"] for row in analysis.rows)
    for key in (
        "spread_equals_lower_bound",
        "spread_equals_closed_form",
        "uniform_iff_divisible",
        "at_most_3_for_every_r_iff_2l_ge_s",
    ):
        assert summary[key] is True, key
    assert summary["max_spread_within_class_sets"] == 1
    assert summary["lemma4_exceptions"] == [[7, 3]]
    assert analysis.meta["trials"] == 1 and analysis.meta["name"] == "binary-loads"
    again = compute(trials=5, seed=3, progress=lambda _: None)
    assert again.render_csv() == analysis.render_csv()
