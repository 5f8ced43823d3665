"""The shifted-exponential fit: survival, estimators, intervals, goodness of fit, homogeneity."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import optimize, stats

from gradcode.errors import UserError
from gradcode.fit.likelihood import log_likelihood, log_survival
from gradcode.fit.shifted_exponential import (
    MIN_COMPLETE,
    FitError,
    Sample,
    compare_groups,
    fit_times,
)

# the compute and communication parts of the runs below
T1, RATE1, T2, RATE2 = 0.5, 2.0, 0.2, 1.0


def type_two(
    rng: np.random.Generator,
    iterations: int,
    workers: int,
    left_out: int,
    *,
    rate1: float = RATE1,
    shift1: float = T1,
    comm: bool = True,
    labels: bool = True,
) -> Sample:
    """``iterations`` of ``workers`` workers; each iteration keeps its fastest
    ``workers - left_out`` (threshold: the last of them to arrive). Workers compute 1 to 3
    subsets and send half a vector; observation ``j`` is worker ``j % workers``."""
    size = iterations * workers
    subsets = np.tile(np.arange(workers) % 3 + 1.0, iterations)
    fraction = np.full(size, 0.5 if comm else 0.0)
    x1 = shift1 + rng.exponential(1 / rate1, size)
    x2 = T2 + rng.exponential(1 / RATE2, size)
    total = (subsets * x1 + fraction * (x2 if comm else 0.0)).reshape(iterations, workers)
    threshold = np.sort(total, axis=1)[:, workers - left_out - 1]
    observed = (total <= threshold[:, None]).ravel()
    return Sample(
        subsets=subsets,
        fraction=fraction,
        threshold=np.repeat(threshold, workers),
        observed=observed,
        compute=np.where(observed, x1, np.nan),
        comm=np.where(observed, x2, np.nan) if comm else None,
        iteration=np.repeat(np.arange(iterations), workers) if labels else None,
    )


def by_worker(sample: Sample, workers: int) -> list[Sample]:
    """The observations of each worker of a ``type_two`` sample (thresholds as they were)."""
    groups = []
    for worker in range(workers):
        rows = np.arange(worker, sample.size, workers)
        groups.append(
            Sample(
                subsets=sample.subsets[rows],
                fraction=sample.fraction[rows],
                threshold=sample.threshold[rows],
                observed=sample.observed[rows],
                compute=sample.compute[rows],
                comm=None if sample.comm is None else sample.comm[rows],
            )
        )
    return groups


def covers(interval: tuple[float, float], value: float) -> bool:
    return interval[0] <= value <= interval[1]


def enough(covered: int, trials: int, level: float = 0.95) -> bool:
    """Whether ``covered`` of ``trials`` is no less than a ``level`` interval would give but
    in one case in a thousand."""
    return covered >= stats.binom.ppf(0.001, trials, level)


# ---------------------------------------------------------------------------------------------
# The survival of p X1 + q X2


@pytest.mark.parametrize(
    "a, b",
    [(1.0, 3.0), (3.0, 1.0), (2.0, 2.0), (2.0, 2.0 * (1 + 1e-9)), (1.5, math.inf)],
    ids=["a<b", "a>b", "a==b", "a~b", "q=0"],
)
def test_survival_matches_monte_carlo(a, b):
    rng = np.random.default_rng(1)
    draws = rng.exponential(1 / a, 400_000) + (
        rng.exponential(1 / b, 400_000) if b < math.inf else 0
    )
    y = np.array([0.05, 0.3, 1.0, 2.0, 4.0])
    empirical = (draws[:, None] > y).mean(axis=0)
    model = np.exp(log_survival(y, a, b))
    np.testing.assert_array_less(np.abs(empirical - model), 5 * np.sqrt(model / 400_000) + 1e-4)


def test_survival_is_exact_through_equal_rates_and_far_out():
    y = np.array([1e-6, 0.1, 1.0, 10.0, 1e3])
    limit = np.log1p(2.0 * y) - 2.0 * y  # (1 + a y) e^{-a y} at a = b = 2
    for gap in [0.0, 1e-15, 1e-12, 1e-9, 1e-6]:
        # the function itself moves by about gap y / 2 (relative); no cancellation on top
        np.testing.assert_allclose(log_survival(y, 2.0, 2.0 + gap), limit, rtol=gap + 1e-13)
        np.testing.assert_allclose(log_survival(y, 2.0 + gap, 2.0), log_survival(y, 2.0, 2.0 + gap))
    # far from equal, the textbook form
    textbook = np.log((3 * np.exp(-y[1:4]) - np.exp(-3 * y[1:4])) / 2)
    np.testing.assert_allclose(log_survival(y[1:4], 1.0, 3.0), textbook, rtol=1e-12)
    assert log_survival(1e-6, 1.0, 3.0) == pytest.approx(-1.5e-12, rel=1e-5)  # ~ -a b y^2 / 2
    # deep in the tail, where S underflows, its log does not
    assert log_survival(1e3, 1.0, 3.0) == pytest.approx(-1e3 + math.log(1.5))
    np.testing.assert_array_equal(log_survival(y, 1.5, math.inf), -1.5 * y)
    np.testing.assert_array_equal(log_survival([-1.0, 0.0], 1.0, 2.0), [0.0, 0.0])


# ---------------------------------------------------------------------------------------------
# Estimators


def test_closed_form_equals_the_optimiser_without_comm():
    rng = np.random.default_rng(2)
    x = 1.0 + rng.exponential(0.5, 300)
    subsets = rng.integers(1, 4, 300).astype(float)
    threshold = np.full(300, 4.0)  # type I: a fixed deadline
    observed = subsets * x <= threshold
    samples = {
        "uncensored": Sample.make(x),
        "censored": Sample.make(
            np.where(observed, x, np.nan),
            subsets=subsets,
            threshold=threshold,
            observed=observed,
        ),
    }
    for name, sample in samples.items():
        fit = fit_times(sample, bootstrap=0)
        shift = float(np.min(x[sample.observed]))
        exposure = np.sum(x[sample.observed] - shift)
        exposure += np.sum(np.maximum(threshold / subsets - shift, 0)[~sample.observed])
        assert fit.compute.shift == shift
        assert fit.compute.rate == pytest.approx(np.count_nonzero(sample.observed) / exposure)
        numeric = optimize.minimize_scalar(
            lambda u, s=sample, t=shift: -log_likelihood(s, (t, math.exp(u))),
            bracket=(0.0, 1.0),
            tol=1e-12,
        )
        assert fit.compute.rate == pytest.approx(math.exp(numeric.x), rel=1e-7), name
        assert fit.loglik == pytest.approx(-numeric.fun, rel=1e-12)
        # any other shift is worse
        assert log_likelihood(sample, (shift - 0.01, fit.compute.rate)) < fit.loglik
        assert log_likelihood(sample, (shift + 1e-9, fit.compute.rate)) == -math.inf


def test_the_coupled_optimiser_reaches_the_maximum():
    sample = type_two(np.random.default_rng(3), 100, 10, 3)
    fit = fit_times(sample, bootstrap=0)
    shifts = (fit.compute.shift, fit.comm.shift)

    def negative(u):
        return -log_likelihood(sample, (shifts[0], math.exp(u[0])), (shifts[1], math.exp(u[1])))

    best = optimize.minimize(
        negative, [0.0, 0.0], method="Nelder-Mead", options={"xatol": 1e-12, "fatol": 1e-12}
    )
    np.testing.assert_allclose([fit.compute.rate, fit.comm.rate], np.exp(best.x), rtol=1e-6)
    assert fit.loglik == pytest.approx(-best.fun, abs=1e-8)


def test_uncensored_intervals_cover_and_the_shift_bias_is_removed():
    """The exact F interval of the shift and the profile interval of the rate, n = 50."""
    n, seeds, shift, rate = 50, 200, 1.0, 2.0
    covered, shifts, unbiased = np.zeros(2, dtype=int), [], []
    for seed in range(seeds):
        x = shift + np.random.default_rng(seed).exponential(1 / rate, n)
        fit = fit_times(Sample.make(x), bootstrap=0).compute
        covered += [covers(fit.shift_interval, shift), covers(fit.rate_interval, rate)]
        shifts.append(fit.shift)
        unbiased.append(fit.unbiased_shift)
        if seed == 0:  # the F pivot n (x_(1) - t) / (S / (n - 1)) ~ F(2, 2n - 2)
            spread = np.sum(x - x.min()) / (n - 1)
            low = x.min() - stats.f.ppf(0.95, 2, 2 * n - 2) * spread / n
            assert fit.shift_interval == pytest.approx((low, x.min()), rel=1e-12)
            assert fit.unbiased_shift == pytest.approx(x.min() - spread / n, rel=1e-12)
    print(f"uncensored coverage, {seeds} seeds: shift {covered[0]}, rate {covered[1]}")
    assert all(enough(c, seeds) for c in covered) and covered.max() <= seeds - 2
    # the minimum is 1 / (n rate) = 0.01 high; the correction removes it (standard error 0.0007)
    assert np.mean(shifts) - shift == pytest.approx(0.01, abs=0.003)
    assert abs(np.mean(unbiased) - shift) < 0.003


def test_censored_fit_with_comm_is_accurate_and_ignoring_censoring_is_not():
    sample = type_two(np.random.default_rng(4), 400, 10, 2)
    assert (sample.size, sample.censored) == (4000, 800)
    fit = fit_times(sample, bootstrap=0)
    truth = {"compute": (T1, RATE1), "communication": (T2, RATE2)}
    for component in fit.components:
        shift, rate = truth[component.name]
        assert component.rate == pytest.approx(rate, rel=0.06)
        assert component.shift == pytest.approx(shift, abs=0.005)
        assert covers(component.rate_interval, rate) and covers(component.shift_interval, shift)
    # the same complete observations taken as the whole story: the slow ones are missing
    observed = sample.observed
    naive = fit_times(
        Sample.make(
            sample.compute[observed],
            subsets=sample.subsets[observed],
            fraction=sample.fraction[observed],
            comm=sample.comm[observed],
        ),
        bootstrap=0,
    )
    for component in naive.components:
        rate = truth[component.name][1]
        assert component.rate > 1.12 * rate and not covers(component.rate_interval, rate)


def test_censored_intervals_cover():
    seeds = 60
    covered = np.zeros(4, dtype=int)
    for seed in range(seeds):
        fit = fit_times(type_two(np.random.default_rng(100 + seed), 200, 10, 3), bootstrap=0)
        covered += [
            covers(fit.compute.shift_interval, T1),
            covers(fit.comm.shift_interval, T2),
            covers(fit.compute.rate_interval, RATE1),
            covers(fit.comm.rate_interval, RATE2),
        ]
    print(f"censored coverage, {seeds} seeds (shift1, shift2, rate1, rate2): {covered.tolist()}")
    assert all(enough(c, seeds) for c in covered)


# ---------------------------------------------------------------------------------------------
# Goodness of fit


def test_ks_pvalues_are_uniform_for_data_from_the_model():
    pvalues = [
        fit_times(
            type_two(np.random.default_rng(seed), 100, 10, 2, comm=False), bootstrap=100
        ).compute.ks_pvalue
        for seed in range(40)
    ]
    assert sum(p < 0.01 for p in pvalues) <= 2
    assert stats.kstest(pvalues, "uniform").pvalue > 0.01
    for seed in range(3):
        fit = fit_times(type_two(np.random.default_rng(seed), 100, 10, 2), bootstrap=100, rng=seed)
        assert fit.rejected() == []


def deadline(rng: np.random.Generator, draw, size: int = 1000) -> Sample:
    """Type I: ``size`` compute times from ``draw``, those above their 0.75 quantile censored."""
    x = draw(rng, size)
    cut = np.quantile(x, 0.75)
    observed = x <= cut
    return Sample.make(np.where(observed, x, np.nan), threshold=cut, observed=observed)


def model(rng, size):
    return T1 + rng.exponential(1 / RATE1, size)


def lognormal(rng, size):
    return T1 + rng.lognormal(-1.0, 0.6, size)


def uniform(rng, size):
    return rng.uniform(T1, T1 + 1.0, size)


def test_ks_under_a_fixed_deadline_is_uniform_and_has_power():
    """The distance given completion: against the plain CDF, the censoring gap 1 - F(c) would
    dominate and leave every p-value near 0.5, whatever the data."""
    null = [fit_times(deadline(np.random.default_rng(s), model), bootstrap=100) for s in range(30)]
    assert stats.kstest([fit.compute.ks_pvalue for fit in null], "uniform").pvalue > 0.01
    for draw in (lognormal, uniform):
        for seed in range(3):
            fit = fit_times(deadline(np.random.default_rng(seed), draw), bootstrap=100)
            assert fit.compute.ks_pvalue == pytest.approx(1 / 101)


def test_ks_is_calibrated_for_the_count_rule_without_labels():
    """Type-II data replayed with fixed thresholds: the distance given completion still holds
    (without it the p-values were about 0.01-0.05 in most seeds)."""
    pvalues = [
        fit_times(
            type_two(rng, 100, 10, 2, comm=False, labels=False), bootstrap=100
        ).compute.ks_pvalue
        for rng in map(np.random.default_rng, range(30))
    ]
    assert sum(p < 0.01 for p in pvalues) <= 2
    assert stats.kstest(pvalues, "uniform").pvalue > 0.01


@pytest.mark.parametrize("component", ["compute", "communication"])
def test_ks_rejects_other_distributions(component):
    """Each misfit is found; the censoring couples the components, so a misfit of one can show
    in the other too."""
    sample = type_two(np.random.default_rng(5), 100, 10, 2)
    rng = np.random.default_rng(6)
    wrong = {
        "compute": lognormal(rng, sample.size),
        "communication": rng.uniform(T2, T2 + 2.0, sample.size),
    }[component]
    name = "compute" if component == "compute" else "comm"
    values = {name: np.where(sample.observed, wrong, np.nan)}
    fit = fit_times(Sample(**{**vars(sample), **values}), bootstrap=200)
    assert component in fit.rejected(0.01)
    assert fit.component(component).ks_pvalue == pytest.approx(1 / 201)


def test_complete_samples_given_completion_are_uniform():
    """The transforms ``G_j(x_j)`` with a fixed deadline, half the messages of size 0 and
    unknown thresholds for a tenth of the observations, 40000 observations: uniform, where
    the plain fitted CDF is not."""
    rng = np.random.default_rng(9)
    size = 40_000
    x1, x2 = model(rng, size), T2 + rng.exponential(1 / RATE2, size)
    subsets = rng.integers(1, 4, size).astype(float)
    fraction = np.where(np.arange(size) % 2 == 0, 0.0, 0.5)
    threshold = np.where(np.arange(size) % 10 == 0, np.inf, 2.5)
    observed = subsets * x1 + fraction * x2 <= threshold
    sample = Sample.make(
        np.where(observed, x1, np.nan),
        subsets=subsets,
        fraction=fraction,
        threshold=threshold,
        observed=observed,
        comm=np.where(observed, x2, np.nan),
    )
    fit = fit_times(sample, bootstrap=0)
    for component in fit.components:
        assert 0.9 * component.complete < component.pit.size < component.complete
        assert component.ks < 0.01  # 1.36 / sqrt(30000) = 0.008 is the 5 % point
        assert stats.kstest(component.cdf(component.values), "uniform").statistic > 0.04


def test_qq_points_and_the_report():
    sample = type_two(np.random.default_rng(7), 50, 10, 2)
    fit = fit_times(sample, bootstrap=20)
    model, observed = fit.qq("communication")
    assert model.shape == observed.shape == (fit.comm.complete,) == (400,)
    assert np.all(np.diff(model) > 0) and np.all(np.diff(observed) >= 0)
    assert observed[0] == fit.comm.shift and model[0] > fit.comm.shift
    # the plain quantiles bend at the top; the uncensored equivalents follow them
    given, equivalent = fit.qq("communication", given_complete=True)
    assert given.shape == equivalent.shape == fit.comm.pit.shape
    top = slice(-40, None)
    assert np.mean(model[top] - observed[top]) > 0.4
    assert abs(np.mean(given[top] - equivalent[top])) < 0.3 * np.mean(model[top] - observed[top])
    assert fit.compute.mean == pytest.approx(fit.compute.shift + 1 / fit.compute.rate)
    report = json.loads(json.dumps(fit.as_dict(), allow_nan=False))
    assert report["observations"] == 500 and report["censored"] == 100
    assert report["communication"]["rate"] == fit.comm.rate
    assert set(report["compute"]) >= {"shift", "rate", "shift_interval", "rate_interval", "ks"}
    no_bootstrap = fit_times(sample, bootstrap=0)
    assert no_bootstrap.rejected() == [] and no_bootstrap.as_dict()["compute"]["ks_pvalue"] is None
    with pytest.raises(FitError, match="component: no 'communication'"):
        fit_times(Sample.make(sample.compute[sample.observed]), bootstrap=0).qq("communication")


def test_bootstrap_is_reproducible_and_untestable_samples_are_not_rejected():
    sample = type_two(np.random.default_rng(10), 30, 10, 2)
    first, again = fit_times(sample, bootstrap=30), fit_times(sample, bootstrap=30)
    assert first.comm.ks_pvalue == again.comm.ks_pvalue
    assert first.comm.ks_pvalue != fit_times(sample, bootstrap=30, rng=1).comm.ks_pvalue
    # every complete sample within KS_MARGIN of its threshold: nothing to test, no verdict
    x = np.arange(1.0, 21.0)
    fit = fit_times(Sample.make(x, threshold=x * 1.001), bootstrap=20)
    assert math.isnan(fit.compute.ks) and math.isnan(fit.compute.ks_pvalue)
    assert fit.rejected() == []


# ---------------------------------------------------------------------------------------------
# Errors


def test_too_few_and_constant_samples_name_the_component():
    with pytest.raises(FitError, match=f"compute: 9 complete samples; .* at least {MIN_COMPLETE}"):
        fit_times(Sample.make(np.arange(9.0)))
    with pytest.raises(FitError, match=r"compute: all 20 complete values equal 2 .*needs spread"):
        fit_times(Sample.make(np.full(20, 2.0)))
    with pytest.raises(FitError, match=r"communication: all 20 .*constant"):
        fit_times(Sample.make(np.arange(20.0), comm=np.full(20, 1.0), fraction=0.5))
    censored = np.arange(30) < 8
    with pytest.raises(FitError, match="compute: 8 complete samples"):
        fit_times(Sample.make(np.arange(30.0), threshold=100.0, observed=censored))
    assert issubclass(FitError, UserError)


@pytest.mark.parametrize(
    "change, message",
    [
        ({"compute": np.ones(4)}, r"compute: must have shape \(5,\) like subsets"),
        ({"subsets": np.ones((5, 1))}, r"subsets: must be one-dimensional"),
        ({"subsets": np.array([1, 1, 0, 1, 1.0])}, r"subsets: must be a finite number > 0"),
        ({"fraction": -np.ones(5)}, r"fraction: must be finite, >= 0 \(observation 0"),
        ({"compute": np.array([1, 2, np.nan, 4, 5])}, r"compute: must be finite.*observation 2"),
        ({"observed": np.ones(5)}, r"observed: must be booleans"),
        ({"threshold": np.full(5, np.nan)}, r"threshold: must be >= 0"),
        ({"comm": np.ones(3)}, r"comm: must have shape"),
        ({"compute": ["a"] * 5}, r"compute: must be numbers"),
        ({"iteration": np.zeros(5)}, r"iteration: must be integers"),
    ],
)
def test_bad_samples_name_the_field(change, message):
    fields = {
        "subsets": np.ones(5),
        "fraction": np.full(5, 0.5),
        "threshold": np.full(5, np.inf),
        "observed": np.ones(5, dtype=bool),
        "compute": np.arange(1.0, 6.0),
        "comm": None,
    }
    with pytest.raises(FitError, match=message):
        Sample(**{**fields, **change})


def test_censored_observations_need_a_threshold_and_options_are_checked():
    with pytest.raises(FitError, match="threshold: must be finite for a censored observation"):
        Sample.make([1.0, np.nan], observed=[True, False])
    with pytest.raises(FitError, match="fraction: needed with comm"):
        Sample.make([1.0], comm=[1.0])
    with pytest.raises(FitError, match=r"confidence: must be in \(0, 1\)"):
        fit_times(Sample.make(np.arange(20.0)), confidence=1.0)
    with pytest.raises(FitError, match="bootstrap: must be an integer >= 0"):
        fit_times(Sample.make(np.arange(20.0)), bootstrap=-1)


def test_samples_are_read_only_and_pool():
    sample = Sample.make([1.0, np.nan, 3.0], threshold=[np.inf, 2.0, np.inf], observed=[1, 0, 1])
    assert np.isnan(sample.compute[1]) and sample.censored == 1
    with pytest.raises(ValueError, match="read-only"):
        sample.compute[0] = 2.0
    both = Sample.pool([sample, sample])
    assert both.size == 6 and both.censored == 2 and both.iteration is None
    with pytest.raises(FitError, match="comm: some samples have a communication part"):
        Sample.pool([sample, Sample.make([1.0], comm=[1.0], fraction=0.5)])


# ---------------------------------------------------------------------------------------------
# Homogeneity


def test_identical_workers_are_not_told_apart():
    seeds, workers = 60, 5
    pvalues = []
    for seed in range(seeds):
        sample = type_two(np.random.default_rng(seed), 100, workers, 1, comm=seed % 6 == 0)
        test = compare_groups(by_worker(sample, workers))
        pvalues.append((test.pvalue, test.rates_pvalue))
    pvalues = np.array(pvalues)
    print(f"identical workers, {seeds} seeds: rejected at 1 %: {(pvalues < 0.01).sum(axis=0)}")
    assert np.all((pvalues < 0.01).sum(axis=0) <= 3)
    assert np.all(stats.kstest(pvalues[:, 0], "uniform").pvalue > 0.001)


def test_workers_with_other_rates_or_shifts_are_told_apart():
    rng = np.random.default_rng(8)
    slow = type_two(rng, 200, 10, 2, rate1=1.0)
    fast = type_two(rng, 200, 10, 2, rate1=2.0)
    test = compare_groups([slow, fast])
    assert (test.groups, test.df, test.rates_df) == (2, 6, 2)
    assert test.pvalue < 1e-6 and test.rates_pvalue < 1e-6 and test.differ()
    # the shift alone differs: only the test of shifts and rates sees it
    late = type_two(rng, 200, 10, 2, shift1=T1 + 0.05)
    test = compare_groups([fast, late])
    assert test.pvalue < 1e-6 and test.rates_pvalue > 0.01
    assert json.loads(json.dumps(test.as_dict())) == vars(test)


def test_compare_groups_needs_fittable_groups():
    good = Sample.make(np.arange(1.0, 21.0))
    with pytest.raises(FitError, match="at least 2 groups"):
        compare_groups([good])
    with pytest.raises(FitError, match="group 1: compute: 5 complete samples"):
        compare_groups([good, Sample.make(np.arange(1.0, 6.0))])
