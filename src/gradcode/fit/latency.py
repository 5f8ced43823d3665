"""The links' latency beside the workers' rates, from results of several message sizes.

Every result worker ``w`` sent took ``t`` seconds for its ``b`` bytes (``transfer`` and
``bytes`` in the log, one clock; ``gradcode.fit.observations``). On the ``shared-links`` model
(``gradcode.timing.links``) a message alone on its links takes ``latency + b / rate``, and
anything else (the other results at the master's port, TCP, the receiver's polling) only adds:

    t = L + b u_w + E,    E >= 0,    u_w = 1 / rate_w,

one latency ``L`` for the cluster (the model has one) and a rate per worker. Transfers of one
size ``b`` show only ``L + b u_w``: every latency fits them. Then the latency is *not
identifiable*; the fit says so, keeps it at 0 and every rate at its fastest transfer's
(``gradcode.fit.links.result_link``, today's reading), which folds the latency into the rates.

Estimate. Worker ``w``'s fastest transfer of size ``b_j``, ``m_wj``, bounds its lower envelope:
``L + b_j u_w <= m_wj``. With ``E`` exponential at one rate for every transfer, the likelihood
grows with ``sum (L + b u_w)`` over the transfers (as a shift's grows up to the least value,
``gradcode.fit.shifted_exponential``), so the estimate maximises it under the bounds: each
``u_w`` at its largest, ``min_j (m_wj - L) / b_j``, leaves a concave, piecewise-linear function
of ``L`` on ``[0, min m]``, whose maximum is at ``0``, at ``min m`` or where a worker's envelope
turns from one size's bound to another's. For a worker with two sizes alone it is the line
through the two sizes' fastest transfers; with many workers, a compromise among their lines
that moves only where the sum of their slopes changes sign (a median, not a mean, of their
intercepts). An intercept below 0 gives ``L = 0`` and the rates of today's reading.

Intervals at ``confidence``: per-size shift intervals, not a bootstrap. The estimate is a
function of sample minima, and a resampled minimum repeats the observed one with probability
about ``1 - 1/e``, so a bootstrap's percentiles do not cover it. Every (worker, size)'s
fastest transfers give the one-sided interval ``[lo_wj, m_wj]`` of its bound
``L + b_j u_w`` (``gradcode.fit.links.shift_bound``, the exponential-spacing pivot that
``result_link`` inverts; exact for an exponential excess, and using only how densely the
transfers crowd near the bound), each at ``1 - (1 - confidence) / K`` for ``K`` of them
(Bonferroni: together at ``confidence`` or more, so the intervals err wide). The lines through
every window, ``lo_wj <= L + b_j u_w <= m_wj`` with ``L, u_w >= 0``, are a polytope; its
projections are the intervals, in closed form: a worker's windows admit a line for ``L``
where ``(lo_wi - L) / b_i <= (m_wj - L) / b_j`` for every pair of its sizes, a bound on ``L``
each, and ``u_w`` then runs from ``max_j (lo_wj - L_high) / b_j`` to ``min_j (m_wj - L_low) /
b_j``. A (worker, size) with too few transfers for a window bounds from above only. No line
through every window, or none at the estimate, says the envelope is not one latency plus
bytes over a rate per worker.

Workers of different latencies. Real links differ, and so do a worker's processing and the
path through its node: on the emulated cluster every worker's own line lay 0.1-0.3 ms above
the latency set, spread by up to 0.3 ms, more than the windows allow one latency for all
(docs/measurements/fit-loop.md). Then each worker's latency is fitted from its own sizes (its
line, and its interval from its windows alone, at half the error rate) and the cluster's is
the *median worker's*: the median of their estimates, its interval the order statistics'
distribution-free interval for a median, ``[low_(k), high_(n + 1 - k)]`` with the largest
``k`` whose coverage ``1 - 2 P(Binomial(n, 1/2) < k)`` reaches the other half (each worker's
lower end and upper end taken, so the windows only widen it). ``Latency.workers`` keeps every
worker's latency and the description says they differ. It needs every worker to have two
sizes whose windows admit a line and enough workers (7 at 95 %); otherwise there is no
interval, and the reason says why.

A latency the user gives (``fit_links_at``, ``gradcode timing fit --latency``) is not
estimated: every rate is then its worker's fastest transfer with that latency taken off, its
interval the shift's of the transfers' ``(t - L) / b`` (``result_link``), and the latency
is marked as given (``given``), beside what the envelope alone gives, for comparison.

``Latency.problem`` says when a fitted latency cannot be written as a measurement: it is not
identifiable, or has no interval (the envelope rejected, or too few transfers). ``gradcode.fit
.runs`` then writes no spec unless the user accepts the misfit or gives the latency.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import permutations
from typing import Any

import numpy as np

from gradcode.fit.links import LinkRate, result_link, shift_bound
from gradcode.fit.sample import FitError

#: a candidate latency whose likelihood is within this fraction of the best is among the best
_TIE = 1e-12


@dataclass(frozen=True)
class Latency:
    """The links' one-way latency per message, seconds, with its interval (``None``:
    ``reason`` says why), the message sizes it was read from (bytes) and whether they
    identify it at all (``identifiable``; without: ``seconds`` is 0, assumed, not fitted)."""

    seconds: float
    interval: tuple[float, float] | None
    sizes: tuple[int, ...]
    identifiable: bool
    reason: str | None = None
    #: the user's value, not estimated (``fit_links_at``); ``fitted``: what the envelope
    #: alone gave, for comparison (``None`` where it could not be fitted)
    given: bool = False
    fitted: Latency | None = None
    #: every worker's own latency, where one latency for all was rejected and the value is
    #: the median worker's (module docstring); ``None``: one latency fits every worker
    workers: tuple[float, ...] | None = None

    @property
    def problem(self) -> str | None:
        """Why the fitted latency is no measurement to write (``None``: it is one, or it was
        given): not identifiable, or no interval."""
        if self.given:
            return None
        if not self.identifiable:  # the reason without the 0 and the rates it would assume
            return f"the links' latency is {str(self.reason).split(': ', 1)[0]}"
        if self.interval is None:
            reason = str(self.reason).removeprefix("no interval: ")
            return f"the links' latency {_ms(self.seconds)} has no interval: {reason}"
        return None

    def as_dict(self) -> dict[str, Any]:
        return {
            "seconds": self.seconds,
            "interval": None if self.interval is None else list(self.interval),
            "identifiable": self.identifiable,
            "sizes": list(self.sizes),
            **({"reason": self.reason} if self.reason else {}),
            **({"given": True} if self.given else {}),
            **({"fitted": self.fitted.as_dict()} if self.fitted is not None else {}),
            **({"workers": list(self.workers)} if self.workers is not None else {}),
        }

    def describe(self) -> str:
        """``1.02 ms [0.95 ms, 1.1 ms] (one way; message sizes 4032, 8032 bytes)``, or why
        it is not identifiable, or the given value beside the fitted one."""
        if self.given:
            fitted = "" if self.fitted is None else f"; fitted: {self.fitted.describe()}"
            return f"{_ms(self.seconds)} ({self.reason}{fitted})"
        if not self.identifiable:
            return str(self.reason)
        sizes = ", ".join(str(size) for size in self.sizes)
        shown = _ms(self.seconds)
        if self.interval is not None:
            shown += f" [{_ms(self.interval[0])}, {_ms(self.interval[1])}]"
        else:
            shown += f" ({self.reason})"
        if self.workers is not None:
            low, high = min(self.workers), max(self.workers)
            shown += (
                f" (the median of {len(self.workers)} workers' latencies, {_ms(low)} to "
                f"{_ms(high)}: more apart than one latency for all allows)"
            )
        return f"{shown} (one way; message sizes {sizes} bytes)"


@dataclass(frozen=True)
class LinksFit:
    """The latency and every worker's link (its rate with the latency taken off)."""

    latency: Latency
    workers: tuple[LinkRate, ...]


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.4g} ms"


def fit_links(transfers: Sequence[Sequence[tuple[float, float]]], confidence: float) -> LinksFit:
    """The latency and the workers' rates from every worker's transfers, ``(bytes,
    seconds)`` each (see the module docstring); ``FitError`` for a worker without one."""
    groups = [_by_size(worker, pairs) for worker, pairs in enumerate(transfers)]
    sizes = tuple(sorted({size for group in groups for size in group}))
    if not any(len(group) >= 2 for group in groups):
        return _unidentified(groups, sizes, confidence)
    latency = _estimate(groups)
    windows = _windows(groups, confidence)
    interval = _region(groups, windows, latency, confidence)
    apart: tuple[float, ...] | None = None
    if isinstance(interval, str):
        median = _median_worker(groups, confidence)
        if isinstance(median, str):
            interval += f"; {median}"
        else:
            latency, interval, apart, windows = median
    workers = []
    for worker, (group, lows) in enumerate(zip(groups, windows, strict=True)):
        inverse = min((float(m.min()) - latency) / size for size, m in group.items())
        if inverse <= 0:
            raise FitError(
                f"worker {worker}: its fastest transfer leaves no time for its bytes after a "
                f"latency of {_ms(latency)}"
            )
        measured = sum(m.size for m in group.values())
        if isinstance(interval, str):
            workers.append(LinkRate(1.0 / inverse, None, measured, interval))
        else:
            bounds = _rate_interval(group, lows, *interval)
            workers.append(LinkRate(1.0 / inverse, bounds, measured))
    if isinstance(interval, str):
        fitted = Latency(latency, None, sizes, True, interval)
    else:
        fitted = Latency(latency, interval, sizes, True, workers=apart)
    return LinksFit(fitted, tuple(workers))


def _median_worker(
    groups: Sequence[dict[int, np.ndarray]], confidence: float
) -> tuple[float, tuple[float, float], tuple[float, ...], list[dict[int, float]]] | str:
    """The median worker's latency, its interval, every worker's latency and every worker's
    windows (module docstring), or why there is none."""
    alpha = (1.0 - confidence) / 2.0  # half for the workers' windows, half for the median
    n = len(groups)
    k = _median_rank(n, 1.0 - alpha)
    if k == 0:
        return (
            f"{n} workers are too few for an interval of the median worker's latency "
            f"(at least {_fewest(1.0 - alpha)} at {confidence:.0%})"
        )
    estimates, lows, highs, windows = [], [], [], []
    for worker, group in enumerate(groups):
        if len(group) < 2:
            return f"worker {worker} sent one message size: its own latency is not identifiable"
        own = _estimate([group])
        window = _windows([group], 1.0 - alpha / n)
        region = _region([group], window, own, 1.0 - alpha / n)
        if isinstance(region, str):
            return f"worker {worker}'s own transfers lie on no line latency + bytes / rate"
        estimates.append(own)
        lows.append(region[0])
        highs.append(region[1])
        windows += window
    interval = (sorted(lows)[k - 1], sorted(highs)[n - k])
    return float(np.median(estimates)), interval, tuple(estimates), windows


def _median_rank(n: int, level: float) -> int:
    """The largest ``k`` whose ``[x_(k), x_(n + 1 - k)]`` of ``n`` covers the median at
    ``level`` (``1 - 2 P(Binomial(n, 1/2) <= k - 1)``), 0 where none does."""
    best, below = 0, 0.0
    for k in range(1, (n + 1) // 2 + 1):
        below += math.comb(n, k - 1) / 2.0**n  # P(Binomial <= k - 1)
        if 1.0 - 2.0 * below < level:
            break
        best = k
    return best


def _fewest(level: float) -> int:
    """The fewest workers whose extremes cover their median at ``level``."""
    n = 1
    while _median_rank(n, level) == 0:
        n += 1
    return n


def fit_links_at(
    transfers: Sequence[Sequence[tuple[float, float]]], latency: float, confidence: float
) -> LinksFit:
    """Every worker's rate with the latency the user gave, ``latency`` seconds (module
    docstring); ``FitError`` for a worker without a transfer longer than it."""
    groups = [_by_size(worker, pairs) for worker, pairs in enumerate(transfers)]
    sizes = tuple(sorted({size for group in groups for size in group}))
    workers = []
    for worker, group in enumerate(groups):
        fastest = min(float(m.min()) for m in group.values())
        if fastest <= latency:
            raise FitError(
                f"worker {worker}: a transfer took {_ms(fastest)}, no longer than the given "
                f"latency of {_ms(latency)}"
            )
        # the time per byte once the latency is off: 1 / rate plus what only adds
        per_byte = np.concatenate([(m - latency) / size for size, m in group.items()])
        workers.append(result_link(per_byte, confidence))
    try:
        fitted: Latency | None = fit_links(transfers, confidence).latency
    except FitError:
        fitted = None
    reason = "given by the user, not fitted"
    given = Latency(latency, None, sizes, True, reason, given=True, fitted=fitted)
    return LinksFit(given, tuple(workers))


def _by_size(worker: int, pairs: Sequence[tuple[float, float]]) -> dict[int, np.ndarray]:
    """A worker's transfer times by message size (bytes), measured ones only."""
    found: dict[int, list[float]] = {}
    for nbytes, seconds in pairs:
        if nbytes > 0 and math.isfinite(seconds) and seconds > 0:
            found.setdefault(int(nbytes), []).append(float(seconds))
    if not found:
        raise FitError(f"worker {worker}: no measured transfer")
    return {size: np.array(times) for size, times in sorted(found.items())}


def _unidentified(
    groups: Sequence[dict[int, np.ndarray]], sizes: tuple[int, ...], confidence: float
) -> LinksFit:
    """Latency 0, marked as assumed, and every rate its fastest transfer's (one size)."""
    listed = ", ".join(str(size) for size in sizes)
    shown = (
        f"one message size ({listed} bytes)"
        if len(sizes) == 1
        else f"workers of one message size each ({listed} bytes)"
    )
    reason = (
        f"not identifiable from {shown}: 0 assumed, each rate its fastest transfer's (fit "
        "runs of codes with different message lengths together)"
    )
    workers = tuple(
        result_link(np.concatenate([m / size for size, m in group.items()]), confidence)
        for group in groups
    )
    return LinksFit(Latency(0.0, None, sizes, False, reason), workers)


def _estimate(groups: Sequence[dict[int, np.ndarray]]) -> float:
    """The latency that maximises ``sum (L + b u_w)`` under the envelopes (module docstring)."""
    least = [{size: float(m.min()) for size, m in group.items()} for group in groups]
    top = min(min(bounds.values()) for bounds in least)
    candidates = {0.0, top}
    for bounds in least:
        for (b_i, m_i), (b_j, m_j) in permutations(bounds.items(), 2):
            if b_i < b_j:  # where the two sizes' bounds on u_w cross
                crossing = (b_j * m_i - b_i * m_j) / (b_j - b_i)
                if 0.0 < crossing < top:
                    candidates.add(crossing)
    counts = [sum(m.size for m in group.values()) for group in groups]
    total = [sum(size * m.size for size, m in group.items()) for group in groups]

    def likelihood(latency: float) -> float:
        return sum(
            n * latency + b * min((m - latency) / size for size, m in bounds.items())
            for n, b, bounds in zip(counts, total, least, strict=True)
        )

    values = {latency: likelihood(latency) for latency in candidates}
    best = max(values.values())
    # a flat top (an interval of maximisers, the function being concave): its middle
    chosen = [latency for latency, v in values.items() if v >= best - _TIE * abs(best)]
    return (min(chosen) + max(chosen)) / 2.0


def _windows(groups: Sequence[dict[int, np.ndarray]], confidence: float) -> list[dict[int, float]]:
    """Every (worker, size)'s lower end of its bound's window, at the Bonferroni level
    (module docstring); ``-inf`` where too few transfers give none."""
    level = 1.0 - (1.0 - confidence) / sum(len(group) for group in groups)
    windows = []
    for group in groups:
        lows = {}
        for size, m in group.items():
            try:
                lows[size] = shift_bound(m, level)
            except FitError:
                lows[size] = -math.inf  # bounds from above only (its least transfer)
        windows.append(lows)
    return windows


def _region(
    groups: Sequence[dict[int, np.ndarray]],
    windows: Sequence[dict[int, float]],
    latency: float,
    confidence: float,
) -> tuple[float, float] | str:
    """The latency's interval (module docstring), or why there is none."""
    if not any(math.isfinite(lo) for lows in windows for lo in lows.values()):
        return "no interval: no message size has enough distinct transfers for a window"
    low, high = 0.0, min(float(m.min()) for group in groups for m in group.values())
    for group, lows in zip(groups, windows, strict=True):
        for b_i, lo_i in lows.items():
            for b_j, m in group.items():
                m_j = float(m.min())
                # size i's window admits a line under size j's bound: (lo_i - L) / b_i <=
                # (m_j - L) / b_j, a bound on L from above or below
                if b_i > b_j:
                    high = min(high, (m_j * b_i - lo_i * b_j) / (b_i - b_j))
                elif b_i < b_j:
                    low = max(low, (lo_i * b_j - m_j * b_i) / (b_j - b_i))
    if not low <= latency <= high:
        return (
            "no interval: the fastest transfers do not lie on lines latency + bytes / rate "
            f"with one latency for every worker (at {confidence:.0%})"
        )
    return low, high


def _rate_interval(
    group: dict[int, np.ndarray], lows: dict[int, float], low: float, high: float
) -> tuple[float, float]:
    """A worker's rate over the latencies ``[low, high]`` (module docstring)."""
    most = min((float(m.min()) - low) / size for size, m in group.items())
    least = max([0.0, *((lows[size] - high) / size for size in group)])
    return 1.0 / most, (1.0 / least if least > 0 else math.inf)
