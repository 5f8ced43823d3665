"""Exact expected time per iteration, where the model and the code allow a closed form.

Under the ``master-worker`` model with identical workers (every parameter one value for all
workers; ``gradcode.timing.master_worker``), a worker that sends one message needing ``p``
data subsets, of ``1 / m`` of the gradient, delivers it at

    ``A = p T1 + T2 / m = p t1 + t2 / m + Exp(lambda1 / p) + Exp(m lambda2)``

(paper 000, Section 5: a shifted hypoexponential; without ``lambda2``/``t2`` a shifted
exponential), independently of the other workers. A code that declares a ``completion_rule()``
(``gradcode.codes.completion.CompletionRule``: decodable once ``needed_g`` messages of every
group ``g`` arrived) then completes at ``T`` with

    ``P(T <= t) = prod_g P(at least needed_g of group g arrived by t)``

(one group, all alike: the ``r``-th order statistic of ``n`` i.i.d. arrivals, a binomial tail;
fractional repetition: one of each group of ``s + 1``; keys of unequal work, a Poisson-binomial
tail), and ``E[T] = lo + integral_lo^inf P(T > t) dt`` by quadrature (``lo``: the earliest
possible completion), plus the model's constant ``overhead``. ``order_statistic_mean`` and
``ye_abbe_expected_time`` of ``gradcode.timing.exact`` (paper 000's Table 3, to its four
decimals) are special cases; the tests check both.

No exact value (``None``) for: another model (``single-port``, ``shared-links``: start delays,
shared links), a ``master-worker`` subclass that changes how it samples or runs, workers of
unequal parameters, a code without a declared rule, a topology other than flat, or a rule
whose keys are not one message each of distinct workers (a worker's later messages queue
behind its earlier ones, so their arrivals are not of this form). Nothing here asks which
scheme a code is: all of it comes from the code's declarations (rule, ``data_fraction``,
``m``, ``message_keys``).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import integrate, special

from gradcode.codes import GradientCode
from gradcode.timing import MasterWorkerModel, TimingModel
from gradcode.timing.model import work_fractions
from gradcode.topology import topology_of

#: quadrature tolerances: relative, and absolute in units of the arrivals' scale
EPSREL = 1e-11
EPSABS = 1e-13


@dataclass(frozen=True)
class _Laws:
    """The identical workers' parameters: ``T1 = t1 + Exp(lambda1)``, ``T2 = t2 +
    Exp(lambda2)`` (``None``: no communication time), and the constant overhead."""

    t1: float
    lambda1: float
    t2: float | None
    lambda2: float | None
    overhead: float

    def arrival(self, subsets: float, m: int) -> tuple[float, tuple[float, ...]]:
        """``(shift, rates)`` of a message needing ``subsets`` data subsets, ``1 / m`` long:
        ``shift`` plus independent exponentials of these rates."""
        shift, rates = subsets * self.t1, []
        if subsets > 0:
            rates.append(self.lambda1 / subsets)
        if self.t2 is not None and self.lambda2 is not None:
            shift += self.t2 / m
            rates.append(self.lambda2 * m)
        return shift, tuple(sorted(rates))


def unsupported(model: TimingModel) -> str | None:
    """Why ``model`` gives no exact values (``None``: it can give them)."""
    if not isinstance(model, MasterWorkerModel):
        return f"model {model.name}: no closed form (only master-worker with identical workers)"
    cls = type(model)
    if (cls.sample, cls.prepare) != (MasterWorkerModel.sample, MasterWorkerModel.prepare):
        return f"model {model.name}: times its codes its own way (no closed form)"
    if model.heterogeneous():
        return f"model {model.name}: workers of unequal parameters (no closed form)"
    return None


def _laws(model: MasterWorkerModel) -> _Laws:
    comm = model.comm
    return _Laws(
        t1=model.compute.shift.scalar,
        lambda1=model.compute.rate.scalar,
        t2=None if comm is None else comm.shift.scalar,
        lambda2=None if comm is None else comm.rate.scalar,
        overhead=float(getattr(model, "overhead", 0.0) or 0.0),
    )


#: per group: the arrival laws ``(shift, rates)`` with how many keys have each, and the count
_Group = tuple[tuple[tuple[tuple[float, tuple[float, ...]], int], ...], int]


def _signature(laws: _Laws, code: GradientCode) -> tuple[_Group, ...] | None:
    """The code's completion law under ``laws`` (``None``: no closed form, module docstring)."""
    if not topology_of(code).direct:
        return None
    rule = code.completion_rule()
    if rule is None:
        return None
    keys = code.all_message_keys()
    index = {key: q for q, key in enumerate(keys)}
    subsets = work_fractions(code) * code.n
    workers: set[int] = set()
    groups = []
    for group, needed in zip(rule.groups, rule.needed, strict=True):
        arrivals: Counter[tuple[float, tuple[float, ...]]] = Counter()
        for key in group:
            if key not in index:
                return None
            worker = code.worker_of(key)
            if worker in workers or len(code.message_keys(worker)) != 1:
                return None
            workers.add(worker)
            arrivals[laws.arrival(float(subsets[index[key]]), code.m)] += 1
        groups.append((tuple(sorted(arrivals.items())), needed))
    return tuple(sorted(groups))


def _cdf(shift: float, rates: tuple[float, ...]) -> Callable[[float, float], float]:
    """CDF of ``shift`` plus independent exponentials of ``rates`` (at most two, ascending),
    at ``base + offset`` (so that a small offset past a shift keeps its precision); the
    hypoexponential survival in a form without cancellation when the rates are close."""

    def cdf(base: float, offset: float) -> float:
        x = (base - shift) + offset
        if x < 0:
            return 0.0
        if not rates:
            return 1.0
        if len(rates) == 1:
            return -math.expm1(-rates[0] * x)
        a, b = rates
        gap = b - a
        spread = x if gap == 0 else -math.expm1(-gap * x) / gap
        return 1.0 - math.exp(-a * x) * (1.0 + a * spread)

    return cdf


def _group_done(group: _Group) -> Callable[[float, float], float]:
    """``P(at least needed of the group arrived by base + offset)``."""
    laws, needed = group
    cdfs = [(_cdf(shift, rates), count) for (shift, rates), count in laws]
    if len(cdfs) == 1:
        cdf, count = cdfs[0]
        return lambda base, offset: float(special.bdtrc(needed - 1, count, cdf(base, offset)))

    def done(base: float, offset: float) -> float:
        pmf = np.array([1.0])  # of how many arrived, over the laws so far
        for cdf, count in cdfs:
            p = cdf(base, offset)
            j = np.arange(count + 1)
            pmf = np.convolve(pmf, special.comb(count, j) * p**j * (1.0 - p) ** (count - j))
        return float(min(1.0, pmf[needed:].sum()))

    return done


def _mean(signature: tuple[_Group, ...]) -> float:
    """``E[T]`` of the completion law ``signature`` (module docstring), by quadrature."""
    dones = [_group_done(group) for group in signature]
    # no group completes before its needed-th smallest shift
    lo = max(
        sorted(shift for (shift, _), count in laws for _ in range(count))[needed - 1]
        for laws, needed in signature
    )
    shifts = sorted({shift for laws, _ in signature for (shift, _), _ in laws if shift > lo})
    scale = max(sum(1.0 / r for r in rates) for laws, _ in signature for (_, rates), _ in laws)
    if scale == 0:  # deterministic arrivals
        return lo

    def survival(base: float, offset: float) -> float:
        return 1.0 - math.prod(done(base, offset) for done in dones)

    total, hi = lo, lo
    if shifts:
        hi = shifts[-1]
        part, _ = integrate.quad(
            lambda x: survival(lo, x),
            0.0,
            hi - lo,
            points=[shift - lo for shift in shifts[:-1]] or None,
            limit=500,
            epsabs=EPSABS * max(scale, hi - lo),
            epsrel=EPSREL,
        )
        total += part
    # past the last shift, in units of the slowest arrival's random part
    tail, _ = integrate.quad(
        lambda u: survival(hi, scale * u), 0.0, np.inf, limit=500, epsabs=EPSABS, epsrel=EPSREL
    )
    return total + scale * tail


class ExactTimes:
    """Exact expected times under one model, cached per completion law (many codes share
    one: cyclic repetition and Ye-Abbe with ``m = 1`` and the same ``s``, say)."""

    def __init__(self, model: TimingModel) -> None:
        self.reason = unsupported(model)
        self._model = model
        self._laws = None if self.reason is not None else _laws(model)  # type: ignore[arg-type]
        self._cache: dict[tuple[_Group, ...], float] = {}

    def __call__(self, code: GradientCode) -> float | None:
        """``E`` of the time per iteration of ``code`` (``None``: no closed form)."""
        if self._laws is None:
            return None
        try:
            self._model.check(code)
        except ValueError:
            return None
        signature = _signature(self._laws, code)
        if signature is None:
            return None
        if signature not in self._cache:
            self._cache[signature] = _mean(signature)
        return self._cache[signature] + self._laws.overhead


def exact_time(model: TimingModel, code: GradientCode) -> float | None:
    """``code``'s exact expected time per iteration under ``model`` (``None``: no closed
    form; module docstring), the model's ``overhead`` included."""
    return ExactTimes(model)(code)


def exact_times(model: TimingModel, codes: Sequence[GradientCode]) -> list[float | None]:
    """``exact_time`` of every code, in order (one cache for all)."""
    times = ExactTimes(model)
    return [times(code) for code in codes]
