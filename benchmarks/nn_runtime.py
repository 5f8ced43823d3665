"""What a network costs the runtime (issue 42, point 7), all numbers from one run.

1. One iteration's gradient work per rank, on one partition of ``--rows`` CIFAR-shaped rows
   (3 x 32 x 32, random pixels), median of ``--repeats`` calls after a warm-up call:
   - the backend's compiled gradient sum (``jax.jit(jax.grad)``, ``Network.partial_gradient``,
     flat float64 in and out) of paper 001's Table II CNN (``coded-reduce-cnn``, 117,706
     parameters) and of a 3072-38-10 perceptron (``mlp``, 117,164), float64 and float32;
   - against the per-partition work of numpy models of comparable parameter count: logistic
     regression on rows of 117,706 features (``LogisticRegression.partial_gradient``), and the
     same perceptron's gradient written by hand in numpy here (this benchmark only; gradcode
     writes no backward pass by hand), checked against JAX's to 1e-10;
   - per partition against batched over partitions: ``--partitions`` calls of the compiled
     gradient (what a worker holding that many partitions does) against one call of
     ``jax.vmap`` of the same gradient over the partitions, which returns every partition's
     sum at once.
The process runs with every BLAS on one thread, as a training rank does (it starts itself
again so if need be); JAX keeps its own thread pool, as in a rank.

2. The runtime's overhead with a 117,706-parameter model: real MPI jobs (``--workers`` workers,
   ``uncoded`` and ``frc`` with s = 1) of ``--iterations`` iterations training the CNN on the
   CIFAR-10 STAND-IN (``--rows`` images per partition), and the same jobs training logistic
   regression on rows of 117,706 features (as many bytes per message, a cheap gradient). Per
   iteration after ``--warmup``: the iteration's time minus the slowest used worker's measured
   gradient compute (what the master waits for beyond the work), and the bytes the master
   received; medians printed, and the CNN's overhead over logistic regression's.

    .venv/bin/python benchmarks/nn_runtime.py [--rows 64] [--repeats 7] [--partitions 4]
        [--workers 4] [--iterations 12] [--warmup 2]
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import yaml

from gradcode.blas import single_thread_environment
from gradcode.data import prepare
from gradcode.launch.jobs import run_job
from gradcode.models import LogisticRegression
from gradcode.models.registry import build
from gradcode.runlogs.log import read_log

FEATURES = 3 * 32 * 32
CNN = {"kind": "coded-reduce-cnn", "params": {}}
#: 3072 x 38 + 38 + 38 x 10 + 10 = 117,164 parameters: the CNN's count, within 0.5 %
MLP_HIDDEN = 38
NETWORKS = ("cnn float64", "cnn float32", "mlp float64", "mlp float32")


def median_seconds(call: Callable[[], object], repeats: int) -> tuple[float, float]:
    """The median and the least wall time of ``call`` over ``repeats`` calls, after one call
    not counted (the least: what the call costs when no other job takes the cores)."""
    call()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times)


def numpy_mlp_gradient(widths: list[int]) -> Callable[..., np.ndarray]:
    """The gradient sum of a ReLU perceptron with softmax cross-entropy, by hand in numpy, on
    ``Layout``'s flat vector (``dense{i}.weight`` ``(in, out)`` then ``dense{i}.bias``)."""
    shapes = [s for a, b in itertools.pairwise(widths) for s in ((a, b), (b,))]
    sizes = [int(np.prod(s)) for s in shapes]
    edges = np.cumsum([0, *sizes])

    def gradient(x: np.ndarray, y: np.ndarray, theta: np.ndarray) -> np.ndarray:
        spans = zip(itertools.pairwise(edges), shapes, strict=True)
        arrays = [theta[a:b].reshape(s) for (a, b), s in spans]
        layers = list(zip(arrays[::2], arrays[1::2], strict=True))
        inputs = [x]
        for i, (w, b) in enumerate(layers):
            z = inputs[-1] @ w + b
            inputs.append(np.maximum(z, 0.0) if i < len(layers) - 1 else z)
        z = inputs.pop()
        p = np.exp(z - z.max(axis=1, keepdims=True))
        delta = p / p.sum(axis=1, keepdims=True)
        delta[np.arange(len(y)), y] -= 1.0
        grads: list[np.ndarray] = []
        for i in range(len(layers) - 1, -1, -1):
            grads = [(inputs[i].T @ delta).ravel(), delta.sum(axis=0), *grads]
            if i:
                delta = (delta @ layers[i][0].T) * (inputs[i] > 0)
        return np.concatenate(grads)

    return gradient


def batched_gradient(network, features: int) -> Callable[..., np.ndarray]:
    """Every partition's gradient sum in one call: ``jax.vmap`` over ``(k, rows, features)``."""
    import jax
    import jax.numpy as jnp

    from gradcode.models.nn.backend import cross_entropy

    layout = network.layout(features)

    def total(theta, x, y):
        return jnp.sum(cross_entropy(network.logits(layout.unflatten(theta), x), y))

    compiled = jax.jit(jax.vmap(jax.grad(total), in_axes=(None, 0, 0)))
    dtype = np.dtype(network.dtype)

    def gradient(xs: np.ndarray, ys: np.ndarray, theta: np.ndarray) -> np.ndarray:
        with jax.enable_x64(True):
            out = compiled(theta.astype(dtype), xs.astype(dtype), ys.astype(np.int32))
            return np.array(out, np.float64)

    return gradient


def network_times(
    name: str, network, xs: np.ndarray, ys: np.ndarray, repeats: int
) -> dict[str, tuple[float, float]]:
    """One partition's compiled gradient sum; ``len(xs)`` of them one by one and batched."""
    theta, k = network.initial_parameters(FEATURES, 0), len(xs)
    batched = batched_gradient(network, FEATURES)
    return {
        name: median_seconds(lambda: network.partial_gradient(xs[0], ys[0], theta), repeats),
        f"{name} x{k} per partition": median_seconds(
            lambda: [network.partial_gradient(xs[i], ys[i], theta) for i in range(k)], repeats
        ),
        f"{name} x{k} batched": median_seconds(lambda: batched(xs, ys, theta), repeats),
    }


def gradient_work(args: argparse.Namespace) -> None:
    rng = np.random.default_rng(0)
    k, rows = args.partitions, args.rows
    xs = rng.integers(0, 256, (k, rows, FEATURES)) / 255.0
    ys = rng.integers(0, 10, (k, rows))
    x, y = xs[0], ys[0]
    times: dict[str, tuple[float, float]] = {}
    for label, kind, params in (
        ("cnn", "coded-reduce-cnn", {}),
        ("mlp", "mlp", {"hidden": [MLP_HIDDEN]}),
    ):
        for dtype in ("float64", "float32"):
            network = build(kind, {**params, "dtype": dtype})
            times |= network_times(f"{label} {dtype}", network, xs, ys, args.repeats)
    mlp = build("mlp", {"hidden": [MLP_HIDDEN]})
    theta = mlp.initial_parameters(FEATURES, 0)
    by_hand = numpy_mlp_gradient(mlp.widths(FEATURES))
    difference = np.abs(by_hand(x, y, theta) - mlp.partial_gradient(x, y, theta)).max()
    assert difference <= 1e-10 * np.abs(by_hand(x, y, theta)).max(), difference
    times["mlp numpy by hand"] = median_seconds(lambda: by_hand(x, y, theta), args.repeats)
    p = build(**CNN).parameter_count(FEATURES)
    x_wide, y_pm = rng.random((rows, p)), np.where(y % 2, 1.0, -1.0)
    logistic, zero = LogisticRegression(), np.zeros(p)
    times["logistic numpy"] = median_seconds(
        lambda: logistic.partial_gradient(x_wide, y_pm, zero), args.repeats
    )
    print_work(times, args, p)


def print_work(times: dict[str, tuple[float, float]], args: argparse.Namespace, p: int) -> None:
    k = args.partitions
    print(f"\n1. one partition's gradient sum, {args.rows} rows ({args.repeats} calls)")
    print(f"  {'':32s} {'median':>9s}    {'least':>9s}")
    for name, (median, least) in times.items():
        print(f"  {name:32s} {median * 1e3:9.2f} ms {least * 1e3:9.2f} ms")
    ratios = [(f"{name} / logistic numpy (p = {p})", name, "logistic numpy") for name in NETWORKS]
    ratios += [
        (f"mlp {dtype} (JAX) / mlp numpy by hand", f"mlp {dtype}", "mlp numpy by hand")
        for dtype in ("float64", "float32")
    ]
    ratios += [
        (
            f"{name} batched / per partition (x{k})",
            f"{name} x{k} batched",
            f"{name} x{k} per partition",
        )
        for name in NETWORKS
    ]
    print(f"  ratios {'':38s} {'median':>7s} {'least':>7s}")
    for label, top, bottom in ratios:
        median, least = (a / b for a, b in zip(times[top], times[bottom], strict=True))
        print(f"  {label:45s} {median:7.2f} {least:7.2f}")


def prepared(scratch: Path, args: argparse.Namespace, p: int) -> dict[str, Path]:
    rows = args.rows * args.workers
    cnn, logistic = scratch / "cifar10-standin", scratch / "logistic"
    prepare("cifar10-standin", cnn, variant="custom", rows=rows, test_rows=50)
    small = max(args.workers, rows // 8)  # a cheap gradient, wide rows: 1/8 as many
    prepare("synthetic-logistic", logistic, variant="custom", rows=small, features=p, test_rows=0)
    return {"coded-reduce-cnn": cnn, "logistic": logistic}


def job_overhead(out: Path, warmup: int) -> dict[str, float]:
    """Medians over the iterations after ``warmup``: the iteration's time, the slowest used
    worker's compute, their difference (and its least) and the bytes received."""
    rows = read_log(out)[warmup:]
    iteration = [r["iteration_time"] for r in rows]
    compute = [max(m["compute"] for m in r["messages"] if m["key"] in set(r["used"])) for r in rows]
    overhead = [a - b for a, b in zip(iteration, compute, strict=True)]
    return {
        "iteration": statistics.median(iteration),
        "compute": statistics.median(compute),
        "overhead": statistics.median(overhead),
        "least": min(overhead),
        "bytes": statistics.median(r["bytes_received"] for r in rows),
    }


def runtime_overhead(args: argparse.Namespace) -> int:
    n = args.workers
    p = build(**CNN).parameter_count(FEATURES)
    scratch = Path(tempfile.mkdtemp(prefix="gradcode-nn-runtime-"))
    data = prepared(scratch, args, p)
    print(f"\n2. MPI jobs, {n} workers, {args.iterations} iterations ({args.warmup} left out)")
    head = ("iteration", "compute", "overhead", "least")
    print(f"  {'model':18s} {'scheme':8s} " + " ".join(f"{h:>10s}" for h in head))
    found: dict[tuple[str, str], dict[str, float]] = {}
    for kind in ("coded-reduce-cnn", "logistic"):
        for scheme in (
            {"name": "uncoded", "params": {"n": n}},
            {"name": "frc", "params": {"n": n, "s": 1}},
        ):
            run = {
                "iterations": args.iterations,
                "data": {"prepared": str(data[kind])},
                "model": {"kind": kind},
                "scheme": scheme,
                "optimizer": {"kind": "gd", "step": 0.1},
                "log": {"metrics_every": 0},
            }
            name = f"{kind}-{scheme['name']}"
            run_file = scratch / f"{name}.yaml"
            run_file.write_text(yaml.safe_dump(run))
            result = run_job(n + 1, run_file, ["--out", str(scratch / name)], timeout=1800)
            if result.returncode != 0:
                print(f"{name}: job failed\n{result.stderr[-3000:]}", file=sys.stderr)
                return 1
            stats = found[kind, scheme["name"]] = job_overhead(scratch / name, args.warmup)
            seconds = " ".join(f"{stats[h] * 1e3:8.1f}ms" for h in head)
            print(f"  {kind:18s} {scheme['name']:8s} {seconds} {stats['bytes'] / 1e6:5.2f} MB in")
    for scheme in ("uncoded", "frc"):
        cnn, logistic = found["coded-reduce-cnn", scheme], found["logistic", scheme]
        ratio = cnn["overhead"] / logistic["overhead"]
        print(
            f"  {scheme}: CNN overhead / logistic overhead {ratio:.2f}"
            f" (model {p * 8 / 1e6:.2f} MB to each of {n} workers)"
        )
    return 0


def main() -> int:
    environment = single_thread_environment()
    if any(os.environ.get(name) != value for name, value in environment.items()):
        # as a training rank computes (gradcode.launch.jobs): every BLAS on one thread
        os.execve(sys.executable, [sys.executable, *sys.argv], environment)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=64, help="rows per partition")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--partitions", type=int, default=4)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--iterations", type=int, default=12)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--skip-jobs", action="store_true", help="part 1 only")
    args = parser.parse_args()
    print("load average (1, 5, 15 min) at the start: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    gradient_work(args)
    status = 0 if args.skip_jobs else runtime_overhead(args)
    print("load average (1, 5, 15 min) at the end: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    return status


if __name__ == "__main__":
    sys.exit(main())
