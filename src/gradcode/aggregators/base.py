"""The one interface every robust aggregator implements.

An aggregator replaces the master's sum: it takes the values a code hands it, one per
partition group in hand (``inputs``, shape ``(count, width)``: under ``uncoded`` and
``ignore-stragglers`` the workers' partial gradients, under ``detox`` the groups' votes), some
of which may be Byzantine, and returns an estimate of the *mean* of the honest ones. The
runtime turns that mean into the gradient sum the exact path would have decoded by multiplying
with the number of groups the gradient sums (``gradcode.codes.AggregationInputs.total``).

Each aggregator declares, for ``n`` inputs, how many Byzantine ones it tolerates
(``tolerates``), which settings it cannot handle at all (``refusal``: one line naming the
aggregator, the parameter and the constraint) and a deterministic bound on how far its output
may be from the honest inputs' mean when no more than ``tolerates(n)`` inputs are Byzantine
(``error_bound``; the tests check it under every attack of ``gradcode.attacks``).

Non-finite inputs. An input holding a NaN or an infinity is a Byzantine one no honest worker
sends, and the aggregations below are comparisons and sums that a NaN or an infinity passes
through (a median of NaN is NaN, a sum with inf is inf): ``aggregate`` refuses such inputs
before any of them, counts them against ``tolerates(n)`` and names them in
``Aggregate.refused`` with what they held; the others are aggregated by ``without(n, count)``,
the aggregator with that much of its tolerance spent (Krum's and Bulyan's ``f`` less the
refused, the trimmed mean's trim less the refused at each end). More than it tolerates is an
``AggregatorError`` naming them. Its output is never non-finite: finite inputs so large that
the aggregation overflows are refused too, in one line. Nothing
outside ``gradcode.aggregators`` asks which aggregator it is
(``tests/capabilities/test_no_scheme_identity.py`` enforces it).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from gradcode.errors import UserError
from gradcode.finite import nonfinite_reason


class AggregatorError(UserError):
    """An aggregator cannot serve this setting (the line names the aggregator, the parameter
    and the constraint)."""


@dataclass(frozen=True)
class Aggregate:
    """One aggregation: ``value`` (``(width,)``, the estimate of the honest inputs' mean),
    ``selected`` (indices of the inputs that entered it whole, for aggregators that select:
    Krum, Bulyan; ``None`` for coordinate-wise ones), ``info`` (JSON-able facts worth
    logging, e.g. Weiszfeld's iterations and whether it converged) and ``refused`` (index ->
    why, e.g. "NaN, +inf": the non-finite inputs left out and counted as Byzantine)."""

    value: np.ndarray
    selected: tuple[int, ...] | None = None
    info: dict[str, Any] = field(default_factory=dict)
    refused: dict[int, str] = field(default_factory=dict)


def nonfinite_rows(values: np.ndarray) -> dict[int, str]:
    """Rows of ``values`` holding a NaN or an infinity, each with what ("NaN", "+inf",
    "-inf", joined)."""
    rows = np.flatnonzero(~np.isfinite(values).all(axis=1))
    return {int(row): str(nonfinite_reason(values[row])) for row in rows}


class Aggregator(ABC):
    """Base class of the aggregators; subclasses validate their parameters in ``__init__`` (by
    keyword, like codes and attacks) and implement ``tolerates``, ``error_bound`` and
    ``_aggregate``."""

    #: the registry's name of the aggregator ("" on the base class: a subclass must set it)
    name: ClassVar[str] = ""

    def params(self) -> dict[str, Any]:
        """The parameters that rebuild the aggregator (``build(name, params())``)."""
        return {}

    @abstractmethod
    def tolerates(self, n: int) -> int:
        """How many of ``n`` inputs may be Byzantine with the guarantee of ``error_bound``."""

    def refusal(self, n: int) -> str | None:
        """Why ``n`` inputs cannot be aggregated with these parameters (``None``: they can)."""
        if n < 1:
            return f"aggregator {self.name} needs at least 1 input (got n={n})"
        return None

    @abstractmethod
    def error_bound(self, honest: np.ndarray, n: int) -> float:
        """Largest ``||output - mean(honest)||_2`` when ``honest`` (``(h, width)``) are the
        honest ones among ``n`` inputs and the other ``n - h <= tolerates(n)`` are anything."""

    @abstractmethod
    def _aggregate(self, inputs: np.ndarray) -> Aggregate:
        """The aggregation of ``inputs`` (``(n, width)``, float64, ``refusal(n)`` is None)."""

    def without(self, n: int, refused: int) -> Aggregator:
        """The aggregator for the inputs left once ``refused`` of ``n`` (``<= tolerates(n)``)
        were refused as Byzantine: its tolerance less those spent. ``self`` for aggregators
        whose tolerance is a share of their inputs (a median of the rest tolerates at least
        ``tolerates(n) - refused``); those with a configured count override it."""
        return self

    def aggregate(self, inputs: np.ndarray) -> Aggregate:
        """The estimate of the honest inputs' mean from ``inputs`` (``(n, width)``);
        ``AggregatorError`` (one line) when ``refusal(n)`` says no, when more inputs are
        non-finite than it tolerates, or when its output would not be finite (module
        docstring)."""
        values = np.asarray(inputs, dtype=np.float64)
        if values.ndim != 2:
            raise ValueError(
                f"aggregator {self.name}: inputs must be (n, width), got {values.shape}"
            )
        n = values.shape[0]
        self.require(n)
        # an overflow inside is caught on the output below, in one line, not as a warning
        with np.errstate(over="ignore", invalid="ignore"):
            return self._checked(values, n)

    def _checked(self, values: np.ndarray, n: int) -> Aggregate:
        """``aggregate`` past its shape checks: non-finite inputs refused, output checked."""
        refused = nonfinite_rows(values)
        if not refused:
            result = self._aggregate(values)
        else:
            tolerated = self.tolerates(n)
            named = ", ".join(f"{row} ({why})" for row, why in refused.items())
            if len(refused) > tolerated:
                raise AggregatorError(
                    f"aggregator {self.name}: inputs {named} are not finite, more than the "
                    f"{tolerated} Byzantine input{'s' * (tolerated != 1)} it tolerates among "
                    f"n={n} ({self.tolerance_rule()})"
                )
            kept = np.flatnonzero(np.isfinite(values).all(axis=1))
            rest = self.without(n, len(refused))
            rest.require(kept.size, where=f"aggregator {self.name}: inputs {named} refused")
            inner = rest._aggregate(values[kept])
            selected = (
                None if inner.selected is None else tuple(int(kept[i]) for i in inner.selected)
            )
            result = Aggregate(inner.value, selected, inner.info, refused)
        if not bool(np.isfinite(result.value).all()):
            largest = float(np.abs(values[np.isfinite(values)]).max(initial=0.0))
            raise AggregatorError(
                f"aggregator {self.name}: its output is not finite (finite inputs up to "
                f"{largest:.3g} in magnitude overflow it)"
            )
        return result

    # -- refusals ---------------------------------------------------------------------------
    def byzantine_refusal(self, n: int, byzantine: int) -> str | None:
        """Why ``byzantine`` of ``n`` inputs are too many, or ``n`` cannot be aggregated."""
        problem = self.refusal(n)
        if problem:
            return problem
        tolerated = self.tolerates(n)
        if byzantine > tolerated:
            return (
                f"aggregator {self.name} tolerates {tolerated} Byzantine input"
                f"{'s' * (tolerated != 1)} among n={n} (got {byzantine}: "
                f"{self.tolerance_rule()})"
            )
        return None

    def tolerance_rule(self) -> str:
        """The constraint behind ``tolerates`` in words (for the refusal line)."""
        return "its breakdown point"

    def require(self, n: int, byzantine: int = 0, where: str = "") -> None:
        """``AggregatorError`` (one line, prefixed with ``where``) when ``byzantine`` of ``n``
        inputs are more than it tolerates or ``n`` cannot be aggregated."""
        problem = self.byzantine_refusal(n, byzantine)
        if problem:
            raise AggregatorError(f"{where}: {problem}" if where else problem)

    def __repr__(self) -> str:
        args = ", ".join(f"{key}={value!r}" for key, value in self.params().items())
        return f"{type(self).__name__}({args})"


def spread(honest: np.ndarray) -> np.ndarray:
    """Per coordinate, the largest distance of an honest input from the honest mean."""
    return np.abs(honest - honest.mean(axis=0)).max(axis=0)


#: the most differences ``squared_distances`` holds at once (32 MiB of float64)
_BROADCAST = 1 << 22


def squared_distances(inputs: np.ndarray) -> np.ndarray:
    """``(n, n)`` squared Euclidean distances between the rows of ``inputs``, from their
    differences: the expanded ``|x|^2 + |y|^2 - 2 x.y`` loses every digit when the rows share
    a large common part (gradients late in training around one mean, or a liar's shift added
    to all). Small inputs in one broadcast (``(n, n, width)`` up to ``_BROADCAST`` values),
    larger ones one vectorised pass per row over the rows after it (``n (n - 1) / 2``
    differences, memory ``O(n width)``)."""
    n = inputs.shape[0]
    if n * n * inputs.shape[1] <= _BROADCAST:
        diff = inputs[:, None, :] - inputs[None, :, :]
        return np.einsum("ijk,ijk->ij", diff, diff)
    d2 = np.zeros((n, n))
    for row in range(n - 1):
        diff = inputs[row + 1 :] - inputs[row]
        d2[row, row + 1 :] = np.einsum("ij,ij->i", diff, diff)
    return d2 + d2.T


def diameter(honest: np.ndarray) -> float:
    """The largest distance between two honest inputs (0 for fewer than two)."""
    if honest.shape[0] < 2:
        return 0.0
    return float(np.sqrt(squared_distances(honest).max()))
