"""Which autodiff library should run gradcode's networks: JAX on CPU or PyTorch (issue 42)?

Each library lives in its own throwaway venv (neither is a gradcode dependency); this script
runs itself in them as child processes and measures, per library, in one run:

- import time: wall clock of ``python -c 'import jax'`` (``torch``), median of ``--repeats``
  fresh processes (the files are in the page cache: warm), and the first of them;
- resident memory (``ru_maxrss``) of a process after the import and after one gradient;
- the time of one partition's gradient for paper 001's Table II CNN on ``--batch`` images
  (float32, cross-entropy summed over the batch, parameters in and gradient out as one flat
  float64 numpy vector, as the runtime exchanges them), on 1 and 2 cores (``taskset`` and, for
  torch, ``torch.set_num_threads``), after warm-up, median of ``--repeats``: JAX under
  ``jax.jit``, torch eager and under ``torch.compile``.

Table II gives conv 3->16 3x3 s1 p1, conv 16->64 4x4 s1 p0, linear 64->384->192->10 but no
pooling; 64 features reach the first linear layer from a 32x32 image only if the second
convolution sees 4x4 (or is pooled to 1x1). ``pool8`` (the assumption): ReLU after each layer
but the last, three 2x2 max-pools (one 8x8 max-pool) between the convolutions. ``global``: one
2x2 max-pool after the first convolution, a global max-pool after the second (13x13 -> 1x1),
about six times the arithmetic. Both have 117,706 parameters.

    .venv/bin/python benchmarks/nn_backend.py --jax /tmp/nnb/jax/bin/python \\
        --torch /tmp/nnb/torch/bin/python [--batch 320] [--repeats 7]

Ratios (JAX / torch) of the same run are printed at the end. Child mode (``--child jax|torch``)
is what the venvs run; it imports neither gradcode nor the other library.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import time

LAYERS = ((16, 3, 3, 3), (64, 16, 4, 4), (384, 64), (192, 384), (10, 192))
POOLINGS = ("pool8", "global")


def rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def anonymous_mib() -> float:
    """Memory no other rank can share (anonymous pages: heap, compiled code, buffers); the
    libraries' mapped files are shared through the page cache among ranks on one machine."""
    with open("/proc/self/smaps_rollup") as rollup:
        for line in rollup:
            if line.startswith("Anonymous:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def shapes() -> list[tuple[int, ...]]:
    """Weight and bias shapes in flat-vector order (torch's layout: OIHW, out x in)."""
    out: list[tuple[int, ...]] = []
    for weight in LAYERS:
        out += [weight, (weight[0],)]
    return out


def batch(size: int):
    import numpy as np

    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, (size, 3072)).astype(np.float32) / 255
    y = rng.integers(0, 10, size)
    sizes = [int(np.prod(s)) for s in shapes()]
    theta = rng.normal(0, 0.05, sum(sizes))
    return x, y, theta


def jax_gradient(pooling: str):
    import jax
    import jax.numpy as jnp
    import numpy as np

    split = np.cumsum([int(np.prod(s)) for s in shapes()])[:-1]

    def loss(theta, x, y):
        w1, b1, w2, b2, *dense = (
            p.reshape(s) for p, s in zip(jnp.split(theta, split), shapes(), strict=True)
        )
        h = x.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)  # NHWC: XLA's CPU layout

        def conv(h, w, b, pad):
            k = w.transpose(2, 3, 1, 0)  # OIHW -> HWIO
            dims = ("NHWC", "HWIO", "NHWC")
            out = jax.lax.conv_general_dilated(h, k, (1, 1), pad, dimension_numbers=dims)
            return jax.nn.relu(out + b)

        def maxpool(h, size):  # by reshape: XLA's select-and-scatter gradient is slower
            n, height, width, channels = h.shape
            h = h.reshape(n, height // size, size, width // size, size, channels)
            return h.max(axis=(2, 4))

        h = maxpool(conv(h, w1, b1, ((1, 1), (1, 1))), 8 if pooling == "pool8" else 2)
        h = conv(h, w2, b2, ((0, 0), (0, 0)))
        h = h.max(axis=(1, 2))  # 1x1 (pool8) or 13x13 (global) -> 64 features
        for i in range(0, len(dense), 2):
            h = h @ dense[i].T + dense[i + 1]
            h = jax.nn.relu(h) if i + 2 < len(dense) else h
        logp = jax.nn.log_softmax(h)
        return -jnp.take_along_axis(logp, y[:, None], axis=1).sum()

    compiled = jax.jit(jax.grad(loss))

    def gradient(theta, x, y):
        out = compiled(jnp.asarray(theta, jnp.float32), x, y)
        return np.asarray(out, dtype=np.float64)

    return gradient


def torch_gradient(pooling: str, compile_: bool):
    import numpy as np
    import torch
    import torch.nn.functional as F

    sizes = [int(np.prod(s)) for s in shapes()]

    def loss(params, x, y):
        w1, b1, w2, b2, *dense = params
        h = F.relu(F.conv2d(x.reshape(-1, 3, 32, 32), w1, b1, padding=1))
        h = F.max_pool2d(h, 8 if pooling == "pool8" else 2)
        h = F.relu(F.conv2d(h, w2, b2))
        h = torch.amax(h, dim=(2, 3))
        for i in range(0, len(dense), 2):
            h = F.linear(h, dense[i], dense[i + 1])
            h = F.relu(h) if i + 2 < len(dense) else h
        return F.cross_entropy(h, y, reduction="sum")

    step = torch.compile(loss) if compile_ else loss

    def gradient(theta, x, y):
        flat = torch.tensor(theta, dtype=torch.float32)
        params = [
            p.reshape(s).requires_grad_()
            for p, s in zip(torch.split(flat, sizes), shapes(), strict=True)
        ]
        grads = torch.autograd.grad(step(params, torch.from_numpy(x), torch.from_numpy(y)), params)
        return torch.cat([g.reshape(-1) for g in grads]).numpy().astype(np.float64)

    return gradient


def child(args: argparse.Namespace) -> None:
    """Import, one gradient per mode, then the timings; one JSON line on stdout."""
    start = time.perf_counter()
    if args.child == "torch":
        import torch

        torch.set_num_threads(args.threads)
        version = torch.__version__
    else:
        import jax

        version = jax.__version__
    report = {"version": version, "import_s": time.perf_counter() - start}
    report["rss_import_mib"], report["anon_import_mib"] = rss_mib(), anonymous_mib()
    x, y, theta = batch(args.batch)
    modes = ["jit"] if args.child == "jax" else ["eager", "compile"]
    for mode in modes:
        for pooling in POOLINGS:
            key = f"{mode}/{pooling}"
            try:
                if args.child == "jax":
                    gradient = jax_gradient(pooling)
                else:
                    gradient = torch_gradient(pooling, mode == "compile")
                started = time.perf_counter()
                first = gradient(theta, x, y)
                report[f"{key}/first_s"] = time.perf_counter() - started
                report[f"{key}/norm"] = float((first**2).sum() ** 0.5)
                for _ in range(2):  # warm-up
                    gradient(theta, x, y)
                times = []
                for _ in range(args.repeats):
                    started = time.perf_counter()
                    gradient(theta, x, y)
                    times.append(time.perf_counter() - started)
                report[f"{key}/median_s"] = statistics.median(times)
                report[f"{key}/spread_s"] = [min(times), max(times)]
            except Exception as error:
                report[f"{key}/error"] = f"{type(error).__name__}: {str(error)[:200]}"
            if "rss_gradient_mib" not in report:
                report["rss_gradient_mib"], report["anon_gradient_mib"] = rss_mib(), anonymous_mib()
    report["rss_end_mib"], report["anon_end_mib"] = rss_mib(), anonymous_mib()
    print(json.dumps(report))


def import_times(python: str, module: str, repeats: int) -> list[float]:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        subprocess.run([python, "-c", f"import {module}"], check=True)
        times.append(time.perf_counter() - started)
    return times


def run_child(python: str, module: str, cores: int, args: argparse.Namespace) -> dict:
    cpus = ",".join(str(c) for c in range(cores))
    command = ["taskset", "-c", cpus, python, __file__, "--child", module, "--threads", str(cores)]
    command += ["--batch", str(args.batch), "--repeats", str(args.repeats)]
    out = subprocess.run(command, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(backends: list[tuple[str, str, str]], args: argparse.Namespace) -> dict:
    """Every backend in turn, ``--rounds`` times, so that all see the same load on the
    machine; per backend the import times and the child reports of each round."""
    results: dict = {label: {"imports": [], 1: [], 2: []} for label, _, _ in backends}
    for _ in range(args.rounds):
        for label, module, python in backends:
            results[label]["imports"] += import_times(python, module, args.repeats)
            for cores in (1, 2):
                results[label][cores].append(run_child(python, module, cores, args))
    return results


def summary(runs: list[dict], key: str) -> tuple[float, float] | None:
    """Median over rounds of each round's median, and the least time seen (``None``: fails)."""
    if any(f"{key}/median_s" not in run for run in runs):
        return None
    medians = [run[f"{key}/median_s"] for run in runs]
    return statistics.median(medians), min(run[f"{key}/spread_s"][0] for run in runs)


def report(results: dict, args: argparse.Namespace) -> None:
    print(f"batch {args.batch} images, {args.rounds} rounds x median of {args.repeats}")
    print(
        "library    version        import first/median s  RSS MiB import/+grad/end"
        "  anonymous MiB import/+grad/end"
    )
    for label, r in results.items():
        one = r[1]
        mem = [
            statistics.median(run[k] for run in one)
            for k in (
                "rss_import_mib",
                "rss_gradient_mib",
                "rss_end_mib",
                "anon_import_mib",
                "anon_gradient_mib",
                "anon_end_mib",
            )
        ]
        print(
            f"{label:10s} {one[0]['version']:14s} {r['imports'][0]:5.2f} / "
            f"{statistics.median(r['imports']):5.2f}         "
            f"{mem[0]:4.0f} / {mem[1]:4.0f} / {mem[2]:4.0f}        "
            f"{mem[3]:4.0f} / {mem[4]:4.0f} / {mem[5]:4.0f}"
        )
    print("gradient ms, median (least)  cores  " + "  ".join(f"{p:>15s}" for p in POOLINGS))
    for label, r in results.items():
        for mode in ("jit",) if label == "jax" else ("eager", "compile"):
            for cores in (1, 2):
                cells = []
                for pooling in POOLINGS:
                    got = summary(r[cores], f"{mode}/{pooling}")
                    text = "fails" if got is None else f"{got[0] * 1e3:.1f} ({got[1] * 1e3:.1f})"
                    cells.append(f"{text:>15s}")
                print(f"{label + ' ' + mode:28s} {cores:5d}  " + "  ".join(cells))
    print("ratios JAX / torch, this run:")
    jax = results["jax"]
    for label in (name for name in results if name != "jax"):
        other = results[label]
        imports = statistics.median(jax["imports"]) / statistics.median(other["imports"])
        anon = statistics.median(run["anon_gradient_mib"] for run in jax[1]) / statistics.median(
            run["anon_gradient_mib"] for run in other[1]
        )
        print(f"  {label}: import {imports:.2f}, anonymous memory after a gradient {anon:.2f}")
        for mode in ("eager", "compile"):
            for cores in (1, 2):
                for pooling in POOLINGS:
                    ours = summary(jax[cores], f"jit/{pooling}")
                    theirs = summary(other[cores], f"{mode}/{pooling}")
                    if ours and theirs:
                        print(
                            f"  {label}: gradient {pooling:6s} {cores} core(s), jit vs {mode:7s}"
                            f" {ours[0] / theirs[0]:.2f}"
                        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jax", help="python of a venv with jax[cpu]")
    parser.add_argument("--torch", help="python of a venv with torch (from PyPI)")
    parser.add_argument("--torch-cpu", help="python of a venv with a CPU-only torch (optional)")
    parser.add_argument("--batch", type=int, default=320, help="images per partition")
    parser.add_argument("--repeats", type=int, default=7, help="timings per process")
    parser.add_argument("--rounds", type=int, default=3, help="processes per library and cores")
    parser.add_argument("--json", help="write every measurement here")
    parser.add_argument("--child", choices=("jax", "torch"), help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
        return
    if not (args.jax and args.torch):
        parser.error("--jax and --torch are needed (the pythons of the two venvs)")
    backends = [("jax", "jax", args.jax), ("torch", "torch", args.torch)]
    if args.torch_cpu:
        backends.append(("torch-cpu", "torch", args.torch_cpu))
    results = measure(backends, args)
    if args.json:
        with open(args.json, "w") as out:
            json.dump({k: {str(c): v for c, v in r.items()} for k, r in results.items()}, out)
    report(results, args)


if __name__ == "__main__":
    main()
