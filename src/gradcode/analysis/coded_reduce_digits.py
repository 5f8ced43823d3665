"""Fig. 13's method of paper 001 on scikit-learn's digits: a STAND-IN for CIFAR-10.

Paper 001, Section IV-B, simulates training a CNN on CIFAR-10 (``d = 49920`` images) over
``N = 156`` workers and plots test accuracy against simulated wall-clock time for UMW, GC, RAR,
SGD and CR (on a ``(12, 2)``-regular tree, resiliency ``5/12``), with the model of Section
III-C: a node with ``d_i`` data points computes for ``d_i (a + Exp(mu))``, ``a = 5e-5`` s,
``a mu = 1``, and a receiver takes one message at a time, ``tc = 0.05`` s each. We reproduce
the *method* on data that ships with scikit-learn (``load_digits``: 1797 8x8 images, 10
classes, no download), so the accuracies are those of the stand-in, not of CIFAR-10.

Learning. A one-hidden-layer perceptron (64 -> 32 ReLU -> 10, softmax cross-entropy; Glorot
uniform initialisation, zero biases): ``gradcode.models.nn.mlp.MLP``, whose gradient JAX derives
and compiles in float64 (the curves are those of the hand-written NumPy gradient it replaced:
the same accuracies, losses within 2.2e-16; ``docs/guide/models.md``), trained by full-batch
gradient descent on
``TRAIN_SIZE = 1404`` images (9 per worker, 39 per CR partition, 234 per CR node: every
allocation is a whole number of images); the other 393 are the test set. The step size
follows the paper's schedule shape (decay by 0.7 at iterations 1300 and 2100 of 2500, i.e. at
52 % and 84 % of the run) from ``STEP = 0.5`` (the paper's 0.02 is for its CNN and a much
larger data set; ours is chosen for the stand-in). UMW, GC, RAR and CR all deliver the exact
gradient, so their iterates are identical (the gradient descent row group ``iterates = "gd"``
is shared; only the time axis differs). ``meta["exactness"]`` backs that up: at the first and
last iterate the per-partition gradients are encoded and decoded by the very GC and CR codes
of the preset under a random straggler pattern and compared with the full gradient. SGD
(``iterates = "sgd"``) uses, at every iteration, the data of the first ``N - S = 91`` workers
whose messages reach the master, averaged over those workers' images (the unbiased
``rescale=True`` form of ``ignore-stragglers``): which workers those are comes from the same
timing draws that give its iteration time.

Timing. The per-iteration times are drawn from the ``coded-reduce-cnn`` preset's model and
schemes via ``gradcode.timing`` (one draw of the 156 workers' per-point times per iteration,
shared by every scheme: common random numbers, as ``gradcode.sim.simulate`` does), twice:

- ``time``: with the data set size set to the stand-in's ``TRAIN_SIZE`` (the cluster of the
  paper training on digits: computation is then tiny beside the ``tc`` transfers);
- ``time_paper_scale``: with the paper's ``d = 49920`` (each iteration costs what an
  iteration of Fig. 13 costs; the ratios of these curves are the paper's speed-ups).

``trials`` is the number of iterations simulated (one timing sample per scheme each), capped
at the paper's 2500; the run is evaluated (train/test accuracy and mean training loss) at
every one of the first ``DENSE`` iterations and at about ``EVALUATIONS`` evenly spaced ones.
Rows: scheme, iterates, iteration, time, time_paper_scale, train_accuracy, test_accuracy,
loss. NumPy's arithmetic runs single-threaded (``threadpoolctl``) and XLA's on matrices this
small in one thread, so that the result is bit-for-bit reproducible. Needs the ``data`` (the
digits) and ``nn`` (the network) extras.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcode.analysis.base import Analysis, Progress
from gradcode.blas import single_threaded_blas
from gradcode.extras import require
from gradcode.models import Model
from gradcode.sim import load_spec, preset
from gradcode.sim.spec import Spec
from gradcode.timing.queue import fifo_departures

PRESET = "coded-reduce-cnn"
#: the schemes of Fig. 13, by their labels in the preset (CR-frc is not in the figure)
SCHEMES = ("UMW", "GC", "RAR", "SGD", "CR")
EXACT = ("UMW", "GC", "RAR", "CR")
TRAIN_SIZE = 1404  # = 156 * 9 = 36 * 39: whole images per worker and per CR partition
HIDDEN = 32
STEP = 0.5
DECAY = 0.7
#: the paper's schedule: 2500 iterations, step decays at 1300 and 2100
PAPER_ITERATIONS = 2500
DECAY_AT = (1300 / 2500, 2100 / 2500)
EVALUATIONS = 200
DENSE = 50

#: the perceptron's parameters, flat: ``MLP.layout`` (weights ``(in, out)``, then biases)
Params = np.ndarray


@dataclass(frozen=True)
class Digits:
    """The stand-in data: features scaled to [0, 1], a seeded stratified split."""

    train_x: np.ndarray
    train_y: np.ndarray
    test_x: np.ndarray
    test_y: np.ndarray


def load(rng: np.random.Generator) -> Digits:
    require("data", "the coded-reduce-digits analysis (scikit-learn's digits)")
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    x, y = load_digits(return_X_y=True)
    train_x, test_x, train_y, test_y = train_test_split(
        x / 16.0,
        y,
        train_size=TRAIN_SIZE,
        stratify=y,
        random_state=int(rng.integers(2**31 - 1)),
    )
    return Digits(train_x, train_y, test_x, test_y)


def network() -> Model:
    """The perceptron, ``features -> HIDDEN -> 10`` (needs the ``nn`` extra)."""
    require("nn", "the coded-reduce-digits analysis (its perceptron)")
    from gradcode.models.nn.mlp import MLP

    return MLP(hidden=[HIDDEN], classes=10)


def initial_params(rng: np.random.Generator, features: int = 64, classes: int = 10) -> Params:
    """Glorot-uniform weights and zero biases, flat in the perceptron's layout."""

    def glorot(fan_in: int, fan_out: int) -> np.ndarray:
        limit = np.sqrt(6.0 / (fan_in + fan_out))
        return rng.uniform(-limit, limit, size=(fan_in, fan_out))

    w1, w2 = glorot(features, HIDDEN), glorot(HIDDEN, classes)
    return np.concatenate([w1.ravel(), np.zeros(HIDDEN), w2.ravel(), np.zeros(classes)])


def gradient(model: Model, params: Params, x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """The summed cross-entropy's gradient over ``(x, y)`` (eq. 3 sums, it does not average)."""
    return model.partial_gradient(x, y, params)


def accuracy(model: Model, params: Params, x: np.ndarray, y: np.ndarray) -> float:
    return model.accuracy(x, y, params)  # type: ignore[attr-defined]


def step_size(iteration: int, iterations: int) -> float:
    """``STEP``, times ``DECAY`` after each of the paper's decay points (scaled to the run)."""
    passed = sum(iteration >= round(at * iterations) for at in DECAY_AT)
    return STEP * DECAY**passed


def evaluation_points(iterations: int) -> list[int]:
    """Every iteration up to ``DENSE`` (where the accuracy moves fastest), then evenly."""
    every = max(1, iterations // EVALUATIONS)
    dense = range(min(DENSE, iterations) + 1)
    return sorted({*dense, *range(0, iterations + 1, every), iterations})


def train(
    model: Model,
    data: Digits,
    params: Params,
    iterations: int,
    batch: Callable[[int], np.ndarray | None],
    record: Callable[[int, Params], None],
    progress: Progress,
    name: str,
) -> Params:
    """Gradient descent; ``batch(t)`` gives the training rows of iteration ``t`` (``None``:
    all of them), and the step uses the mean gradient over those rows."""
    points = set(evaluation_points(iterations))
    params = params.copy()
    for t in range(iterations):
        if t in points:
            record(t, params)
        rows = batch(t)
        x = data.train_x if rows is None else data.train_x[rows]
        y = data.train_y if rows is None else data.train_y[rows]
        scale = step_size(t, iterations) / len(y)
        params = params - scale * gradient(model, params, x, y)
        if (t + 1) % max(1, iterations // 5) == 0:
            progress(f"{name}: iteration {t + 1}/{iterations}")
    record(iterations, params)
    return params


def iterations_for(trials: int) -> int:
    """Iterations simulated for ``trials``: ``trials`` itself, capped at the paper's 2500."""
    return max(2, min(trials, PAPER_ITERATIONS))


def worker_rows(workers: np.ndarray, per_worker: int) -> np.ndarray:
    """Training rows of ``workers`` under the uncoded placement (worker ``i``: block ``i``)."""
    return (np.asarray(workers)[:, None] * per_worker + np.arange(per_worker)).ravel()


def specs(data: int) -> tuple[Spec, Spec]:
    """The preset at the paper's scale, and the same with ``parameters.data = data``."""
    raw = preset(PRESET)
    paper = load_spec(raw, origin=PRESET)
    scaled = copy.deepcopy(raw)
    scaled["parameters"]["data"] = data
    return paper, load_spec(scaled, origin=f"{PRESET} (data = {data})")


def iteration_times(
    paper: Spec, digits: Spec, iterations: int, rng: np.random.Generator
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray], np.ndarray]:
    """Per scheme, the time of every iteration at the stand-in's and at the paper's data
    size, and SGD's responders per iteration, ``(iterations, N - S)`` worker indices."""
    by_label = {config.label: config for config in digits.schemes}
    paper_by_label = {config.label: config for config in paper.schemes}
    workers = {by_label[label].scheme.n for label in SCHEMES}
    if len(workers) != 1:
        raise AssertionError(f"{PRESET}: the schemes have different worker counts {workers}")
    if paper.model.params() | {"data": None} != digits.model.params() | {"data": None}:
        raise AssertionError("the two specs must differ in the data set size only")
    # the per-point times do not depend on the data set size: one draw serves both scales
    draws = digits.model.sample(rng, iterations, workers.pop())
    small = {
        label: digits.model.prepare(by_label[label].scheme).run(draws).times for label in SCHEMES
    }
    large = {
        label: paper.model.prepare(paper_by_label[label].scheme).run(draws).times
        for label in SCHEMES
    }
    sgd = by_label["SGD"].scheme
    model = digits.model
    ready = draws["unit"] * (model.data / sgd.k)  # type: ignore[attr-defined]
    arrivals = fifo_departures(ready, model.tc / sgd.m)  # type: ignore[attr-defined]
    order = np.argsort(arrivals, axis=1, kind="stable")
    wait = sgd.n - sgd.s
    last = np.take_along_axis(arrivals, order[:, wait - 1 : wait], axis=1)[:, 0]
    if not np.allclose(last, small["SGD"], rtol=1e-12, atol=0.0):
        raise AssertionError("SGD's responders disagree with the model's completion times")
    return small, large, order[:, :wait]


def exactness(
    model: Model,
    paper: Spec,
    data: Digits,
    checkpoints: dict[str, Params],
    rng: np.random.Generator,
) -> dict[str, dict[str, float]]:
    """Relative error of the GC and CR decodings of the gradient at ``checkpoints``."""
    by_label = {config.label: config for config in paper.schemes}
    result: dict[str, dict[str, float]] = {}
    for label in ("GC", "CR"):
        code = by_label[label].scheme
        parts = np.array_split(np.arange(TRAIN_SIZE), code.k)
        if len({len(p) for p in parts}) != 1:
            raise AssertionError(f"{label}: k = {code.k} does not divide {TRAIN_SIZE}")
        if label == "CR":
            pattern = next(iter(code.patterns(exhaustive=False, rng=rng, limit=1)))
            responders = sorted(pattern.responders)
        else:
            responders = sorted(rng.choice(code.n, code.n - code.s, replace=False).tolist())
        result[label] = {}
        for name, params in checkpoints.items():
            partials = np.array(
                [gradient(model, params, data.train_x[p], data.train_y[p]) for p in parts]
            )
            messages = {w: code.encode(w, partials[list(code.partitions(w))]) for w in responders}
            decoded = code.decode(messages, partials.shape[1])
            full = gradient(model, params, data.train_x, data.train_y)
            result[label][name] = float(np.abs(decoded - full).max() / np.abs(full).max())
    return result


def compute(trials: int, seed: int, progress: Progress) -> Analysis:
    iterations = iterations_for(trials)
    split_seed, init_seed, timing_seed, check_seed = np.random.SeedSequence(seed).spawn(4)
    paper, digits = specs(TRAIN_SIZE)
    with single_threaded_blas(openmp=True):
        data = load(np.random.default_rng(split_seed))
        model = network()
        start = initial_params(np.random.default_rng(init_seed))
        small, large, responders = iteration_times(
            paper, digits, iterations, np.random.default_rng(timing_seed)
        )
        progress(f"timing: {iterations} iterations of {', '.join(SCHEMES)} drawn")
        workers = next(c.scheme.n for c in digits.schemes if c.label == "SGD")
        per_worker = TRAIN_SIZE // workers
        curves, final = train_both(model, data, start, iterations, responders, per_worker, progress)
        checks = exactness(
            model,
            paper,
            data,
            {"initial": start, "final": final},
            np.random.default_rng(check_seed),
        )
    rows = curve_rows(curves, small, large, iterations)
    meta = describe(paper, digits, data, iterations, per_worker, (small, large), checks)
    return Analysis(rows, meta)


#: per kind of iterates (``gd``, ``sgd``), per evaluated iteration: train accuracy, test
#: accuracy, mean training loss
Curves = dict[str, dict[int, tuple[float, float, float]]]


def train_both(
    model: Model,
    data: Digits,
    start: Params,
    iterations: int,
    responders: np.ndarray,
    per_worker: int,
    progress: Progress,
) -> tuple[Curves, Params]:
    """The curves of full-batch gradient descent (the exact schemes') and of SGD over each
    iteration's ``responders``, both from ``start``; and gradient descent's final iterate."""

    def sgd_batch(t: int) -> np.ndarray:
        return worker_rows(responders[t], per_worker)

    curves: Curves = {"gd": {}, "sgd": {}}

    def recorder(kind: str) -> Callable[[int, Params], None]:
        def record(t: int, params: Params) -> None:
            loss = float(np.sum(model.losses(data.train_x, data.train_y, params)))
            curves[kind][t] = (
                accuracy(model, params, data.train_x, data.train_y),
                accuracy(model, params, data.test_x, data.test_y),
                loss / TRAIN_SIZE,
            )

        return record

    final = train(model, data, start, iterations, lambda t: None, recorder("gd"), progress, "GD")
    train(model, data, start, iterations, sgd_batch, recorder("sgd"), progress, "SGD")
    return curves, final


def curve_rows(
    curves: Curves,
    small: dict[str, np.ndarray],
    large: dict[str, np.ndarray],
    iterations: int,
) -> list[dict[str, Any]]:
    """Per scheme and evaluated iteration, its iterates' accuracies and loss against the
    elapsed time at both scales (``small``, ``large``: the iteration times)."""
    rows: list[dict[str, Any]] = []
    for label in SCHEMES:
        kind = "gd" if label in EXACT else "sgd"
        elapsed = np.concatenate([[0.0], np.cumsum(small[label])])
        elapsed_paper = np.concatenate([[0.0], np.cumsum(large[label])])
        for t in evaluation_points(iterations):
            train_acc, test_acc, loss = curves[kind][t]
            rows.append(
                {
                    "scheme": label,
                    "iterates": kind,
                    "iteration": t,
                    "time": float(elapsed[t]),
                    "time_paper_scale": float(elapsed_paper[t]),
                    "train_accuracy": train_acc,
                    "test_accuracy": test_acc,
                    "loss": loss,
                }
            )
    return rows


def describe(
    paper: Spec,
    digits: Spec,
    data: Digits,
    iterations: int,
    per_worker: int,
    times: tuple[dict[str, np.ndarray], dict[str, np.ndarray]],
    checks: dict[str, dict[str, float]],
) -> dict[str, Any]:
    """The analysis's ``meta``: what was computed and how (``times``: the iteration times at
    the stand-in's and at the paper's scale)."""
    small, large = times
    return {
        "what": "Fig. 13's method (accuracy versus simulated wall-clock time for UMW, GC, RAR, "
        "SGD and CR) on scikit-learn's digits, a STAND-IN for CIFAR-10: a 64-32-10 perceptron "
        "trained by full-batch gradient descent (exact schemes share their iterates) or by SGD "
        "over the first N - S responders; iteration times from the coded-reduce-cnn preset's "
        "model at the stand-in's data size (time) and at the paper's (time_paper_scale)",
        "source": "paper 001 (Reisizadeh et al., IEEE/ACM ToN 2021), Section IV-B, Fig. 13",
        "stand_in": "scikit-learn load_digits, not CIFAR-10",
        "data": {
            "train": TRAIN_SIZE,
            "test": len(data.test_y),
            "features": int(data.train_x.shape[1]),
            "classes": 10,
            "per_worker": per_worker,
        },
        "model": {
            "layers": [64, HIDDEN, 10],
            "activation": "relu",
            "init": "glorot uniform",
            "gradient": "JAX autodiff (gradcode.models.nn.mlp.MLP, float64)",
        },
        "optimizer": {
            "step": STEP,
            "decay": DECAY,
            "decay_at": [round(at * iterations) for at in DECAY_AT],
            "gradient": "mean over the iteration's training rows",
        },
        "iterations": iterations,
        "evaluated": f"every iteration up to {DENSE}, then every "
        f"{max(1, iterations // EVALUATIONS)}",
        "preset": PRESET,
        "timing_parameters": {
            "paper_scale": paper.model.params(),
            "stand_in_scale": digits.model.params(),
        },
        "mean_iteration_time": {
            "stand_in_scale": {label: float(small[label].mean()) for label in SCHEMES},
            "paper_scale": {label: float(large[label].mean()) for label in SCHEMES},
        },
        "exactness": {
            "what": "max |decoded - full| / max |full| of the gradient, one random straggler "
            "pattern per code (GC: any N - S workers; CR: s children of every parent)",
            **checks,
        },
    }
