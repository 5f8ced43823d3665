"""The workers a timing model describes: how many (per-worker parameter lists) and which are
alike (worker types).

A model parameter is a number (every worker), a list (one value per worker) or ``{counts,
values}`` (per type), as ``gradcode.timing.distributions.PerWorker`` reads it; ``model.params()``
gives every parameter back in that form, so this works for any model built from them, the
parameters other models or later versions add included. Parameters that are not numbers of
that form (a link rate written ``"100mbit"``) describe no workers and are left out.
"""

from __future__ import annotations

import numpy as np

from gradcode.recommend.errors import RecommendError
from gradcode.timing import TimingModel
from gradcode.timing.distributions import PerWorker


def worker_parameters(model: TimingModel) -> dict[str, PerWorker]:
    """The model's parameters in per-worker form, by name (``parameters.<name>`` in a spec)."""
    found = {}
    shared = model.not_per_worker
    for key, value in model.params().items():
        if key in shared:
            continue
        try:
            found[key] = PerWorker.parse(f"parameters.{key}", value, positive=False)
        except ValueError:
            continue  # not a per-worker number: it describes no workers
    return found


def check_workers(model: TimingModel, n: int, *, label: str = "n") -> None:
    """``RecommendError`` unless every per-worker parameter list describes ``n`` workers.

    ``label`` is how the caller calls ``n`` in the one-line message (``--n`` on the command
    line).
    """
    for key, parameter in worker_parameters(model).items():
        described = parameter.workers()
        if described is not None and described != n:
            raise RecommendError(
                f"parameters.{key}: describes {described} workers but {label} is {n}"
            )


def worker_types(model: TimingModel, n: int) -> np.ndarray | None:
    """Type of every worker, ``(n,)`` ints from 0: workers whose parameters are all equal share
    a type. ``None`` when all ``n`` workers are alike (a homogeneous cluster)."""
    columns = [p.for_workers(n) for p in worker_parameters(model).values() if not p.uniform]
    if not columns:
        return None
    _, types = np.unique(np.stack(columns, axis=1), axis=0, return_inverse=True)
    return types.reshape(-1)
