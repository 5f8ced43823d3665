"""Exact expected times (``gradcode.recommend.exact``): the closed forms of paper 000 and of
order statistics where they apply, the Monte Carlo's intervals around them, ``None`` where the
model or the code allow no closed form, and how ``recommend`` orders and reports them."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate

from gradcode.codes import build
from gradcode.recommend import recommend
from gradcode.recommend.exact import exact_time, exact_times, unsupported
from gradcode.recommend.recommendation import EQUAL_TIMES, EXACT_TIME, MONTE_CARLO
from gradcode.recommend.report import as_json, format_text, render_csv
from gradcode.recommend.simulation import estimate_codes
from gradcode.timing import MasterWorkerModel, model_from_spec
from gradcode.timing.exact import (
    harmonic,
    hypoexponential_cdf,
    order_statistic_mean,
    shifted_exponential_order_mean,
    ye_abbe_expected_time,
)
from tests.recommend.conftest import FAST, TABLE3

#: an unequal-load placement of the heterogeneous code (loads 1 1 2 1 3 1, any 5 of 6)
UNEQUAL = {"placement": [[2], [2], [1, 2], [0], [0, 1, 2], [2]], "s": 1, "a": 0}


def _master_worker(**params):
    return model_from_spec("master-worker", params)


@pytest.mark.parametrize("d, m", [(4, 3), (2, 1), (3, 2), (4, 2), (5, 3), (8, 1), (8, 7)])
def test_ye_abbe_codes_get_paper_000s_expected_time(table3, d, m):
    """Every Ye-Abbe code at n = 8 under Table 3's model: ``ye_abbe_expected_time`` (which
    reproduces the paper's Table 3), and 21.3697 for (8, 4, 1, 3) as printed."""
    code = build("ye-abbe", n=8, d=d, s=d - m, m=m)
    expected = ye_abbe_expected_time(8, d, m, **TABLE3)
    assert exact_time(table3, code) == pytest.approx(expected, rel=1e-9)
    if (d, m) == (4, 3):
        assert round(exact_time(table3, code), 4) == 21.3697


@pytest.mark.parametrize("s", [0, 1, 3, 5])
def test_an_order_statistic_of_shifted_exponentials(s):
    """No link cost: a CRC worker holds s + 1 subsets, so it is done at (s + 1) T1, a shifted
    exponential, and the code at the (n - s)-th of them (Renyi's closed form)."""
    model = _master_worker(lambda1=2.0, t1=0.5)
    p = s + 1
    expected = shifted_exponential_order_mean(0.5 * p, 2.0 / p, 8, 8 - s)
    assert exact_time(model, build("crc", n=8, s=s)) == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("s", [0, 1, 2, 5])
def test_frc_is_the_slowest_group_of_its_fastest_workers(s):
    """FRC without link cost: a group is done at the minimum of s + 1 exponentials of rate
    lambda1 / p (an exponential of s + 1 times that rate); the code at the maximum of the
    n / (s + 1) groups: H_groups over that rate."""
    lambda1, t1, n = 0.8, 1.6, 12
    p, groups = s + 1, 12 // (s + 1)
    expected = p * t1 + harmonic(groups) / ((s + 1) * lambda1 / p)
    model = _master_worker(lambda1=lambda1, t1=t1)
    assert exact_time(model, build("frc", n=n, s=s)) == pytest.approx(expected, rel=1e-9)


def test_equal_compute_and_link_rates_and_the_overhead():
    """Rates lambda1 / p and m lambda2 equal (the Erlang case) or nearly equal, and the
    model's overhead added to the expectation."""
    for lambda2 in (0.4, 0.4 * (1 + 1e-9), 0.4 * (1 + 1e-5), 0.5):
        model = _master_worker(lambda1=0.8, t1=1.6, lambda2=lambda2, t2=6, overhead=0.25)
        code = build("crc", n=6, s=1)  # p = 2: lambda1 / p = 0.4
        # the reference's own formula cancels for rates this close: Erlang's is as exact
        rate = 0.4 if abs(lambda2 - 0.4) < 1e-8 else lambda2
        spread = order_statistic_mean(hypoexponential_cdf(0.4, rate), 6, 5)
        expected = 2 * 1.6 + 6 + spread + 0.25
        assert exact_time(model, code) == pytest.approx(expected, rel=1e-8)


def test_no_exact_value_where_the_closed_form_does_not_hold(table3):
    """Unequal workers, another model, a subclass that samples its own way; codes with several
    messages per worker, trees, no declared rule."""
    crc = build("crc", n=8, s=2)
    unequal = _master_worker(lambda1=[0.8] * 4 + [0.4] * 4, t1=1.6)
    assert "unequal" in unsupported(unequal) and exact_time(unequal, crc) is None
    alike = _master_worker(lambda1=[0.8] * 8, t1=1.6)  # a list, but every worker alike
    assert unsupported(alike) is None and exact_time(alike, crc) is not None
    port = model_from_spec("single-port", {"a": 1e-3, "mu": 1e3, "tc": 1e-3, "data": 120})
    assert unsupported(port) is not None and exact_time(port, crc) is None

    class Delayed(MasterWorkerModel):
        def sample(self, rng, trials, workers):
            draws = super().sample(rng, trials, workers)
            draws["compute"] = draws["compute"] + 1.0
            return draws

    assert exact_time(Delayed(0.8, 1.6), crc) is None
    assert exact_time(table3, crc) is not None
    for name, params in [
        ("gc-mmc", {"n": 8, "r": 4, "clusters": 2, "design": "correlated", "order": 4}),
        ("coded-reduce", {"n": 8, "L": 1, "s": 3, "inner": "frc"}),
        ("binary", {"n": 8, "s": 1}),
    ]:
        assert exact_time(table3, build(name, **params)) is None, name


@pytest.mark.parametrize(
    "parameters",
    [TABLE3, {"lambda1": 2.0, "t1": 0.1, "lambda2": 5.0, "t2": 0.05, "overhead": 0.3}],
)
def test_exact_values_lie_in_the_monte_carlo_intervals(parameters):
    """Every code with a closed form, simulated with many trials: the exact value is inside
    the 99.9% interval (and close to the mean). Unequal loads (a Poisson-binomial tail), a
    code of the data, approximate codes and their stopping rules are among them."""
    model = model_from_spec("master-worker", parameters)
    codes = [
        build("uncoded", n=6),
        build("crc", n=6, s=2),
        build("ye-abbe", n=6, d=3, s=1, m=2),
        build("ye-abbe", n=6, d=4, s=1, m=3),
        build("frc", n=6, s=1),
        build("frc", n=6, s=2),
        build("lcc", n=6, k=2),
        build("heterogeneous", **UNEQUAL),
        build("berrut", n=6, r=1, s=2, m=2),
        build("ignore-stragglers", n=6, s=3),
    ]
    exact = exact_times(model, codes)
    assert all(value is not None for value in exact)
    rows = estimate_codes(model, codes, trials=200_000, seed=3, confidence=0.999)
    for code, value, row in zip(codes, exact, rows, strict=True):
        assert row.ci_low <= value <= row.ci_high, (code, value, row)
        assert value == pytest.approx(row.mean_time, rel=0.01)


def test_unequal_loads_are_a_poisson_binomial_tail(table3):
    """The heterogeneous placement's exact value equals a direct quadrature of the
    Poisson-binomial tail, built here from numbers alone."""
    code = build("heterogeneous", **UNEQUAL)
    loads = np.array([len(part) for part in UNEQUAL["placement"]])  # k = 3, n = 6
    subsets = loads * 6 / 3
    lambda1, t1, lambda2, t2 = (TABLE3[key] for key in ("lambda1", "t1", "lambda2", "t2"))
    cdfs = [hypoexponential_cdf(lambda1 / p, lambda2) for p in subsets]
    shifts = subsets * t1 + t2

    def survival(t):
        laws = zip(cdfs, shifts, strict=True)
        probability = [float(cdf(np.asarray(t - shift))) for cdf, shift in laws]
        pmf = np.array([1.0])
        for q in probability:
            pmf = np.convolve(pmf, [1 - q, q])
        return 1.0 - pmf[5:].sum()  # any 5 of 6

    edges = sorted(set(shifts.tolist()))
    value = edges[0] + sum(
        integrate.quad(survival, lo, hi, epsabs=1e-12)[0]
        for lo, hi in zip(edges, [*edges[1:], np.inf], strict=True)
    )
    assert exact_time(table3, code) == pytest.approx(value, rel=1e-8)


def test_recommend_reports_and_orders_by_the_exact_times(table3_rec, table3):
    rec = table3_rec
    assert rec.exact_unavailable is None
    for row in [*rec.ranked, *rec.approximate]:
        assert row.exact_time == exact_time(table3, row.code)
        if row.exact_time is not None:
            assert row.ranked_by == EXACT_TIME
    frc = next(r for r in rec.ranked if r.scheme == "frc" and r.params == {"n": 8, "s": 3})
    tree = next(r for r in rec.ranked if r.scheme == "coded-reduce" and r.params["s"] == 3)
    # the tree over FRC has no rule of its own, but the very same times: it borrows FRC's
    # and stays with it (between them only codes of the very same times)
    assert tree.exact_time is None and tree.ranked_by == EQUAL_TIMES and tree.rank > frc.rank
    between = rec.ranked[frc.rank - 1 : tree.rank]
    assert {(r.result.mean_time, r.result.std_time) for r in between} == {
        (frc.result.mean_time, frc.result.std_time)
    }
    assert rec.best.exact_time is not None
    assert any(row.ranked_by == MONTE_CARLO for row in rec.ranked)  # GC-MMC, binary, trees
    record = rec.best.record()
    assert record["exact_time"] == rec.best.exact_time and record["ranked_by"] == EXACT_TIME
    text = format_text(rec)
    header = next(line for line in text.splitlines() if "95% CI" in line)
    assert "exact" in header.split("95% CI")[1]
    assert "exact: expected time from the closed form" in text
    assert "best vs runner-up: best ahead by the exact expected times" in text
    assert ",exact_time,ranked_by," in render_csv(rec).splitlines()[0]
    assert as_json(rec)["best"]["exact_time"] == pytest.approx(rec.best.exact_time)


def test_without_a_closed_form_the_ranking_is_the_monte_carlo_one():
    model = _master_worker(lambda1=[0.8] * 3 + [0.4] * 3, t1=1.6)
    rec = recommend(model, 6, **FAST)
    assert rec.exact_unavailable is not None
    rows = [*rec.ranked, *rec.approximate]
    assert all(r.exact_time is None and r.ranked_by == MONTE_CARLO for r in rows)
    means = [r.result.mean_time for r in rec.ranked]
    assert means == sorted(means)
    assert "exact: none (model master-worker: workers of unequal parameters" in format_text(rec)
    assert rec.tie == (rec.runner_up.result.ci_low <= rec.best.result.ci_high)


def test_exact_values_are_finite_and_shared_between_equal_laws(table3):
    """Codes with one completion law (CRC s and Ye-Abbe m = 1, d = s + 1) get bit-equal
    values, so equal codes tie exactly."""
    for s in range(4):
        crc = exact_time(table3, build("crc", n=8, s=s))
        ye_abbe = exact_time(table3, build("ye-abbe", n=8, d=s + 1, s=s, m=1))
        assert math.isfinite(crc) and crc == ye_abbe
