"""A link's rate with its interval, from the transfers a run measured over it.

Results (``gradcode.fit.observations``): every result a worker sent took ``transfer`` seconds
for its ``bytes``, measured with one clock. A transfer cannot beat the link, and anything else
(contention with the other workers' results at the master's port, TCP's slow start, the
receiver's polling) only adds, so the time per byte ``x = transfer / bytes`` is ``1 / R + E``,
``E >= 0``. ``result_link`` fits ``x`` as a shifted exponential (``fit_times``, all complete):
the shift's maximum-likelihood estimate is the least ``x``, so the rate ``R = 1 / shift`` is the
fastest transfer's, as before, and its interval is the shift's, inverted: ``[1 / shift, 1 /
shift_low]``, from the exponential-spacing pivot of the fastest transfers (it uses only how
densely the transfers crowd near the shift, not that ``E`` is exponential far from it).

The master's port (``master_link``): per iteration, the model's copies over when the last worker
had one; its median over the iterations, with the distribution-free interval of a median (the
order statistics whose ranks a binomial(n, 1/2) bounds at the confidence).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import stats

from gradcode.fit.sample import FitError, Sample
from gradcode.fit.shifted_exponential import MIN_COMPLETE, fit_times
from gradcode.rate import Rate


@dataclass(frozen=True)
class LinkRate:
    """A rate in bytes per second, its interval (``None`` with too few transfers: ``reason``
    says why) and how many measurements it rests on."""

    rate: float
    interval: tuple[float, float] | None
    measured: int
    reason: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "bytes_per_second": self.rate,
            "interval": None if self.interval is None else list(self.interval),
            "measured": self.measured,
            **({"reason": self.reason} if self.reason else {}),
        }

    def describe(self) -> str:
        """``95.68mbit [94.1mbit, 96.2mbit]`` (``gradcode.rate``; an unbounded end: ``inf``)."""
        if self.interval is None:
            return _shown(self.rate)
        low, high = self.interval
        return f"{_shown(self.rate)} [{_shown(low)}, {_shown(high)}]"


def _shown(bytes_per_second: float) -> str:
    if math.isfinite(bytes_per_second) and bytes_per_second > 0:
        return f"{Rate(bytes_per_second):.4g}"
    return f"{bytes_per_second:.4g}"


def result_link(seconds_per_byte: Sequence[float], confidence: float) -> LinkRate:
    """A worker's link from its results' transfer times per byte (see the module docstring)."""
    x = np.asarray(seconds_per_byte, dtype=np.float64)
    x = x[np.isfinite(x) & (x > 0)]
    if x.size == 0:
        raise FitError("no measured transfer")
    rate = float(1.0 / x.min())
    try:
        low = shift_bound(x, confidence)
    except FitError as error:
        return LinkRate(rate, None, int(x.size), f"no interval: {error}")
    return LinkRate(rate, (rate, 1.0 / low if low > 0 else math.inf), int(x.size))


def shift_bound(values: np.ndarray, confidence: float) -> float:
    """The lower end of the one-sided interval of the least value a quantity can take (its
    upper end: the least measured), from the exponential-spacing pivot of the fastest
    (``fit_times`` on complete samples); ``FitError`` saying why without one (too few,
    constant)."""
    x = np.asarray(values, dtype=np.float64)
    sample = Sample(
        subsets=np.ones(x.size),
        fraction=np.zeros(x.size),
        threshold=np.full(x.size, np.inf),
        observed=np.ones(x.size, dtype=bool),
        compute=x,
    )
    try:
        fit = fit_times(sample, confidence=confidence, bootstrap=0).compute
    except FitError as error:
        raise FitError(str(error).split(": ", 1)[-1]) from None
    return fit.shift_interval[0]


def master_link(rates: Sequence[float], confidence: float) -> LinkRate:
    """The master's port from per-iteration download rates (see the module docstring)."""
    values = np.sort(np.asarray(rates, dtype=np.float64))
    if values.size == 0:
        raise FitError("no measured download")
    median = float(np.median(values))
    n = values.size
    if n < MIN_COMPLETE:
        return LinkRate(median, None, n, f"no interval: {n} iterations (at least {MIN_COMPLETE})")
    # ranks j < k with P(X_(j) <= median <= X_(k)) >= confidence: Bin(n, 1/2) tails
    tail = (1.0 - confidence) / 2.0
    j = max(int(stats.binom.ppf(tail, n, 0.5)), 1)
    k = min(n - j + 1, n)
    return LinkRate(median, (float(values[j - 1]), float(values[k - 1])), n)
