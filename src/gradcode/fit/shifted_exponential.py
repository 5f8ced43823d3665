"""Maximum-likelihood fit of paper 000's shifted-exponential times to censored observations.

The model (Ye & Abbe 2018)
--------------------------
An observation ``j`` is one worker in one iteration of a run. The worker computes ``p_j`` data
subsets, each taking ``X1 = t1 + Exp(lambda1)`` (the same draw for all its subsets), then sends
one message of ``q_j`` full-length vectors, taking ``q_j X2`` with ``X2 = t2 + Exp(lambda2)``.
Its response time is ``Y_j = p_j X1 + q_j X2``. The observation is *complete* (both ``x1_j`` and
``x2_j`` are known) iff it arrived before its threshold ``c_j``, and *right-censored* otherwise
(only ``Y_j > c_j`` is known). A run without measured communication has no ``X2``: its model
is ``Y_j = p_j X1``. ``c_j = inf`` marks a complete observation whose threshold is unknown.

The censoring of a run is type-II-like: the master stops waiting once enough workers arrived,
so ``c_j`` is the arrival time of the last worker it used, a random quantity. The likelihood
of the order statistics of an iteration has the same form as that of fixed (type-I) thresholds
up to a constant, so the estimators below treat the thresholds as fixed:

    l = sum_complete [log f1(x1_j) + log f2(x2_j)] + sum_censored log S_j(c_j),

``f_i(x) = lambda_i exp(-lambda_i (x - t_i))`` for ``x >= t_i`` and ``S_j`` the survival of
``p_j X1 + q_j X2``. With ``a = lambda1 / p``, ``b = lambda2 / q`` and the slack
``y = c - p t1 - q t2``: ``S = 1`` for ``y <= 0``, else ``S = (b e^{-a y} - a e^{-b y}) / (b -
a)``, ``(1 + a y) e^{-a y}`` when ``a == b`` and ``e^{-a y}`` when ``q = 0``
(``log_survival`` evaluates it in logs, stably for ``a`` near ``b``).

Estimators
----------
- **Shifts.** Raising ``t_i`` raises every complete term and every survival, so the likelihood
  increases in each shift up to the smallest complete value: ``t_i_hat = min x_i``. This MLE is
  biased upwards by about ``1 / (n_eff lambda_i)`` (below); ``ComponentFit.shift_bias`` is that
  estimate and ``unbiased_shift`` the corrected value (without censoring it is the UMVUE
  ``x_(1) - S / (n (n - 1))``, ``S = sum(x - x_(1))``). The reported ``shift`` stays the MLE, so
  that ``shift``, ``rate`` and ``loglik`` belong together; ``mean = shift + 1 / rate`` is then
  the sample mean for uncensored data, itself unbiased.
- **Rates**, shifts at their MLE, maximise ``l`` over the log-rates (scipy). Without a
  communication part (or when no censored observation has ``q > 0``) the components decouple
  and ``lambda1 = r / (sum_complete (x1_j - t1) + sum_censored (c_j / p_j - t1)+)`` in closed
  form (``r`` complete samples).

Intervals at ``confidence``
---------------------------
- **Rates**: profile likelihood, each rate profiled over the other, cut at the chi-square(1)
  quantile. The profiled likelihood drops one ``log lambda_i`` per component: the minimum sits
  at the estimated shift and carries no rate information. Without censoring this is the exact
  likelihood of the spacings, ``2 lambda S ~ chi2(2n - 2)`` (n = 10: 94.8 % coverage instead of
  92.2 % with the plain profile).
- **Shifts**: one-sided, ``[x_(1) - w / (n_eff lambda~), x_(1)]``, from the exponential-spacing
  pivot ``n_eff lambda (x_(1) - t) ~ Exp(1)``. ``w`` is the ``confidence`` quantile of
  ``F(2, 2r - 2)`` and ``lambda~`` the maximiser of the profiled likelihood above, which
  accounts for the estimated rate. Without censoring (``n_eff = n = r``,
  ``lambda~ = (n - 1) / S``) this is the exact pivot ``n (x_(1) - t) / (S / (n - 1)) ~ F(2,
  2n - 2)``. With censoring, complete values near the shift arrive at rate ``lambda n_eff``,
  ``n_eff = sum_j P(j complete | X_i,j = t_i)``, over *all* observations, complete or not
  (``1 - e^{-b y_j}`` for the compute part: the message must still fit under the threshold).
  ``n_eff`` is evaluated at the estimates; the pivot is then approximate, since ``P(j
  complete | X = t + s)`` is taken as constant over the small ``s`` that matter. Under the
  count rule a censored observation's threshold is lower than it would have been had that
  worker drawn near the shift, so ``n_eff`` comes out a little low. The intervals err wide:
  measured coverage 96.75 % and 97 % at 95 % for 2000 observations, 10 workers, 3 censored, in
  400 seeds. ``unbiased_shift`` over-corrects by about 7 % of the bias there.

Goodness of fit
---------------
Given which observations are complete, each complete ``x_j`` is independent with the fitted
conditional CDF ``G_j(x) = P(X <= x | Y_j <= c_j)``, so its probability integral transform
``u_j = G_j(x_j)`` is uniform. This also holds for the count rule: given the arrival that
ended the iteration, the faster ones are truncated at it. ``ks`` is the Kolmogorov-Smirnov
distance of the ``u_j`` to the uniform law (``pit`` keeps them). Without censoring
``G_j = F``: the plain KS distance to the fitted CDF. Two choices that look simpler fail:

- the plain fitted CDF: the distance is then dominated by the censoring gap ``1 - F(c)``, a
  smooth function of the estimates, which the bootstrap reproduces around whatever was
  estimated. With a fixed deadline its p-value sat near 0.5 for exponential, lognormal and
  uniform data alike;
- the mixture ``sum_j P(X <= x, j complete) / sum_j P(j complete)``: it weights an iteration
  by its chance of completion, whereas the count rule always keeps the same number. With
  type-II data it rejected correct models (1 % level: 15 % of seeds).

The observation that ended an iteration sits *at* its threshold, an atom outside this
conditional law (real logs put it only near ``c``: clocks, the decoding). So the distance
uses the complete samples with ``Y_j <= (1 - KS_MARGIN) c_j``, each truncated at that reduced
threshold, in the data and in every replicate alike.

The p-value comes from a parametric bootstrap that replays the censoring: draw ``X1`` and
``X2`` for all observations from the fit, censor them, refit and recompute the distance, so
that the estimated parameters are accounted for. The replay uses the same thresholds ``c_j``
(type I). For observations labelled by ``Sample.iteration`` it instead keeps as many of each
label's fastest as were observed (the count rule of type II: a fresh draw exceeds the
``(n - s)``-th of ``n`` arrivals with probability ``(s + 1) / (n + 1)``, not ``s / n``).
Measured calibration, 40 to 200 seeds: a fixed deadline, and type-II runs labelled or not,
are uniform. One worker's observations, whose threshold depends on whether that worker was
fast, come out slightly anti-conservative: at the 1 % level, 1-3 % of seeds for 300-1000
observations. The censoring couples the components, so a misfit of one can show in the
other's distance too. ``TimesFit.rejected`` names the components below a level.

The QQ points (``qq``) are the fitted quantiles at ``(i - 0.5) / r`` against the sorted
complete samples. Censoring thins the upper tail of those samples, which bends a correct
model's plot below the diagonal at the top. With ``given_complete=True`` the points are
against their uncensored equivalents ``F^-1(u_j)`` instead, straight for a correct model.

Homogeneity
-----------
``compare_groups`` tests "one set of parameters for all groups" (workers) by a likelihood
ratio, see its docstring.

Where the parts live: the observations in ``gradcode.fit.sample``, the survival and the
likelihood in ``gradcode.fit.likelihood``, the fits' results in ``gradcode.fit.fitted``; this
module estimates, tests and compares.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from gradcode.fit.fitted import ComponentFit, TimesFit, finite_or_none
from gradcode.fit.likelihood import Problem, censoring_slack, rate_scales
from gradcode.fit.sample import FitError, Sample

#: the fewest complete samples a component is fitted from
MIN_COMPLETE = 10
#: the KS distance leaves out the complete samples within this fraction of their thresholds
KS_MARGIN = 0.01
#: component names, in the order of the rate vectors below
COMPONENTS = ("compute", "communication")


# ---------------------------------------------------------------------------------------------
# Fitting


def fit_times(
    sample: Sample,
    *,
    confidence: float = 0.95,
    bootstrap: int = 200,
    rng: np.random.Generator | int | None = None,
) -> TimesFit:
    """The maximum-likelihood fit of ``sample`` with intervals at ``confidence`` and KS
    p-values from ``bootstrap`` parametric replicates (0: none, p-values ``nan``) drawn from
    ``rng`` (default ``np.random.default_rng(0)``). See the module docstring.

    Raises ``FitError`` (naming the component) with fewer than ``MIN_COMPLETE`` complete
    samples, constant samples or a non-finite fit. A bad KS p-value is no error: see
    ``TimesFit.rejected``.
    """
    if not 0 < confidence < 1:
        raise FitError(f"confidence: must be in (0, 1) (got {confidence!r})")
    if isinstance(bootstrap, bool) or not isinstance(bootstrap, int) or bootstrap < 0:
        raise FitError(f"bootstrap: must be an integer >= 0 (got {bootstrap!r})")
    rng = np.random.default_rng(0 if rng is None else rng)
    values = _checked(sample)
    shifts = np.array([v[0] for v in values])
    problem = Problem.build(sample, shifts)
    rates, loglik = problem.maximise()
    adjusted, _ = problem.maximise(drop=1)
    for name, rate, other in zip(COMPONENTS, rates, adjusted, strict=False):
        if not (math.isfinite(rate) and rate > 0 and math.isfinite(other) and other > 0):
            raise FitError(f"{name}: the fitted rate is not finite and positive (got {rate!r})")
    if not math.isfinite(loglik):
        raise FitError(f"compute: the log-likelihood is not finite (got {loglik!r})")
    critical = float(stats.chi2.ppf(confidence, 1))
    effective = _effective(sample, shifts, rates)
    if bootstrap:
        replicates = _bootstrap_ks(sample, shifts, rates, bootstrap, rng)
    else:
        replicates = np.full((0, len(values)), np.nan)
    cut = sample.threshold * (1.0 - KS_MARGIN)
    tested = sample.observed & (_response(sample) <= cut)
    arrays = [sample.compute, sample.comm]
    components = []
    for k, (name, x) in enumerate(zip(COMPONENTS, values, strict=False)):
        width = 1.0 / (effective[k] * adjusted[k])
        quantile = float(stats.f.ppf(confidence, 2, 2 * (x.size - 1)))
        design = (sample.subsets[tested], sample.fraction[tested], cut[tested])
        pit = np.sort(_pit(k, arrays[k][tested], shifts, rates, *design))
        ks = float(_distances(pit[None, :], np.ones((1, pit.size), dtype=bool))[0])
        valid = replicates[:, k][np.isfinite(replicates[:, k])]
        if valid.size and math.isfinite(ks):
            pvalue = (1 + np.count_nonzero(valid >= ks)) / (1 + valid.size)
        else:
            pvalue = math.nan
        components.append(
            ComponentFit(
                name=name,
                shift=float(shifts[k]),
                rate=float(rates[k]),
                shift_interval=(float(shifts[k] - quantile * width), float(shifts[k])),
                rate_interval=problem.profile_interval(k, critical),
                complete=int(x.size),
                ks=ks,
                ks_pvalue=float(pvalue),
                effective=float(effective[k]),
                shift_bias=float(width),
                values=_readonly(x),
                pit=_readonly(pit),
            )
        )
    return TimesFit(
        compute=components[0],
        comm=components[1] if len(components) == 2 else None,
        loglik=float(loglik),
        observations=sample.size,
        censored=sample.censored,
        confidence=float(confidence),
        bootstrap=int(bootstrap),
    )


def _checked(sample: Sample) -> list[np.ndarray]:
    """Each component's sorted complete values, after the checks that make a fit possible."""
    values = sample.complete()
    for name, x in zip(COMPONENTS, values, strict=False):
        if x.size < MIN_COMPLETE:
            raise FitError(
                f"{name}: {x.size} complete samples; a fit needs at least {MIN_COMPLETE}"
            )
        if x[0] == x[-1]:
            raise FitError(
                f"{name}: all {x.size} complete values equal {x[0]:g} (constant; a shifted "
                "exponential needs spread)"
            )
    return values


def _readonly(array: np.ndarray) -> np.ndarray:
    array = np.array(array, dtype=float)
    array.flags.writeable = False
    return array


def _effective(sample: Sample, shifts: np.ndarray, rates: np.ndarray) -> np.ndarray:
    """``n_eff`` per component, shape ``(K,)``: the expected number of observations that
    would be complete if that component's draw sat at its shift."""
    slack = censoring_slack(sample, shifts)
    positive = slack > 0
    if sample.comm is None:
        chance = [positive.astype(float)]
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            b = np.where(sample.fraction > 0, rates[1] / sample.fraction, math.inf)
            a = rates[0] / sample.subsets
            chance = [
                np.where(positive, -np.expm1(-b * slack), 0.0),  # the message must fit in y
                np.where(positive, -np.expm1(-a * slack), 0.0),  # the computation must fit
            ]
    # at least the minimum's own observation was complete there
    return np.array([max(float(np.sum(c)), 1.0) for c in chance])


def _response(sample: Sample) -> np.ndarray:
    """``Y_j = p_j x1_j + q_j x2_j``, shape ``(J,)`` (nan where censored)."""
    total = sample.subsets * sample.compute
    return total if sample.comm is None else total + sample.fraction * sample.comm


def _pit(
    k: int,
    x: np.ndarray,
    shifts: Sequence[Any],
    rates: Sequence[Any],
    subsets: np.ndarray,
    fraction: np.ndarray,
    cut: np.ndarray,
) -> np.ndarray:
    """``G_j(x_j) = P(X_kj <= x_j | Y_j <= cut_j)`` under the fit ``(shifts, rates)``: the
    probability integral transform of component ``k``'s values given completion. Everything
    broadcasts to ``x``'s shape ``(..., J)`` (a shift or rate per replicate: shape ``(B,
    1)``)."""
    t1, rate1 = shifts[0], rates[0]
    if len(shifts) == 1:
        ends = cut / subsets
        with np.errstate(invalid="ignore", divide="ignore"):
            done = -np.expm1(-rate1 * np.maximum(np.minimum(x, ends) - t1, 0.0))
            return np.nan_to_num(done / -np.expm1(-rate1 * np.maximum(ends - t1, 0.0)))
    t2, rate2 = shifts[1], rates[1]
    slack = cut - subsets * t1 - fraction * t2
    a = rate1 / subsets
    moving = fraction > 0
    b = np.where(moving, rate2 / np.where(moving, fraction, 1.0), math.inf)
    reach = _joint(np.inf, slack, a, b)  # P(j complete)
    if k == 0:
        joint = _joint(subsets * (x - t1), slack, a, b)
    else:
        # a message of size 0 takes no time: X2 does not decide whether j is complete
        plain = -np.expm1(-rate2 * np.maximum(x - t2, 0.0))
        joint = np.where(
            moving, _joint(fraction * (x - t2), slack, np.where(moving, b, 1.0), a), plain * reach
        )
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.minimum(np.nan_to_num(joint / reach), 1.0)


def _joint(m: Any, y: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``P(U <= m, U + V <= y)`` for independent ``U ~ Exp(a)``, ``V ~ Exp(b)`` (``b = inf``:
    ``V = 0``; ``y = inf``: no threshold), broadcast."""
    m = np.maximum(np.minimum(m, y), 0.0)
    spread = np.abs(b - a)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        # P(U <= m, U + V > y) = a e^{-b y} (e^{(b - a) m} - 1) / (b - a), in a form that
        # neither overflows (the exponent below is -b (y - m) - a m <= 0 when b > a) nor
        # cancels as b -> a
        share = np.where(spread * m > 1e-8, -np.expm1(-spread * m) / spread, m)
        late = np.exp(-b * y + np.maximum(b - a, 0.0) * m) * share
        late = np.where(np.isfinite(b) & np.isfinite(y) & (m > 0), late, 0.0)
        return np.maximum(-np.expm1(-a * m) - a * late, 0.0)


def _distances(pit: np.ndarray, tested: np.ndarray) -> np.ndarray:
    """The Kolmogorov-Smirnov distance to the uniform law of each row's ``tested`` values of
    ``pit`` (both shape ``(B, J)``): shape ``(B,)``, nan for rows with fewer than two."""
    if pit.shape[1] == 0:
        return np.full(pit.shape[0], np.nan)
    ordered = np.sort(np.where(tested, pit, np.inf), axis=1)
    count = np.count_nonzero(tested, axis=1)[:, None]
    i = np.arange(1, pit.shape[1] + 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        gap = np.maximum(i / count - ordered, ordered - (i - 1) / count)
    distance = np.where(i <= count, gap, -np.inf).max(axis=1)
    return np.where(count[:, 0] >= 2, distance, np.nan)


def _bootstrap_ks(
    sample: Sample, shifts: np.ndarray, rates: np.ndarray, replicates: int, rng: np.random.Generator
) -> np.ndarray:
    """The KS distances of ``replicates`` samples drawn from the fit, censored like ``sample``
    and refitted: shape ``(replicates, K)``, ``nan`` where a replicate cannot be fitted or
    tested (fewer than two samples)."""
    size, components = sample.size, shifts.size
    p, q = sample.subsets, sample.fraction
    rule = _count_rule(sample)
    out = np.full((replicates, components), np.nan)
    chunk = max(1, (1 << 19) // (size * components))
    for start in range(0, replicates, chunk):
        count = min(chunk, replicates - start)
        draws = rng.standard_exponential((components, count, size))
        x = shifts[:, None, None] + draws / rates[:, None, None]  # (K, B, J)
        total = p * x[0] + (q * x[1] if components == 2 else 0.0)  # (B, J)
        if rule is None:
            thresholds = np.broadcast_to(sample.threshold, total.shape)
        else:
            thresholds = _replayed(total, sample, *rule)
        observed = total <= thresholds  # inf thresholds: always observed
        complete = np.count_nonzero(observed, axis=1)  # (B,)
        lows = np.where(observed, x, np.inf).min(axis=2)  # (K, B)
        excess = np.where(observed, x - lows[..., None], 0.0).sum(axis=2)  # (K, B)
        slack = thresholds - p * lows[0][:, None]
        if components == 2:
            slack = slack - q * lows[1][:, None]
        censored = ~observed & (slack > 0)
        fitted = np.full((components, count), np.nan)
        if components == 1:
            exposure = excess[0] + np.where(censored, slack / p, 0.0).sum(axis=1)
            with np.errstate(divide="ignore", invalid="ignore"):
                fitted[0] = complete / exposure
        else:
            for b in np.flatnonzero(complete >= 2):
                keep = censored[b]
                problem = Problem(
                    np.array([complete[b], complete[b]], dtype=float),
                    excess[:, b],
                    *rate_scales(sample, keep),
                    slack[b, keep],
                )
                fitted[:, b] = problem.maximise()[0]
        usable = (complete >= 2) & np.all(np.isfinite(fitted) & (fitted > 0), axis=0)
        cut = thresholds * (1.0 - KS_MARGIN)
        tested = observed & (total <= cut) & usable[:, None]
        fit = ([v[:, None] for v in lows], [v[:, None] for v in fitted])
        for k in range(components):
            pit = _pit(k, x[k], *fit, p, q, cut)
            out[start : start + count, k] = _distances(pit, tested)
    return out


def _count_rule(sample: Sample) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """For the replay of ``sample.iteration``'s count rule: the observations of each label,
    shape ``(G, largest)`` (index ``J`` pads), how many of each were observed, shape ``(G,)``,
    and each observation's label index, shape ``(J,)``; ``None`` without labels."""
    if sample.iteration is None:
        return None
    size = sample.size
    _, group = np.unique(sample.iteration, return_inverse=True)
    sizes = np.bincount(group)
    kept = np.bincount(group, weights=sample.observed, minlength=sizes.size).astype(int)
    order = np.argsort(group, kind="stable")
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    members = np.full((sizes.size, int(sizes.max())), size)
    members[group[order], np.arange(size) - starts[group[order]]] = order
    return members, kept, group


def _replayed(
    total: np.ndarray, sample: Sample, members: np.ndarray, kept: np.ndarray, group: np.ndarray
) -> np.ndarray:
    """Each replicate observation's threshold, shape ``(B, J)``: the arrival of its label's
    ``kept``-th fastest (the original threshold for labels with nothing observed)."""
    padded = np.concatenate([total, np.full((total.shape[0], 1), np.inf)], axis=1)
    ordered = np.sort(padded[:, members], axis=2)  # (B, G, largest)
    cut = np.take_along_axis(ordered, np.maximum(kept - 1, 0)[None, :, None], axis=2)[..., 0]
    return np.where(kept[group] > 0, cut[:, group], sample.threshold)


# ---------------------------------------------------------------------------------------------
# Homogeneity


@dataclass(frozen=True)
class Homogeneity:
    """Likelihood-ratio tests of one set of parameters for ``groups`` groups.

    ``statistic``, ``df``, ``pvalue``: shifts and rates common against per group (2 df per
    shift and 1 per rate, per component and extra group); ``rates_statistic``, ``rates_df``,
    ``rates_pvalue``: rates common with per-group shifts against per group. All plain Python
    numbers (JSON-able as they are).
    """

    groups: int
    statistic: float
    df: int
    pvalue: float
    rates_statistic: float
    rates_df: int
    rates_pvalue: float

    def differ(self, level: float = 0.01) -> bool:
        """Whether the groups differ at ``level`` (the test of shifts and rates)."""
        return self.pvalue < level

    def as_dict(self) -> dict[str, Any]:
        return finite_or_none(dict(vars(self)))


def compare_groups(samples: Sequence[Sample]) -> Homogeneity:
    """Test whether ``samples`` (groups, e.g. workers: all with comm or all without) share one
    set of parameters.

    Two likelihood ratios against the per-group fits (each group at its own MLE):

    - ``statistic``: one pooled fit (shifts at the pooled minima). Its rate part is regular,
      1 df per component and extra group. The shift part is not (the shift is a boundary of
      the support): without censoring and with known rates, twice its log-ratio is twice the
      sum of ``G - 1`` independent standard exponentials (the groups' minima above the
      overall one, by the memorylessness of their spacings), chi-square with 2 df per extra
      group. So ``df = 3 (G - 1)`` per component; with censoring and estimated rates the
      chi-square law is asymptotic and approximate.
    - ``rates_statistic``: common rates, each group keeping its own shifts (at their MLE,
      whatever the rates), a regular test with ``df = G - 1`` per component; it ignores
      differences in the shifts.

    Each group must be fittable on its own (``MIN_COMPLETE``...), else ``FitError`` naming the
    group.
    """
    if len(samples) < 2:
        raise FitError(f"samples: compare_groups needs at least 2 groups (got {len(samples)})")
    pooled = Sample.pool(samples)
    problems = []
    separate = 0.0
    for index, sample in enumerate(samples):
        try:
            values = _checked(sample)
        except FitError as error:
            raise FitError(f"group {index}: {error}") from None
        problem = Problem.build(sample, np.array([v[0] for v in values]))
        problems.append(problem)
        separate += problem.maximise()[1]
    common_rates = Problem.join(problems).maximise()[1]
    shifts = np.array([v[0] for v in _checked(pooled)])
    common = Problem.build(pooled, shifts).maximise()[1]
    if not all(math.isfinite(v) for v in (separate, common_rates, common)):
        raise FitError("samples: a log-likelihood of the group comparison is not finite")
    components, extra = shifts.size, len(samples) - 1
    # the optimiser's tolerance can leave a tiny negative statistic
    statistic = max(2.0 * (separate - common), 0.0)
    rates_statistic = max(2.0 * (separate - common_rates), 0.0)
    df, rates_df = 3 * components * extra, components * extra
    return Homogeneity(
        groups=len(samples),
        statistic=float(statistic),
        df=int(df),
        pvalue=float(stats.chi2.sf(statistic, df)),
        rates_statistic=float(rates_statistic),
        rates_df=int(rates_df),
        rates_pvalue=float(stats.chi2.sf(rates_statistic, rates_df)),
    )
