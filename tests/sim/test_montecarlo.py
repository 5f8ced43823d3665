"""The driver: seeding independent of chunking, common random numbers, statistics, tables."""

import math

import numpy as np
import pytest

from gradcode.sim import load_spec, simulate, write_table
from gradcode.sim.montecarlo import BLOCK
from gradcode.sim.stats import Moments
from gradcode.sim.table import read_csv, render_csv
from gradcode.timing.exact import shifted_exponential_order_mean

SPEC = {
    "model": "master-worker",
    "parameters": {"lambda1": 10, "t1": 0.01},
    "schemes": [
        {"scheme": "crc", "params": {"n": 6}, "grid": {"s": [0, 2]}},
        {"scheme": "uncoded", "params": {"n": 6}, "label": "UMW"},
        {"scheme": "uncoded", "params": {"n": 4}},
    ],
}


def _spec(**changes):
    return load_spec({**SPEC, **changes}, origin="test")


def test_results_do_not_depend_on_chunk_size_or_cache():
    trials = 2 * BLOCK + 123
    reference = render_csv(simulate(_spec(), trials=trials, seed=5))
    assert render_csv(simulate(_spec(), trials=trials, seed=5, chunk=1)) == reference
    assert render_csv(simulate(_spec(), trials=trials, seed=5, chunk=10**6)) == reference
    assert render_csv(simulate(_spec(), trials=trials, seed=5, cache_bytes=0)) == reference
    assert render_csv(simulate(_spec(), trials=trials, seed=6)) != reference


def test_schemes_with_equal_worker_counts_share_their_draws():
    """Common random numbers: trial by trial, the same workers under every scheme."""
    rows = simulate(_spec(), trials=5000, seed=1)
    crc0, _, umw, small = rows
    assert crc0.mean_time == umw.mean_time  # both wait for all 6 of the very same workers
    assert small.workers == 4 and small.mean_time < umw.mean_time
    sgd = {"scheme": "ignore-stragglers", "params": {"n": 6, "s": 2}}
    paired = simulate(_spec(schemes=[*SPEC["schemes"], sgd]), trials=5000, seed=1)
    assert paired[2].mean_time == umw.mean_time  # adding a scheme changes nothing else
    assert paired[4].mean_time < umw.mean_time


def test_mean_matches_the_closed_form_and_the_interval_covers_it():
    rows = simulate(_spec(), trials=100_000, seed=3)
    # (shift, rate) of load * (0.01 + Exp(10)), workers, responders needed
    cases = [((0.01, 10), 6, 6), ((0.03, 10 / 3), 6, 4), ((0.01, 10), 6, 6), ((0.01, 10), 4, 4)]
    for row, ((shift, rate), n, r) in zip(rows, cases, strict=True):
        exact = shifted_exponential_order_mean(shift, rate, n, r)
        assert row.ci_low < exact < row.ci_high, (row.label, exact, row.mean_time)


def test_moments_merge_blocks_exactly_and_flag_never_finishing():
    values = np.random.default_rng(0).normal(5, 2, 1000)
    merged = Moments()
    for start in range(0, 1000, 97):
        merged.add(values[start : start + 97])
    assert merged.estimate() == pytest.approx(values.mean(), rel=1e-14)
    assert merged.std() == pytest.approx(values.std(ddof=1), rel=1e-12)
    low, high = merged.interval(0.95)
    assert (high - low) / 2 == pytest.approx(1.9623 * values.std(ddof=1) / math.sqrt(1000), 1e-3)
    merged.add(np.array([np.inf, 1.0]))
    assert merged.never == 1 and merged.trials == 1002
    assert merged.estimate() == math.inf and merged.interval(0.9) == (math.inf, math.inf)


def test_table_files_are_deterministic_and_tidy(tmp_path):
    spec = _spec(length=1000, description="a test", source="nowhere")
    meta = {"name": spec.name, "description": spec.description, "trials": 4000, "seed": 9}
    first, sidecar = write_table(tmp_path / "a.csv", simulate(spec, trials=4000, seed=9), meta)
    second, _ = write_table(tmp_path / "b.csv", simulate(spec, trials=4000, seed=9), meta)
    assert first.read_bytes() == second.read_bytes()
    assert sidecar.name == "a.csv.json" and '"description": "a test"' in sidecar.read_text()
    rows = read_csv(first)
    assert list(rows[0]) == [
        "label", "scheme", "n", "s", "seed", "k", "workers", "trials", "mean_time", "ci_low",
        "ci_high", "std_time", "messages", "vectors", "floats",
    ]  # fmt: skip
    assert [r["label"] for r in rows] == ["crc", "crc", "UMW", "uncoded"]
    assert [r["s"] for r in rows] == ["0", "2", "", ""]
    assert rows[1]["messages"] == "4" and rows[1]["floats"] == "4000"
    assert not list(tmp_path.glob("*.partial"))


def test_trials_and_chunk_are_checked():
    with pytest.raises(ValueError, match="trials must be >= 2"):
        simulate(_spec(), trials=1, seed=0)
    with pytest.raises(ValueError, match="chunk must be >= 1"):
        simulate(_spec(), trials=10, seed=0, chunk=0)
