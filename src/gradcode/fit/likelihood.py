"""The survival and the likelihood of paper 000's shifted-exponential times under censoring
(``gradcode.fit.shifted_exponential``'s docstring, "The model"): ``log_survival`` of a sum of
two exponentials, ``log_likelihood`` of a ``Sample``, and ``Problem``, the likelihood at fixed
shifts that the fit maximises and profiles.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import optimize

from gradcode.fit.sample import FitError, Sample


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
class Problem:
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
    def build(cls, sample: Sample, shifts: np.ndarray) -> Problem:
        observed = sample.observed
        values = [sample.compute] if sample.comm is None else [sample.compute, sample.comm]
        count = np.array([np.count_nonzero(observed)] * len(values), dtype=float)
        excess = np.array([np.sum(v[observed] - s) for v, s in zip(values, shifts, strict=True)])
        slack = censoring_slack(sample, shifts)
        keep = ~observed & (slack > 0)
        return cls(count, excess, *rate_scales(sample, keep), slack[keep])

    @classmethod
    def join(cls, problems: Sequence[Problem]) -> Problem:
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
        ``log rate`` per component (the profiled likelihood of
        ``gradcode.fit.shifted_exponential``'s docstring)."""
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


def censoring_slack(sample: Sample, shifts: np.ndarray) -> np.ndarray:
    """``y_j = c_j - p_j t1 - q_j t2``, shape ``(J,)`` (``inf`` for unknown thresholds)."""
    used = sample.subsets * shifts[0]
    if sample.comm is not None:
        used = used + sample.fraction * shifts[1]
    return sample.threshold - used


def rate_scales(sample: Sample, keep: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
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
    return Problem.build(sample, shifts).loglik(rates)
