"""Optimizers driven by the decoded gradient: one step per iteration, state in named arrays.

The runtime asks ``point(state)`` for the parameters at which the workers evaluate the gradient,
decodes ``grad F(point)`` and calls ``step(state, t, gradient)``; ``model(state)`` is the
current iterate (what is logged, checkpointed and evaluated). State is a ``dict[str,
np.ndarray]`` so that checkpoints store it exactly and a resumed run continues bit for bit.

=============  ===============================================================================
``gd``         ``theta <- theta - eta_t grad F(theta)``
``nesterov``   Nesterov's accelerated gradient in Bubeck's form (paper 000 cites Bubeck 2015)
``tandon``     the accelerated variant of Tandon et al.'s public code (``theta = 2 / (t + 2)``)
=============  ===============================================================================

``eta_t`` is ``Constant(eta)`` or ``Inverse(c1, c2)`` (``c1 / (t + c2)``, paper 001's SGD).
"""

from gradcode.errors import UnknownNameError
from gradcode.optim.base import Constant, Inverse, Optimizer, Schedule, State
from gradcode.optim.gd import GradientDescent
from gradcode.optim.nesterov import Nesterov
from gradcode.optim.tandon import TandonAccelerated

OPTIMIZERS: dict[str, type[Optimizer]] = {
    GradientDescent.kind: GradientDescent,
    Nesterov.kind: Nesterov,
    TandonAccelerated.kind: TandonAccelerated,
}


def build(kind: str, schedule: Schedule) -> Optimizer:
    """Optimizer ``kind`` with step sizes ``schedule``; ``ValueError`` naming the choices."""
    if kind not in OPTIMIZERS:
        raise UnknownNameError("optimizer", kind, OPTIMIZERS)
    return OPTIMIZERS[kind](schedule)


__all__ = [
    "OPTIMIZERS",
    "Constant",
    "GradientDescent",
    "Inverse",
    "Nesterov",
    "Optimizer",
    "Schedule",
    "State",
    "TandonAccelerated",
    "build",
]
