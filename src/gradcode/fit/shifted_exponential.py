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
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from scipy import optimize, stats

from gradcode.errors import UserError

#: the fewest complete samples a component is fitted from
MIN_COMPLETE = 10
#: the KS distance leaves out the complete samples within this fraction of their thresholds
KS_MARGIN = 0.01
#: component names, in the order of the rate vectors below
COMPONENTS = ("compute", "communication")


class FitError(UserError):
    """Observations a timing model cannot be fitted to; one line naming the field or
    component."""


# ---------------------------------------------------------------------------------------------
# Observations


@dataclass(frozen=True, eq=False)
class Sample:
    """Observations of one run or a pool of runs, all arrays of shape ``(J,)``.

    ``subsets`` p_j > 0; ``fraction`` q_j >= 0 (message size in full-length vectors);
    ``threshold`` c_j >= 0, ``inf`` allowed where observed; ``observed`` complete (bool);
    ``compute`` x1_j, finite >= 0 where observed (set to nan elsewhere); ``comm`` x2_j likewise,
    or ``None`` for a sample without a communication part. ``iteration`` (integers, optional)
    labels observations censored together by a count rule (the iteration used its fastest
    ones): the KS bootstrap then replays that rule, keeping as many per label as were observed,
    instead of the fixed thresholds (see the module docstring). Validated on construction (a
    ``FitError`` naming the field); the arrays are read-only copies.
    """

    subsets: np.ndarray
    fraction: np.ndarray
    threshold: np.ndarray
    observed: np.ndarray
    compute: np.ndarray
    comm: np.ndarray | None = None
    iteration: np.ndarray | None = None

    def __post_init__(self) -> None:
        subsets = _numbers("subsets", self.subsets, None)
        size = subsets.shape
        if subsets.size == 0:
            raise FitError("subsets: needs at least one observation")
        observed = np.asarray(self.observed)
        if observed.dtype != bool:
            raise FitError(f"observed: must be booleans (got dtype {observed.dtype})")
        _shape("observed", observed, size)
        fraction = _numbers("fraction", self.fraction, size)
        threshold = _numbers("threshold", self.threshold, size)
        _require("subsets", subsets, np.isfinite(subsets) & (subsets > 0), "a finite number > 0")
        _require("fraction", fraction, np.isfinite(fraction) & (fraction >= 0), "finite, >= 0")
        _require("threshold", threshold, threshold >= 0, ">= 0 (inf allowed)")
        _require(
            "threshold",
            threshold,
            observed | np.isfinite(threshold),
            "finite for a censored observation",
        )
        values = {"compute": self.compute, "comm": self.comm}
        for name, value in values.items():
            if value is None:
                continue
            array = _numbers(name, value, size).copy()
            _require(name, array, ~observed | (np.isfinite(array) & (array >= 0)), "finite, >= 0")
            array[~observed] = np.nan
            values[name] = array
        iteration = None
        if self.iteration is not None:
            iteration = np.asarray(self.iteration)
            if not np.issubdtype(iteration.dtype, np.integer):
                raise FitError(f"iteration: must be integers (got dtype {iteration.dtype})")
            _shape("iteration", iteration, size)
        arrays = {
            "subsets": subsets,
            "fraction": fraction,
            "threshold": threshold,
            "observed": observed,
            **values,
            "iteration": iteration,
        }
        for name, array in arrays.items():
            if array is not None:
                array = np.array(array)
                array.flags.writeable = False
                object.__setattr__(self, name, array)

    @classmethod
    def make(
        cls,
        compute: Any,
        *,
        subsets: Any = 1.0,
        fraction: Any = None,
        threshold: Any = math.inf,
        observed: Any = True,
        comm: Any = None,
        iteration: Any = None,
    ) -> Sample:
        """A sample with scalars broadcast to ``compute``'s shape ``(J,)``: by default every
        observation is complete, of one subset, with an unknown threshold; ``fraction`` is
        required with ``comm`` (0 without)."""
        compute = np.asarray(compute, dtype=float)
        size = compute.shape
        if fraction is None:
            if comm is not None:
                raise FitError("fraction: needed with comm (the message size per observation)")
            fraction = 0.0

        def broadcast(name: str, value: Any, dtype: type) -> np.ndarray:
            array = np.asarray(value, dtype=dtype)
            if array.ndim == 0:
                return np.full(size, array, dtype=dtype)
            return array

        return cls(
            subsets=broadcast("subsets", subsets, float),
            fraction=broadcast("fraction", fraction, float),
            threshold=broadcast("threshold", threshold, float),
            observed=broadcast("observed", observed, bool),
            compute=compute,
            comm=None if comm is None else np.asarray(comm, dtype=float),
            iteration=None if iteration is None else np.asarray(iteration),
        )

    @classmethod
    def pool(cls, samples: Sequence[Sample]) -> Sample:
        """The observations of ``samples`` in one sample (all with comm, or all without).
        ``iteration`` labels are kept as they are (one label, one iteration across the
        samples) if every sample has them."""
        if not samples:
            raise FitError("samples: nothing to pool")
        with_comm = {sample.comm is not None for sample in samples}
        if len(with_comm) > 1:
            raise FitError("comm: some samples have a communication part and some do not")

        def joined(name: str) -> np.ndarray:
            return np.concatenate([getattr(sample, name) for sample in samples])

        return cls(
            subsets=joined("subsets"),
            fraction=joined("fraction"),
            threshold=joined("threshold"),
            observed=joined("observed"),
            compute=joined("compute"),
            comm=joined("comm") if samples[0].comm is not None else None,
            iteration=(
                joined("iteration") if all(s.iteration is not None for s in samples) else None
            ),
        )

    @property
    def size(self) -> int:
        """The number of observations J."""
        return int(self.subsets.size)

    @property
    def censored(self) -> int:
        """The number of censored observations."""
        return int(self.size - np.count_nonzero(self.observed))

    def complete(self) -> list[np.ndarray]:
        """Each component's complete values, sorted: ``[x1]`` or ``[x1, x2]``, shape
        ``(r,)``."""
        arrays = [self.compute] if self.comm is None else [self.compute, self.comm]
        return [np.sort(array[self.observed]) for array in arrays]


def _numbers(name: str, value: Any, shape: tuple[int, ...] | None) -> np.ndarray:
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise FitError(f"{name}: must be numbers") from None
    if array.ndim != 1:
        raise FitError(f"{name}: must be one-dimensional (got shape {array.shape})")
    if shape is not None:
        _shape(name, array, shape)
    return array


def _shape(name: str, array: np.ndarray, shape: tuple[int, ...]) -> None:
    if array.shape != shape:
        raise FitError(f"{name}: must have shape {shape} like subsets (got {array.shape})")


def _require(name: str, array: np.ndarray, ok: np.ndarray, what: str) -> None:
    bad = np.flatnonzero(~ok)
    if bad.size:
        first = int(bad[0])
        raise FitError(
            f"{name}: must be {what} (observation {first} is {array[first]!r}; {bad.size} bad)"
        )


# ---------------------------------------------------------------------------------------------
# The survival and the likelihood


def log_survival(y: Any, a: Any, b: Any) -> np.ndarray:
    """``log P(A + B > y)`` for independent ``A ~ Exp(a)``, ``B ~ Exp(b)``, elementwise.

    ``y``, ``a > 0`` and ``b > 0`` broadcast to one shape; ``b = inf`` means ``B = 0`` (a
    message of size ``q = 0``); ``y <= 0`` gives 0. Symmetric in ``a`` and ``b``; exact as
    ``a -> b`` (``log((1 + a y) e^{-a y})`` at ``a == b``).
    """
    y, a, b = np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in (y, a, b)))
    out = np.zeros(y.shape)
    positive = y > 0
    out[positive] = _log_survival_positive(y[positive], a[positive], b[positive])
    return out


def _log_survival_positive(y: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    # With lo <= hi and d = hi - lo: S = e^{-lo y} (1 + lo (1 - e^{-d y}) / d). The
    # (1 - e^{-d y}) / d factor is computed by expm1, which keeps its relative precision as
    # d -> 0 (the difference hi - lo is inexact there, but the factor hardly depends on it);
    # hi = inf makes it 0 (S = e^{-a y}).
    lo = np.minimum(a, b)
    d = np.maximum(a, b) - lo
    z = d * y
    with np.errstate(invalid="ignore", divide="ignore"):
        factor = np.where(z > 1e-8, -np.expm1(-z) / d, y * (1.0 - 0.5 * z))
        out = -lo * y + np.log1p(lo * factor)
    return np.where(np.isinf(y), -np.inf, out)


@dataclass(frozen=True)
class _Problem:
    """The log-likelihood as a function of the rates, the shifts fixed.

    ``count``, ``excess``: shape ``(K,)``, per component the number of complete samples and
    ``sum (x - shift)`` over them (K = 1 without comm, 2 with). ``inv_p``, ``inv_q`` (``inf``
    where ``q = 0``) and ``slack`` ``y = c - p t1 - q t2``: shape ``(k,)``, the censored
    observations with positive slack (the others have ``S = 1``, whatever the rates).
    """

    count: np.ndarray
    excess: np.ndarray
    inv_p: np.ndarray
    inv_q: np.ndarray
    slack: np.ndarray

    @classmethod
    def build(cls, sample: Sample, shifts: np.ndarray) -> _Problem:
        observed = sample.observed
        values = [sample.compute] if sample.comm is None else [sample.compute, sample.comm]
        count = np.array([np.count_nonzero(observed)] * len(values), dtype=float)
        excess = np.array([np.sum(v[observed] - s) for v, s in zip(values, shifts, strict=True)])
        slack = _slack(sample, shifts)
        keep = ~observed & (slack > 0)
        return cls(count, excess, *_scales(sample, keep), slack[keep])

    @classmethod
    def join(cls, problems: Sequence[_Problem]) -> _Problem:
        """The sum of the problems' log-likelihoods (shared rates, own shifts)."""
        return cls(
            np.sum([p.count for p in problems], axis=0),
            np.sum([p.excess for p in problems], axis=0),
            *(np.concatenate([getattr(p, n) for p in problems]) for n in _CENSORED_FIELDS),
        )

    @property
    def coupled(self) -> bool:
        """Whether a censored observation ties the two rates together (``q > 0``)."""
        return self.count.size == 2 and bool(np.isfinite(self.inv_q).any())

    def loglik(self, rates: np.ndarray, drop: int = 0) -> float:
        """The log-likelihood at ``rates`` (shape ``(K,)``); ``drop = 1`` leaves out one
        ``log rate`` per component (the profiled likelihood of the module docstring)."""
        value = float(np.sum((self.count - drop) * np.log(rates) - rates * self.excess))
        if self.slack.size:
            a = rates[0] * self.inv_p
            if self.count.size == 1:
                value -= float(np.dot(a, self.slack))
            else:
                b = rates[1] * self.inv_q
                value += float(np.sum(_log_survival_positive(self.slack, a, b)))
        return value

    def maximise(self, drop: int = 0) -> tuple[np.ndarray, float]:
        """The maximising rates, shape ``(K,)``, and the maximum."""
        counts = self.count - drop
        if not self.coupled:
            # q = 0 censored terms are -lambda1 y / p: exposure of the compute rate only
            exposure = self.excess.copy()
            exposure[0] += float(np.dot(self.slack, self.inv_p))
            with np.errstate(divide="ignore", invalid="ignore"):
                rates = counts / exposure
            return rates, self.loglik(rates, drop)
        scale = float(self.count.sum() + self.slack.size)

        def negative(u: np.ndarray) -> float:
            value = self.loglik(np.exp(u), drop)
            return -value / scale if math.isfinite(value) else math.inf

        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            start = np.log(counts / self.excess)
            result = optimize.minimize(
                negative, start, method="BFGS", options={"gtol": 1e-9, "xrtol": 1e-12}
            )
        rates = np.exp(result.x)
        return rates, self.loglik(rates, drop)

    def profile_interval(self, component: int, critical: float) -> tuple[float, float]:
        """The rate interval of ``component``: where twice the drop of the profiled likelihood
        (``drop = 1``, the other rate maximised) stays below ``critical``."""
        rates, top = self.maximise(drop=1)
        centre = np.log(rates)
        other = 1 - component
        warm = [float(centre[other])] if self.count.size == 2 else []

        def profile(v: float) -> float:
            u = centre.copy()
            u[component] = v
            if self.coupled:

                def negative(w: float) -> float:
                    u[other] = w
                    return -self.loglik(np.exp(u), drop=1)

                result = optimize.minimize_scalar(
                    negative, bracket=(warm[0] - 0.05, warm[0] + 0.05), tol=1e-10
                )
                warm[0] = float(result.x)
                return -float(result.fun)
            # decoupled: the other rate's maximiser does not depend on v
            return self.loglik(np.exp(u), drop=1)

        def excess(v: float) -> float:
            return 2.0 * (top - profile(v)) - critical

        step = 2.0 / math.sqrt(max(self.count[component] - 1, 1.0))
        ends = []
        for sign in (-1.0, 1.0):
            if warm:
                warm[0] = float(centre[other])
            distance = step
            while excess(centre[component] + sign * distance) <= 0:
                distance *= 2
                if distance > 50:
                    ends.append(sign * math.inf)
                    break
            else:
                far = centre[component] + sign * distance
                ends.append(optimize.brentq(excess, centre[component], far, xtol=1e-12))
        with np.errstate(over="ignore"):
            return float(np.exp(ends[0])), float(np.exp(ends[1]))


_CENSORED_FIELDS = ("inv_p", "inv_q", "slack")


def _slack(sample: Sample, shifts: np.ndarray) -> np.ndarray:
    """``y_j = c_j - p_j t1 - q_j t2``, shape ``(J,)`` (``inf`` for unknown thresholds)."""
    used = sample.subsets * shifts[0]
    if sample.comm is not None:
        used = used + sample.fraction * shifts[1]
    return sample.threshold - used


def _scales(sample: Sample, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    inv_p = 1.0 / sample.subsets[keep]
    if sample.comm is None:
        return inv_p, np.empty(0)
    fraction = sample.fraction[keep]
    with np.errstate(divide="ignore"):
        return inv_p, np.where(fraction > 0, 1.0 / fraction, math.inf)


def log_likelihood(
    sample: Sample, compute: tuple[float, float], comm: tuple[float, float] | None = None
) -> float:
    """The model's log-likelihood of ``sample`` at ``compute = (t1, lambda1)`` and, for a
    sample with a communication part, ``comm = (t2, lambda2)``; ``-inf`` if a complete value
    lies below its shift."""
    if (comm is None) != (sample.comm is None):
        raise FitError("comm: give its (shift, rate) exactly when the sample has a comm part")
    parameters = [compute] if comm is None else [compute, comm]
    shifts = np.array([float(p[0]) for p in parameters])
    rates = np.array([float(p[1]) for p in parameters])
    if any(v[0] < s for v, s in zip(sample.complete(), shifts, strict=True) if v.size):
        return -math.inf
    return _Problem.build(sample, shifts).loglik(rates)


# ---------------------------------------------------------------------------------------------
# Results


@dataclass(frozen=True)
class ComponentFit:
    """One component's fit, ``X = shift + Exp(rate)`` (see the module docstring).

    ``shift_interval`` is one-sided (its upper end is ``shift``); ``complete`` counts the
    complete samples, ``effective`` is ``n_eff``, ``shift_bias`` the estimated bias of the
    minimum; ``ks`` is the KS distance of ``pit`` to the uniform law and ``ks_pvalue`` its
    bootstrap p-value (``nan`` without bootstrap or with fewer than two tested samples).
    ``values`` are the sorted complete samples, shape ``(complete,)``; ``pit`` the sorted
    ``G_j(x_j)`` of those the KS distance uses (module docstring), uniform under the model.
    """

    name: str
    shift: float
    rate: float
    shift_interval: tuple[float, float]
    rate_interval: tuple[float, float]
    complete: int
    ks: float
    ks_pvalue: float
    effective: float
    shift_bias: float
    values: np.ndarray = field(repr=False, compare=False)
    pit: np.ndarray = field(repr=False, compare=False)

    @property
    def mean(self) -> float:
        """The model's mean ``shift + 1 / rate``."""
        return self.shift + 1.0 / self.rate

    @property
    def unbiased_shift(self) -> float:
        """The shift corrected for the minimum's bias (the UMVUE without censoring)."""
        return self.shift - self.shift_bias

    def cdf(self, x: Any) -> np.ndarray:
        """The fitted CDF at ``x`` (any shape)."""
        x = np.asarray(x, dtype=float)
        return -np.expm1(-self.rate * np.maximum(x - self.shift, 0.0))

    def qq(self, *, given_complete: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """``(model_quantiles, sample_quantiles)``, shape ``(r,)`` each: the fitted quantiles
        at ``(i - 0.5) / r`` against the sorted complete samples (``r = complete``) or, with
        ``given_complete``, against their uncensored equivalents ``F^-1(G_j(x_j))`` (``r`` the
        size of ``pit``)."""
        r = self.pit.size if given_complete else self.values.size
        probability = (np.arange(r) + 0.5) / r
        model = self.shift - np.log1p(-probability) / self.rate
        if not given_complete:
            return model, self.values.copy()
        with np.errstate(divide="ignore"):
            return model, self.shift - np.log1p(-self.pit) / self.rate

    def as_dict(self) -> dict[str, Any]:
        """JSON-able (nan as ``None``)."""
        return _finite(
            {
                "shift": self.shift,
                "rate": self.rate,
                "mean": self.mean,
                "shift_interval": list(self.shift_interval),
                "rate_interval": list(self.rate_interval),
                "unbiased_shift": self.unbiased_shift,
                "complete": self.complete,
                "effective": self.effective,
                "ks": self.ks,
                "ks_pvalue": self.ks_pvalue,
            }
        )


@dataclass(frozen=True)
class TimesFit:
    """The fit of ``compute`` (``X1``) and, if observed, ``comm`` (``X2``).

    ``loglik`` is the maximised log-likelihood; ``observations`` J, of which ``censored``;
    ``bootstrap`` the replicates behind the KS p-values.
    """

    compute: ComponentFit
    comm: ComponentFit | None
    loglik: float
    observations: int
    censored: int
    confidence: float
    bootstrap: int

    @property
    def components(self) -> list[ComponentFit]:
        return [self.compute] if self.comm is None else [self.compute, self.comm]

    def component(self, name: str) -> ComponentFit:
        """``compute`` or ``communication`` (``comm``)."""
        if name == "compute":
            return self.compute
        if name in ("communication", "comm") and self.comm is not None:
            return self.comm
        known = ", ".join(c.name for c in self.components)
        raise FitError(f"component: no {name!r} in this fit (available: {known})")

    def qq(self, component: str, *, given_complete: bool = False) -> tuple[np.ndarray, np.ndarray]:
        """``(model_quantiles, sample_quantiles)`` of a component (``ComponentFit.qq``)."""
        return self.component(component).qq(given_complete=given_complete)

    def rejected(self, level: float = 0.01) -> list[str]:
        """The components whose KS bootstrap p-value is below ``level``."""
        return [c.name for c in self.components if c.ks_pvalue < level]

    def as_dict(self) -> dict[str, Any]:
        """JSON-able (nan as ``None``), for a YAML or JSON file."""
        return _finite(
            {
                "model": "shifted-exponential",
                "observations": self.observations,
                "censored": self.censored,
                "loglik": self.loglik,
                "confidence": self.confidence,
                "bootstrap": self.bootstrap,
                "compute": self.compute.as_dict(),
                "communication": None if self.comm is None else self.comm.as_dict(),
            }
        )


def _finite(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    if isinstance(value, float | np.floating):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    return value


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
    problem = _Problem.build(sample, shifts)
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
    slack = _slack(sample, shifts)
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
                problem = _Problem(
                    np.array([complete[b], complete[b]], dtype=float),
                    excess[:, b],
                    *_scales(sample, keep),
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
        return _finite(dict(vars(self)))


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
        problem = _Problem.build(sample, np.array([v[0] for v in values]))
        problems.append(problem)
        separate += problem.maximise()[1]
    common_rates = _Problem.join(problems).maximise()[1]
    shifts = np.array([v[0] for v in _checked(pooled)])
    common = _Problem.build(pooled, shifts).maximise()[1]
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
