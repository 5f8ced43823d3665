"""Theorem 1 of paper 001: r_CR exactly, and the load our coded-reduce code allocates."""

import csv
from fractions import Fraction

import numpy as np
import pytest

from gradcode.analysis.coded_reduce_loads import (
    PAPER_TREES,
    compute,
    grid,
    optimal_load,
    subtree_sizes,
)
from gradcode.codes import build
from gradcode.codes.coded_reduce import r_cr, tree_size


@pytest.fixture(scope="module")
def result():
    return compute(trials=1, seed=0, progress=lambda line: None)


def _rows(result, n, L, s):
    return [
        row
        for row in result.rows
        if row["section"] == "grid" and (row["n"], row["L"], row["s"]) == (n, L, s)
    ]


def test_the_papers_numbers():
    # Example 2: a (3, 2)-tree with s = 1 gives every node 4/15 of the data
    assert optimal_load(3, 2, 1) == Fraction(4, 15)
    # the N = 84 and N = 156 trees of Section IV, by hand: q = 2 -> 1 / (2 + 4 + 8)
    assert optimal_load(4, 3, 1) == Fraction(1, 14)
    assert optimal_load(12, 2, 5) == Fraction(1, 2 + 4)
    assert optimal_load(12, 2, 3) == Fraction(1, 3 + 9)
    assert all(tree in grid() for tree in PAPER_TREES)


def test_formula_matches_the_library_and_the_appendix_recursion():
    for n, L, s in grid():
        r = optimal_load(n, L, s)
        assert r == r_cr(n, L, s)
        # eq. (13): a leaf keeps exactly its subtree's data
        assert subtree_sizes(n, L, s)[-1] == r
        # L = 1 is Tandon's gradient code over n workers, s = 0 the uncoded scheme
        if L == 1:
            assert r == Fraction(s + 1, n)
        if s == 0:
            assert r == Fraction(1, tree_size(n, L))


def test_every_layer_gets_r_cr_and_the_subtrees_of_appendix_c(result):
    rows = [row for row in result.rows if row["section"] == "grid"]
    assert len({(row["n"], row["L"], row["s"]) for row in rows}) == len(grid())
    assert len(rows) == sum(L for _, L, _ in grid())
    for row in rows:
        assert row["load_is_r_cr"] and row["load_min"] == row["load_max"] == row["r_cr"]
        assert row["subtree_is_paper"] and row["subtree_max"] == row["subtree_paper"]
        # eq. (14)-(15) with equality: the allocation wastes nothing
        assert row["replication_min"] == row["replication_max"] == row["s"] + 1


def test_allocation_read_independently_from_the_code():
    """Eq. (15) with equality, from the code's own partitions and subtree supports."""
    for n, L, s in [(3, 2, 1), (4, 3, 1), (12, 2, 5), (5, 3, 2), (4, 2, 2)]:
        code = build("coded-reduce", n=n, L=L, s=s, inner="crc")
        r = optimal_load(n, L, s)
        size = {
            v: Fraction(int(np.count_nonzero(code.subtree_coefficients(v))), code.k)
            for v in range(code.n)
        }
        size[-1] = Fraction(1)
        for v in range(code.n):
            assert Fraction(len(set(code.partitions(v))), code.k) == r
        for parent in code.parents():
            own = Fraction(0) if parent == -1 else r
            children = code.children(parent)
            assert sum(size[c] for c in children) == (s + 1) * (size[parent] - own)


def test_baselines_and_remark2(result):
    (row,) = _rows(result, 12, 2, 5)[:1]
    assert row["S"] == 65 and row["r_gc"] == "11/26" and row["r_umw"] == "1/156"
    assert row["gc_over_cr"] == pytest.approx(Fraction(11, 26) / Fraction(1, 6))
    (n84,) = _rows(result, 4, 3, 1)[:1]
    assert n84["reduction_vs_L1"] == 7.0  # q = 2: 1 + 2 + 4
    remark2 = [row for row in result.rows if row["section"] == "remark2" and row["L"] == 3]
    reductions = [row["reduction_vs_L1"] for row in remark2]
    assert reductions == sorted(reductions) and reductions[-1] < 7
    assert reductions[-1] == pytest.approx(7, abs=0.02)
    for row in remark2:
        q = Fraction(row["n"], row["s"] + 1)
        assert row["reduction_vs_L1"] == pytest.approx(float(1 + q + q * q))


def test_written_table_has_plain_fractions(result, tmp_path):
    path = tmp_path / "loads.csv"
    result.write(path)
    with path.open() as stream:
        rows = list(csv.DictReader(stream))
    example = [r for r in rows if (r["n"], r["L"], r["s"], r["layer"]) == ("3", "2", "1", "2")]
    assert example[0]["r_cr"] == "4/15" and example[0]["load_max"] == "4/15"
    assert example[0]["load_is_r_cr"] == "true"
    assert (tmp_path / "loads.csv.json").exists()
