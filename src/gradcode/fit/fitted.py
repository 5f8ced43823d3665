"""What a fit of paper 000's shifted-exponential times gives: per component ``ComponentFit``
(shift, rate, intervals, goodness of fit), for both ``TimesFit``
(``gradcode.fit.shifted_exponential``'s docstring says how each is estimated).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from gradcode.fit.sample import FitError


@dataclass(frozen=True)
class ComponentFit:
    """One component's fit, ``X = shift + Exp(rate)`` (see ``gradcode.fit.shifted_exponential``'s
    docstring).

    ``shift_interval`` is one-sided (its upper end is ``shift``); ``complete`` counts the
    complete samples, ``effective`` is ``n_eff``, ``shift_bias`` the estimated bias of the
    minimum; ``ks`` is the KS distance of ``pit`` to the uniform law and ``ks_pvalue`` its
    bootstrap p-value (``nan`` without bootstrap or with fewer than two tested samples).
    ``values`` are the sorted complete samples, shape ``(complete,)``; ``pit`` the sorted
    ``G_j(x_j)`` of those the KS distance uses (that docstring), uniform under the model.
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
        return finite_or_none(
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
        return finite_or_none(
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


def finite_or_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: finite_or_none(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [finite_or_none(v) for v in value]
    if isinstance(value, float | np.floating):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    return value
