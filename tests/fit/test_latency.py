"""The links' latency and rates from transfers of several sizes (``gradcode.fit.latency``): the
estimate, its intervals' coverage, one size (not identifiable), misfits, and the fit from runs'
logs end to end."""

from __future__ import annotations

import numpy as np
import pytest
import yaml

from gradcode.cli import main
from gradcode.fit.latency import fit_links
from gradcode.fit.links import result_link
from gradcode.fit.runs import fit_runs
from gradcode.rate import Rate
from gradcode.sim.spec import load_spec
from tests.fit.fake_runs import BYTES, FEATURES, RATE, write_run

LATENCY = 1e-3  # seconds, one way
BANDWIDTH = 12.5e6  # bytes per second: 100 Mbit/s
TRUTH = {"t1": 0.016, "lambda1": 80.0, "t2": 0.06, "lambda2": 10.0}


def _transfers(seed, sizes, *, workers=4, count=30, latency=LATENCY, rates=None):
    """Every worker's ``(bytes, seconds)``: ``latency + bytes / rate`` plus contention and
    polling (heavy-tailed: a mixture of exponential waits)."""
    rng = np.random.default_rng(seed)
    rates = [BANDWIDTH] * workers if rates is None else rates
    found = []
    for worker in range(workers):
        pairs = []
        for size in sizes:
            wait = rng.exponential(0.3e-3, count) * rng.choice([1, 5], count)
            pairs += [(size, latency + size / rates[worker] + x) for x in wait]
        found.append(pairs)
    return found


@pytest.mark.parametrize("sizes", [(100_032, 200_032), (2_032, 4_032, 8_032)], ids=["2", "3"])
def test_latency_and_rates_are_recovered_within_their_intervals(sizes):
    covered = rates_covered = 0
    estimates = []
    for seed in range(100):
        fitted = fit_links(_transfers(seed, sizes), 0.95)
        latency = fitted.latency
        assert latency.identifiable and latency.sizes == sizes
        estimates.append(latency.seconds)
        low, high = latency.interval
        assert low <= latency.seconds <= high
        covered += low <= LATENCY <= high
        for link in fitted.workers:
            assert link.interval[0] <= link.rate <= link.interval[1]
            rates_covered += link.interval[0] <= BANDWIDTH <= link.interval[1]
    # Bonferroni over every (worker, size) window: wide, measured 100 of 100 and 400 of 400
    assert covered >= 95 and rates_covered >= 380
    # the least transfers sit a little above the envelope: biased up by a few microseconds
    assert np.mean(estimates) == pytest.approx(LATENCY, abs=20e-6)


def test_a_workers_rate_is_its_own_with_one_latency_for_all():
    rates = [BANDWIDTH, BANDWIDTH / 2, BANDWIDTH, 2 * BANDWIDTH]
    fitted = fit_links(_transfers(1, (100_032, 200_032), rates=rates), 0.95)
    for link, rate in zip(fitted.workers, rates, strict=True):
        assert link.rate == pytest.approx(rate, rel=0.05)
        assert link.interval[0] <= rate <= link.interval[1]
    assert fitted.latency.interval[0] <= LATENCY <= fitted.latency.interval[1]


def test_one_message_size_does_not_identify_the_latency_and_keeps_the_fastest_rates():
    transfers = _transfers(2, (200_032,))
    fitted = fit_links(transfers, 0.95)
    latency = fitted.latency
    assert not latency.identifiable and latency.seconds == 0.0 and latency.interval is None
    assert latency.describe().startswith("not identifiable from one message size (200032 bytes)")
    assert latency.as_dict()["identifiable"] is False and "0 assumed" in latency.as_dict()["reason"]
    for link, pairs in zip(fitted.workers, transfers, strict=True):
        today = result_link([seconds / size for size, seconds in pairs], 0.95)
        assert link == today  # the rate of the fastest transfer, the latency folded in
    # two sizes, but never from one worker: no envelope of any worker shows the latency
    apart = fit_links([_transfers(2, (100_032,))[0], _transfers(3, (200_032,))[0]], 0.95)
    assert not apart.latency.identifiable and "workers of one message size each" in (
        apart.latency.reason
    )


def test_no_latency_is_estimated_as_none_and_its_rates_are_the_fastest_transfers():
    transfers = _transfers(3, (100_032, 200_032), latency=0.0)
    fitted = fit_links(transfers, 0.95)
    # here the envelope meets the axis below 0: the estimate is the bound, 0
    assert fitted.latency.identifiable and fitted.latency.seconds == 0.0
    assert fitted.latency.interval[0] == 0.0 and fitted.latency.interval[1] < 0.3e-3
    for link, pairs in zip(fitted.workers, transfers, strict=True):
        assert link.rate == pytest.approx(max(size / s for size, s in pairs))


def test_workers_of_different_latencies_have_no_interval_and_say_why():
    transfers = _transfers(4, (100_032, 200_032), workers=2)
    transfers += _transfers(5, (100_032, 200_032), workers=2, latency=10 * LATENCY)
    fitted = fit_links(transfers, 0.95)
    assert fitted.latency.interval is None and "one latency for every worker" in (
        fitted.latency.reason
    )
    assert all(link.interval is None for link in fitted.workers)
    assert "one latency for every worker" in fitted.latency.describe()


def _runs(tmp_path, latency, starts):
    """An uncoded run (messages of l float64s) and a Ye-Abbe run with m = 2 (l / 2) over
    links at ``latency``, their results queueing a little at the master's port."""
    options = {"iterations": 60, "links": starts, "latency": latency, "queueing": 0.5e-3}
    return [
        write_run(tmp_path / "u", "uncoded", {"n": 4}, **TRUTH, seed=21, **options),
        write_run(
            tmp_path / "y", "ye-abbe", {"n": 4, "d": 3, "s": 1, "m": 2}, **TRUTH, seed=22, **options
        ),
    ]


def test_the_fit_of_runs_at_a_known_latency_writes_it_into_the_spec(tmp_path, capsys):
    latency = 2e-3
    starts = (0.05, 0.1, 0.15, 0.2)
    runs = _runs(tmp_path, latency, starts)
    fitted = fit_runs(runs, bootstrap=20)
    assert fitted.model == "shared-links"
    params = fitted.spec()["parameters"]
    report = fitted.report()["link_rates"]
    low, high = report["latency"]["interval"]
    assert low <= latency <= high and params["latency"] == report["latency"]["seconds"]
    assert params["latency"] == pytest.approx(latency, abs=0.1e-3)
    rate = Rate.parse(params["rate"], "rate").bytes_per_second
    assert rate == pytest.approx(RATE, rel=0.05)
    for link in report["workers"]:
        assert link["interval"][0] <= RATE <= link["interval"][1]
    # the model's four copies reach the last worker a latency plus their bytes later
    master_rate = Rate.parse(params["master_rate"], "master_rate").bytes_per_second
    assert master_rate == pytest.approx(4 * 8 * (FEATURES + 1) / (0.2 - params["latency"]))
    load_spec(fitted.spec(), origin="fitted")

    out = tmp_path / "fitted.yaml"
    assert main(["timing", "fit", *map(str, runs), "--out", str(out), "--bootstrap", "20"]) == 0
    printed = capsys.readouterr().out
    line = next(line for line in printed.splitlines() if line.startswith("latency"))
    assert "ms [" in line and f"message sizes {BYTES - 4 * FEATURES}, {BYTES} bytes" in line
    spec = yaml.safe_load(out.read_text())
    assert spec["parameters"]["latency"] == pytest.approx(params["latency"])
    assert spec["fit"]["link_rates"]["latency"]["identifiable"] is True


def test_a_fit_of_one_message_size_says_the_latency_is_not_identifiable(tmp_path, capsys):
    run = _runs(tmp_path, 2e-3, (0.05, 0.1, 0.15, 0.2))[0]
    out = tmp_path / "fitted.yaml"
    assert main(["timing", "fit", str(run), "--out", str(out), "--bootstrap", "20"]) == 0
    printed = capsys.readouterr().out
    (line,) = [line for line in printed.splitlines() if "not identifiable" in line]
    assert line.startswith("latency") and f"one message size ({BYTES} bytes): 0 assumed" in line
    spec = yaml.safe_load(out.read_text())
    assert spec["parameters"]["latency"] == 0.0
    latency = spec["fit"]["link_rates"]["latency"]
    assert latency["identifiable"] is False and "not identifiable" in latency["reason"]
    # today's reading: the latency folded into the rate of the fastest transfer
    rate = Rate.parse(spec["parameters"]["rate"], "rate").bytes_per_second
    assert rate < RATE
