"""Neural networks as models: their gradients come from JAX's automatic differentiation.

A network is a ``gradcode.models.Model`` like the linear ones: the runtime hands it a flat
float64 parameter vector and a partition's rows and gets back the *sum* of the per-row
gradients, flat and float64 (``gradcode.models.nn.network.Network``). Only the forward pass is
written here (``logits``); ``jax.grad`` derives the backward pass and ``jax.jit`` compiles both
for the CPU (``gradcode.models.nn.backend``). Labels are classes ``0 .. C-1`` (task
``multiclass``), the loss per row softmax cross-entropy; rows are flattened images.

Precision: float64 by default (``dtype="float64"``), ``float32`` on request. The runtime's
parameter vector, the codes' encoding and decoding and the optimizer are float64 whatever the
network computes in; a float32 network gets its parameters rounded to float32 and returns its
gradient sums cast to float64. An exact code's decoded sum differs from the serial sum of the
same per-partition gradients by the decoding's float64 round-off alone, so a coded run follows
the serial run (``gradcode.runfile.reference``) to float64 round-off: measured on
scikit-learn's digits (a 64-16-10 perceptron, 30 iterations, a late worker each iteration),
largest relative difference of an iterate 2.5e-16 under ``frc`` and 4.1e-15 under ``crc``,
and an uncoded run equal bit for bit. The tests ask 1e-12 of a float64 network. A float32
network measured the same here (the 1e-16 differences of the float64 iterates almost never
change their float32 rounding), but once one parameter's float32 image differs by one unit in
the last place (6e-8 relative) its gradients differ at float32's precision, and a non-convex
loss may amplify that from iteration to iteration: the tests ask 1e-5 of a float32 network,
over a few iterations. float32 is about three times faster for the Table II network on this
machine's CPU (320 CIFAR-sized rows: 0.33 s against 1.1 s per gradient sum). JAX computes in
float64 only with ``jax_enable_x64``; the backend turns it on for its own calls only (a
context manager), leaving any other JAX code of the process as it was.

Importing this package needs the ``nn`` extra (``pip install 'gradcode[nn]'``); without it
the import is one line, ``gradcode.extras.MissingExtra``. Nothing else in gradcode imports it
until a network is asked for by name, so ``import gradcode`` and the ranks of a logistic run
never load JAX.
"""

from gradcode.extras import require

require("nn", "the neural-network models (gradcode.models.nn)")
