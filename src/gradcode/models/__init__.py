"""Models trained by the runtime: per-partition gradient sums, losses and the papers' metrics.

A model is the loss ``l(x, y; theta)`` of one example; the objective over ``N`` training rows is
``F(theta) = (1/N) sum_i l(x_i, y_i; theta) + l2 * ||theta||^2`` (the ``alpha ||beta||^2``
convention of Tandon et al.'s code). Workers compute ``partial_gradient`` on their partitions:
the *unscaled sum* of the per-example gradients of one partition, so that the sum over all
partitions (what every exact gradient code decodes) is ``sum_i grad l_i``, and the master forms
``full_gradient`` from it. Shapes: ``X`` ``(rows, p)`` (CSR or dense), ``y`` ``(rows,)``,
``theta`` ``(p,)``.

``build(kind)`` returns the model: ``logistic`` (labels +-1; metric: test AUC) or ``linear``
(real targets; metrics: relative error between iterates, normalized error to ``theta*``).
"""

from gradcode.errors import UnknownNameError
from gradcode.models.base import Model
from gradcode.models.linear import LinearRegression
from gradcode.models.logistic import LogisticRegression

ML_MODELS: dict[str, type[Model]] = {
    LogisticRegression.kind: LogisticRegression,
    LinearRegression.kind: LinearRegression,
}


def build(kind: str) -> Model:
    """The model ``kind`` (``logistic`` or ``linear``); ``ValueError`` naming the choices."""
    if kind not in ML_MODELS:
        raise UnknownNameError("model", kind, ML_MODELS)
    return ML_MODELS[kind]()


__all__ = ["ML_MODELS", "LinearRegression", "LogisticRegression", "Model", "build"]
