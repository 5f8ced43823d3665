"""The Byzantine aggregation analysis: exact rows where the codes promise exactness, robust
aggregators ahead of no defence under large attacks, refusals as rows with their reasons,
installed attacks and aggregators included, the same table for the same seed."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from gradcode import aggregators, attacks
from gradcode.aggregators import Aggregate, Aggregator
from gradcode.analysis import byzantine_aggregation as analysis
from gradcode.analysis.base import read_analysis
from gradcode.cli import main
from tests.attacks.test_attacks import Greedy

PATTERNS = 4


def quiet(_: str) -> None:
    pass


@pytest.fixture(scope="module")
def rows():
    return analysis.simulate(PATTERNS, 0, quiet)


def ran(row) -> bool:
    return not row["refused"]


def large(row) -> bool:
    """The large attacks' rows (reversed at scale 100, a constant of 100)."""
    return analysis.LARGE.get(row["attack"]) == row["attack_params"]


def test_every_scheme_attack_and_liar_count_has_rows(rows):
    wanted = {(a.name, json.dumps(a.params())) for a in analysis.attack_variants()}
    for scheme, params in analysis.schemes():
        mine = [r for r in rows if r["scheme"] == scheme]
        assert mine, scheme
        for liars in analysis.LIARS:
            got = {
                (r["attack"], json.dumps(r["attack_params"])) for r in mine if r["liars"] == liars
            }
            assert got == wanted, (scheme, params, liars)
    assert len(wanted) == len(attacks.available()) + len(analysis.LARGE)
    aggregated = {r["aggregator"] for r in rows if r["aggregator"]}
    assert aggregated == set(aggregators.available())


def test_correcting_codes_are_exact_and_name_the_liars_up_to_their_design(rows):
    decoders = [r for r in rows if r["defence"] == "decoder" and r["liars"] <= r["design_a"]]
    # DETOX, ByzShield (a = 1), DRACO's two codes and paper 004's code (a = 1, 2)
    assert {r["scheme"] for r in decoders} == {
        "detox",
        "byzshield",
        "draco-repetition",
        "draco-cyclic",
        "heterogeneous",
    }
    assert len(decoders) == len(analysis.attack_variants()) * (2 + 3 * 3 + 2)
    for row in decoders:
        assert row["exact_fraction"] == 1.0, row
        assert row["named_fraction"] == 1.0, row
        assert row["detected_fraction"] == 0.0 and row["max_rel_error"] <= 1e-8, row
        assert row["patterns"] == PATTERNS


def test_beyond_their_design_the_codes_detect_or_err_never_silently_exact(rows):
    beyond = [r for r in rows if r["defence"] == "decoder" and r["liars"] > r["design_a"]]
    assert beyond
    for row in beyond:
        assert row["exact_fraction"] + row["detected_fraction"] <= 1.0
    # independent noise cannot pass a vote or a syndrome check: always detected
    noise = [r for r in beyond if r["attack"] == "noise"]
    assert noise and all(r["detected_fraction"] == 1.0 for r in noise)


def test_aggregators_beat_no_defence_under_large_attacks(rows):
    for liars in analysis.LIARS:
        for attack, params in analysis.LARGE.items():
            cell = [
                r
                for r in rows
                if r["liars"] == liars and r["attack"] == attack and r["attack_params"] == params
            ]
            undefended = next(
                r for r in cell if r["defence"] == "none" and r["placement"] == "random"
            )
            aggregated = [r for r in cell if r["aggregator"] and ran(r)]
            assert len(aggregated) >= 2 * len(aggregators.available())
            # beyond its tolerance an aggregator may do worse than none: trimmed-mean at beta
            # = 0.1 trims nothing of DETOX's 5 votes, and one of them is the liars' (worst
            # placement of 2 liars); the rows say so in "tolerated"
            for row in aggregated:
                assert math.isfinite(row["max_rel_error"]), row
                if row["tolerated"] == "yes":
                    assert row["max_rel_error"] < undefended["mean_rel_error"], row
                    assert row["mean_cosine"] > 0.9, row
            # no defence: the forged step points away from the honest gradient
            if attack == "reversed":
                assert undefended["mean_cosine"] < 0


def test_within_their_tolerance_aggregators_stay_near_the_honest_gradient(rows):
    tolerated = [r for r in rows if r["aggregator"] and ran(r) and r["tolerated"] == "yes"]
    assert tolerated
    for row in tolerated:
        if row["max_rel_error"] is None:
            # every step refused on the way: DETOX drops a group without a majority (two
            # liars' independent noise), and Krum refuses the 4 votes left (n >= 2f + 3)
            assert row["detected_fraction"] == 1.0, row
            continue
        # the honest values' own spread: one partition of 15 (Krum) is ~40% off the mean
        assert row["max_rel_error"] < 0.6, row


def test_refused_rows_say_why(rows):
    refused = [r for r in rows if r["refused"]]
    assert refused
    for row in refused:
        assert "exact_fraction" not in row and "cpu_time_us" not in row
    # DETOX hands 5 votes: Bulyan's n >= 4f + 3 refuses it
    bulyan = [r for r in refused if r["scheme"] == "detox" and r["aggregator"] == "bulyan"]
    assert bulyan and all(
        r["refused"] == "aggregator bulyan needs n >= 4f + 3 (got n=5, f=1)" for r in bulyan
    )


def test_an_aggregator_beyond_its_tolerance_runs_and_says_so(rows):
    beyond = [r for r in rows if r["aggregator"] and ran(r) and r["tolerated"] != "yes"]
    assert beyond
    for row in beyond:
        assert row["tolerated"].startswith(f"aggregator {row['aggregator']} tolerates ")
        assert row["corrupted_values"] > 0


def test_the_worst_placement_is_measured_for_aggregable_codes(rows):
    worst = {(r["scheme"], r["liars"]) for r in rows if r["placement"] == "worst"}
    assert worst == {(s, q) for s in ("uncoded", "detox", "byzshield") for q in analysis.LIARS}
    # two liars in one DETOX group outvote it: the worst placement corrupts one vote
    detox = [r for r in rows if r["scheme"] == "detox" and r["placement"] == "worst" and ran(r)]
    assert {r["corrupted_values"] for r in detox if r["liars"] == 2 and r["aggregator"]} == {1}


class First(Aggregator):
    """Takes the first value (no robustness at all): an installed aggregator's rows."""

    name = "first"

    def tolerates(self, n):
        return 0

    def error_bound(self, honest, n):
        return math.inf

    def _aggregate(self, inputs):
        return Aggregate(inputs[0])


@pytest.fixture
def plugins(monkeypatch):
    attacks.register("greedy", Greedy)
    aggregators.register("first", First)
    monkeypatch.setattr(analysis, "LARGE", {})
    monkeypatch.setattr(analysis, "schemes", lambda: [("uncoded", {"n": analysis.N})])
    yield
    attacks.unregister("greedy")
    aggregators.unregister("first")


def test_registered_attacks_and_aggregators_are_included_and_refusals_are_rows(plugins):
    rows = analysis.simulate(2, 0, quiet)
    greedy = [r for r in rows if r["attack"] == "greedy"]
    assert len(greedy) == 2 * 2 * (1 + len(aggregators.available()))  # liars x placements
    for row in greedy:
        assert row["refused"].startswith("attack greedy needs at least 50 honest messages")
    first = [r for r in rows if r["aggregator"] == "first" and ran(r)]
    assert first and all(r["tolerated"].startswith("aggregator first tolerates 0") for r in first)


def test_the_same_seed_gives_the_same_table_and_another_seed_another(monkeypatch):
    every = analysis.schemes
    monkeypatch.setattr(analysis, "schemes", lambda: every()[:3])

    def without_time(rows):
        return [{k: v for k, v in row.items() if k != "cpu_time_us"} for row in rows]

    first = without_time(analysis.simulate(2, 7, quiet))
    assert first == without_time(analysis.simulate(2, 7, quiet))
    assert first != without_time(analysis.simulate(2, 8, quiet))


def test_the_gradients_are_logistic_regression_partials_summing_to_the_full_gradient():
    problem = analysis.Problem.draw(np.random.default_rng(0))
    w = np.random.default_rng(1).standard_normal(analysis.FEATURES)
    full = problem.partials(1, w)[0]
    for k in (15, 25):
        partials = problem.partials(k, w)
        assert partials.shape == (k, analysis.FEATURES)
        assert np.allclose(partials.sum(axis=0), full, rtol=1e-12, atol=1e-9)


def test_cli_writes_the_table(tmp_path, monkeypatch):
    monkeypatch.setattr(analysis, "schemes", lambda: [("detox", {"n": analysis.N, "r": 3})])
    out = tmp_path / "byzantine.csv"
    assert (
        main(["analyze", "byzantine-aggregation", "--trials", "100", "--quiet", "--out", str(out)])
        == 0
    )
    written = read_analysis(out)
    assert {row["scheme"] for row in written} == {"detox"}
    meta = json.loads(out.with_name("byzantine.csv.json").read_text())
    assert meta["patterns_per_cell"] == 4 and meta["liars"] == [1, 2]
