"""Models trained by the runtime: per-partition gradient sums, losses and the papers' metrics.

A model is the loss ``l(x, y; theta)`` of one example; the objective over ``N`` training rows is
``F(theta) = (1/N) sum_i l(x_i, y_i; theta) + l2 * ||theta||^2`` (the ``alpha ||beta||^2``
convention of Tandon et al.'s code). Workers compute ``partial_gradient`` on their partitions:
the *unscaled sum* of the per-example gradients of one partition, so that the sum over all
partitions (what every exact gradient code decodes) is ``sum_i grad l_i``, and the master forms
``full_gradient`` from it. Shapes: ``X`` ``(rows, features)`` (CSR or dense), ``y``
``(rows,)``, ``theta`` ``(p,)`` with ``p = model.parameter_count(features)``; the run starts
from ``model.initial_parameters(features, seed)``.

``build(kind, params)`` returns a model by name (``gradcode.models.registry``): ``logistic``
(labels +-1; metric: test AUC), ``linear`` (real targets; metrics: relative error between
iterates, normalized error to ``theta*``), and, with the ``nn`` extra (JAX), the networks of
``gradcode.models.nn``: ``mlp`` and ``coded-reduce-cnn`` (paper 001's Table II), on labels
``0 .. C-1``. Installed packages add models through the entry-point group ``gradcode.models``.
"""

from gradcode.models.base import TASKS, Model
from gradcode.models.linear import LinearRegression
from gradcode.models.logistic import LogisticRegression
from gradcode.models.registry import available, build, model_class, register, task, unregister

__all__ = [
    "TASKS",
    "LinearRegression",
    "LogisticRegression",
    "Model",
    "available",
    "build",
    "model_class",
    "register",
    "task",
    "unregister",
]
