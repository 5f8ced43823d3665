"""Monte Carlo of a list of codes through ``gradcode.sim.montecarlo.simulate``.

``simulate`` takes a ``Spec``; this wraps built codes in one, so that every estimate here is
exactly what ``gradcode simulate`` reports for the same codes, model, trials and seed (common
random numbers: every code with ``n`` workers sees the same draws).
"""

from __future__ import annotations

from collections.abc import Sequence

from gradcode.codes import GradientCode
from gradcode.sim.montecarlo import simulate
from gradcode.sim.spec import SchemeEntry, Spec
from gradcode.sim.table import ResultRow
from gradcode.timing import TimingModel


def estimate_codes(
    model: TimingModel,
    codes: Sequence[GradientCode],
    *,
    trials: int,
    seed: int,
    confidence: float,
    length: int | None = None,
) -> list[ResultRow]:
    """One ``ResultRow`` per code, in order (``codes`` must have passed ``model.check``)."""
    if not codes:
        return []
    entries = tuple(SchemeEntry(code.name, code.name, code, None) for code in codes)
    spec = Spec(
        name="recommend",
        description="",
        source="",
        model_name=model.name,
        model=model,
        length=length,
        confidence=confidence,
        schemes=entries,
        raw={},
    )
    return simulate(spec, trials=trials, seed=seed, confidence=confidence)
