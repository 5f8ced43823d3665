"""Neural networks as models: their gradients come from JAX's automatic differentiation.

A network is a ``gradcode.models.Model`` like the linear ones: the runtime hands it a flat
float64 parameter vector and a partition's rows and gets back the *sum* of the per-row
gradients, flat and float64 (``gradcode.models.nn.network.Network``). Only the forward pass is
written here (``logits``); ``jax.grad`` derives the backward pass and ``jax.jit`` compiles both
for the CPU (``gradcode.models.nn.backend``). Labels are classes ``0 .. C-1`` (task
``multiclass``), the loss per row softmax cross-entropy; rows are flattened images.

Precision: float64 by default (``dtype="float64"``). The runtime's parameter vector, the codes'
encoding and decoding, and the optimizer are float64; computing the network in float64 too
means that an exact code's decoded sum differs from the serial sum of the same per-partition
gradients by the decoding's round-off alone (relative ~1e-13 for well-conditioned codes), so a
coded run's iterates follow the serial run to about 1e-9 relative over tens of iterations,
where float32 arithmetic (``dtype="float32"``, twice as fast for the convolutions) would turn
each 1e-16 difference in a parameter into a last-bit difference of float32 (1e-7) at the next
forward pass, which a non-convex loss amplifies iteration after iteration. JAX computes in
float64 only with ``jax_enable_x64``; the backend turns it on for its own calls only (a context
manager), leaving any other JAX code of the process as it was.

Importing this package needs the ``nn`` extra (``pip install 'gradcode[nn]'``); without it
the import is one line, ``gradcode.extras.MissingExtra``. Nothing else in gradcode imports it
until a network is asked for by name, so ``import gradcode`` and the ranks of a logistic run
never load JAX.
"""

from gradcode.extras import require

require("nn", "the neural-network models (gradcode.models.nn)")
