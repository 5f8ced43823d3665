"""Every preset is a valid YAML-equivalent spec, and reproduces what its paper states."""

import pytest
import yaml

from gradcode.sim import available_presets, load_spec, preset, simulate

#: paper 001, Section IV-B (simulated CNN): CR's speedups over UMW, GC and SGD
PAPER001_SPEEDUPS = {"UMW": 6.6, "GC": 4.8, "SGD": 4.0}


def _run(name, trials, seed=0):
    rows = simulate(load_spec(preset(name), origin=name), trials=trials, seed=seed)
    return {row.label: row for row in rows}, rows


@pytest.mark.parametrize("name", available_presets())
def test_preset_is_a_yaml_spec_with_its_source(name):
    data = preset(name)
    assert yaml.safe_load(yaml.safe_dump(data)) == data
    spec = load_spec(yaml.safe_load(yaml.safe_dump(data)), origin=name)
    assert spec.name == name and "paper 00" in spec.source and len(spec.description) > 80


def test_coded_reduce_standing_at_n_84():
    """Under the paper's model: CR beats every master-worker scheme (UMW, GC, SGD), SGD is at
    least as fast as GC, and RAR beats UMW and GC (Section IV-A's observations); RAR's
    segmented ring is however faster than CR here (see the RAR test below)."""
    by, _ = _run("coded-reduce", 4000)
    order = sorted(by, key=lambda label: by[label].mean_time)
    assert order == ["RAR", "CR-frc", "CR", "SGD", "GC", "UMW"]
    assert by["UMW"].messages == 84 and by["GC"].messages == by["SGD"].messages == 63
    assert by["CR"].messages == 63  # 21 parents (master, 4 + 16 inner nodes) take n - s = 3 each
    assert by["CR"].mean_time < by["CR"].extras["theorem2_upper"]


def test_coded_reduce_cnn_speedups_match_the_papers_simulation():
    by, _ = _run("coded-reduce-cnn", 4000)
    cr = by["CR"].mean_time
    for label, paper in PAPER001_SPEEDUPS.items():
        assert by[label].mean_time / cr == pytest.approx(paper, rel=0.06), label


@pytest.mark.xfail(
    strict=True,
    reason="paper 001 reports CR 1.8x faster than RAR in its CNN simulation, but under the "
    "model as stated (tc per full vector, 2(N-1) segments of 1/N) RAR takes 0.206 s against "
    "CR's 1.135 s (CR 0.18x); the paper does not say how it modelled RAR",
)
def test_cr_beats_ring_allreduce_as_in_the_papers_simulation():
    by, _ = _run("coded-reduce-cnn", 4000)
    assert by["RAR"].mean_time / by["CR"].mean_time == pytest.approx(1.8, rel=0.2)


def test_theorem2_preset_lies_within_the_bounds_once_n_is_large():
    _, rows = _run("coded-reduce-theorem2", 1500)
    assert [row.params["n"] for row in rows] == [4, 8, 12, 16, 24, 32, 40]
    for row in rows:
        lower, upper = row.extras["theorem2_lower"], row.extras["theorem2_upper"]
        assert row.mean_time > row.extras["theorem2_computation"]
        if row.params["n"] >= 12:
            assert lower < row.mean_time < upper, row.params
    assert rows[1].mean_time < rows[1].extras["theorem2_lower"]  # n = 8: o(n) terms still matter


def test_binary_heterogeneous_allocation_equalises_and_shortens():
    by, _ = _run("binary-heterogeneous", 40_000)
    uniform, times = by["binary-uniform"], by["binary-times"]
    assert (uniform.extras["expected_finish_min"], uniform.extras["expected_finish_max"]) == (
        pytest.approx(2.7),
        pytest.approx(5.4),
    )
    assert times.extras["expected_finish_min"] == pytest.approx(3.6)
    assert times.extras["expected_finish_max"] == pytest.approx(3.6)
    assert times.ci_high < uniform.ci_low


def test_speed_proportional_placement_wins():
    by, _ = _run("heterogeneous-placement", 20_000)
    best = by["speed-proportional"]
    assert best.params["s"] == 1 and best.vectors == pytest.approx(11 / 2)
    assert best.ci_high < by["cyclic"].ci_low and best.ci_high < by["uncoded"].ci_low
    assert best.extras["expected_finish_min"] == best.extras["expected_finish_max"]
