"""The uncoded run of a configuration, computed serially in one process (no MPI).

Every exact scheme decodes ``sum_p g_p`` over the same ``k`` partitions (or, for a code that
decodes a function of the sum, ``code.reference`` of it: ``h`` of the summed matrix for
``heterogeneous-poly``, applied here to the serial sum), so its trajectory must equal this one
to round-off. The sum is formed exactly as the uncoded master forms it
(partials added in partition order), so an uncoded MPI run reproduces it bit for bit, which
the tests check; the other schemes are then compared with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from gradcode.codes import GradientCode
from gradcode.models import Model
from gradcode.runfile.config import RunConfig
from gradcode.runfile.dataset import load_training_data
from gradcode.runfile.plan import build_plan


def serial_trajectory(config: RunConfig, iterations: int | None = None) -> np.ndarray:
    """The iterates ``theta_1 .. theta_T`` of the uncoded run, shape ``(T, p)``."""
    plan = build_plan(config)
    data = load_training_data(config.data, plan.partitions, config.model.kind)
    model = config.model.build()
    l2 = config.model.l2_value(data.rows)
    optimizer = plan.optimizer()
    state = optimizer.init(model.initial_parameters(data.features, config.seed))
    parts = [data.part(p) for p in range(plan.partitions)]
    steps = config.iterations if iterations is None else iterations
    trajectory = np.empty((steps, model.parameter_count(data.features)))
    for t in range(steps):
        point = optimizer.point(state)
        decoded = exact_sum(model, parts, plan.code, point)
        optimizer.step(state, t, model.full_gradient(decoded, point, data.rows, l2))
        trajectory[t] = optimizer.model(state)
    return trajectory


def exact_sum(
    model: Model, parts: Sequence[tuple[Any, Any]], code: GradientCode, point: np.ndarray
) -> np.ndarray:
    """What an exact code decodes at ``point``: ``code.reference`` of the partial gradients of
    ``parts`` (``(X_p, y_p)``) summed in partition order, as the uncoded master sums them."""
    total = model.partial_gradient(*parts[0], point)
    for X, y in parts[1:]:
        np.add(total, model.partial_gradient(X, y, point), out=total)
    return code.reference(total)
