"""Paper 001's schemes past one machine (gradcode.analysis.scaling): the tree rule, the spec
and the predictions against ``gradcode simulate``."""

from fractions import Fraction

import pytest
import yaml

from gradcode.analysis import scaling
from gradcode.cli import main
from gradcode.codes.coded_reduce import tree_size
from gradcode.errors import UserError
from gradcode.sim.table import read_csv


def test_the_rule_gives_the_papers_trees():
    """Paper 001 sizes its tree to the cluster: (4, 3) with s = 1 for N = 84 (alpha = 1/4)
    and (12, 2) with s = 5 for N = 156 (alpha = 5/12)."""
    assert scaling.paper_tree(84) == scaling.TreeShape(4, 3, 1)
    assert scaling.paper_tree(156, Fraction(5, 12)) == scaling.TreeShape(12, 2, 5)


def test_the_trees_past_one_machine():
    one, ten = scaling.paper_tree(1000), scaling.paper_tree(10000)
    assert (one, one.workers) == (scaling.TreeShape(31, 2, 8), 992)
    assert (ten, ten.workers) == (scaling.TreeShape(99, 2, 25), 9900)
    # Theorem 1's load of the tree, the one CR.Allocate gives every node
    assert one.load == 1 / (Fraction(31, 9) + Fraction(31, 9) ** 2)


@pytest.mark.parametrize("workers", [6, 7, 14, 15, 39, 40, 100, 121, 399, 2047])
def test_no_regular_tree_fits_more_workers(workers):
    chosen = scaling.paper_tree(workers)
    assert chosen.L >= 2 and chosen.workers <= workers
    every = [(n, L) for L in range(2, 12) for n in range(2, workers) if tree_size(n, L) <= workers]
    best = max(tree_size(n, L) for n, L in every)
    assert chosen.workers == best
    # a tie goes to the deeper tree: 14 = (2, 3) only; 2046 = (2, 10) beside (45, 2) = 2070
    assert chosen.L == max(L for n, L in every if tree_size(n, L) == best)


def test_too_few_workers_is_one_line():
    with pytest.raises(UserError, match=r"paper_tree: needs an integer number of workers >= 6"):
        scaling.paper_tree(5)


def test_gc_is_left_out_at_ten_thousand_and_says_why():
    labels = [entry["label"] for entry in scaling.schemes(10000)]
    assert labels == ["UMW", "RAR", "SGD", "CR"]
    assert "O(N S^3)" in scaling.not_run(10000)["GC"]
    assert [entry["label"] for entry in scaling.schemes(1000)] == ["UMW", "GC", "RAR", "SGD", "CR"]


def test_a_spec_of_chosen_schemes_has_those_and_no_others():
    """The simulator's cost is compared across sizes on the same schemes (issue 48)."""
    common = ("UMW", "SGD", "RAR", "CR")
    for workers in (84, 1000, 10000):
        labels = [entry["label"] for entry in scaling.spec(workers, 0.0, common)["schemes"]]
        assert labels == ["UMW", "RAR", "SGD", "CR"]
    assert [entry["label"] for entry in scaling.schemes(1000, ("GC",))] == ["GC"]
    assert scaling.schemes(10000, ("GC",)) == []
    with pytest.raises(ValueError, match="unknown labels"):
        scaling.schemes(84, ("GD",))


@pytest.fixture(scope="module")
def n84():
    return scaling.predict(84, (0.0, 0.002), trials=64, seed=3)


def test_predictions_are_what_gradcode_simulate_gives(n84, tmp_path):
    spec_file = tmp_path / "n84.yaml"
    spec_file.write_text(yaml.safe_dump(scaling.spec(84, 0.002)))
    out = tmp_path / "n84.csv"
    argv = ["simulate", str(spec_file), "--trials", "64", "--seed", "3", "--quiet"]
    assert main([*argv, "--out", str(out)]) == 0
    cli = {row["label"]: float(row["mean_time"]) for row in read_csv(out)}
    mine = {row["scheme"]: row["mean_time"] for row in n84 if row["latency_ms"] == 2}
    assert mine == pytest.approx(cli, rel=1e-9)


def test_the_model_pays_latency_as_the_topologies_say(n84):
    """On the same draws, the ring pays 2 (N - 1) latencies more, a flat scheme two (the
    model out, the result back), the (4, 3) tree between 2 L = 6 and about 4 L."""
    at = {(row["latency_ms"], row["scheme"]): row["mean_time"] for row in n84}
    extra = {scheme: at[2.0, scheme] - at[0.0, scheme] for scheme in ("RAR", "UMW", "CR")}
    assert extra["RAR"] == pytest.approx(2 * 83 * 0.002, rel=1e-9)
    assert extra["UMW"] == pytest.approx(2 * 0.002, rel=1e-6)
    assert 6 * 0.002 * (1 - 1e-6) <= extra["CR"] <= 12 * 0.002


def test_cr_times_are_its_trees_transfers(n84):
    """N = 84 on 100 Mbit/s links: the (4, 3) tree moves the model down three layers of 4
    transfers of tc = 0.05 s (0.6 s), and the results up: every parent needs 3 of its 4
    children, whose results share its link, so between 3 and 4 transfers a layer (0.45 to
    0.6 s) plus the nodes' computation; UMW moves 84 models and 84 results through the
    master's link (8.4 s)."""
    at = {(row["latency_ms"], row["scheme"]): row for row in n84}
    assert 1.05 < at[0.0, "CR"]["mean_time"] < 1.25
    assert 8.4 < at[0.0, "UMW"]["mean_time"] < 8.45
    assert at[0.0, "UMW"]["cr_speedup"] == pytest.approx(
        at[0.0, "UMW"]["mean_time"] / at[0.0, "CR"]["mean_time"]
    )
    assert at[0.0, "CR"]["tree"] == "(4, 3), s = 1" and at[0.0, "CR"]["used_workers"] == 84


def test_other_depths_and_cr_alone_on_them():
    assert scaling.trees_by_depth(84) == [
        scaling.TreeShape(8, 2, 2),
        scaling.TreeShape(4, 3, 1),
        scaling.TreeShape(2, 5, 1),
    ]
    assert [t.L for t in scaling.trees_by_depth(10000)] == [2, 3, 4, 5, 6, 8, 12]
    assert all(2 * t.workers >= 10000 for t in scaling.trees_by_depth(10000))
    (row,) = scaling.predict_tree(84, scaling.TreeShape(2, 5, 1), (0.0,), trials=8)
    assert row["used_workers"] == 62 and row["tree"] == "(2, 5), s = 1" and row["data"] == 6552
    with pytest.raises(UserError, match=r"predict_tree: \(9, 2\), s = 2 has 90 > 84 workers"):
        scaling.predict_tree(84, scaling.TreeShape(9, 2, 2), (0.0,), trials=8)


def test_gradcode_analyze_writes_the_table(tmp_path, monkeypatch):
    monkeypatch.setattr(scaling, "WORKERS", (84,))
    monkeypatch.setattr(scaling, "LATENCIES", (0.0, 0.01))
    out = tmp_path / "scaling.csv"
    assert (
        main(["analyze", "coded-reduce-scaling", "--trials", "4", "--quiet", "--out", str(out)])
        == 0
    )
    rows = read_csv(out)
    assert [(r["latency_ms"], r["scheme"]) for r in rows[:5]] == [
        ("0", s) for s in ("UMW", "GC", "RAR", "SGD", "CR")
    ]
    assert len(rows) == 10 and {r["trials"] for r in rows} == {"4"}
