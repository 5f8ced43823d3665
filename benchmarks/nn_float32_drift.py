"""How far a coded MPI run of a float32 network drifts from the serial run (issue 42, point 5).

Real MPI jobs train a 64-16-10 perceptron on scikit-learn's digits (480 training rows) with
gradient descent, one worker 0.1 s late every iteration, in float64 and in float32, under exact
codes; each job's iterates are compared with ``gradcode.runfile.reference.serial_trajectory``
(the same partitions summed in order, no code). Printed per job: the largest relative
difference of an iterate (max |job - serial| / max |serial|), the first iteration at which it
is not zero, and the relative difference at the end.

Then, in this process, what one float32 rounding that differs does: the serial float32 run
against the same run in which, at iteration 5 only, the network sees one parameter's float32
image one unit in the last place up (the float64 iterate unchanged), for a few parameters
(first- and second-layer weights, a bias): the relative difference of the iterates right after
and at the end.

    .venv/bin/python benchmarks/nn_float32_drift.py [--iterations 40] [--flip-only]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import yaml

from gradcode.launch.jobs import run_job
from gradcode.runfile.config import load_config
from gradcode.runfile.reference import serial_trajectory

FLIP_AT = 5
SCHEMES = (
    {"name": "frc", "params": {"n": 4, "s": 1}},
    {"name": "crc", "params": {"n": 5, "s": 2}},
)


def digits(out: Path, train: int = 480, test: int = 200) -> Path:
    """scikit-learn's digits / 16 as a prepared multiclass set (as the tests' ``digits_data``)."""
    from sklearn.datasets import load_digits

    from gradcode.data import provenance
    from gradcode.data.prepared import write_prepared

    x, y = load_digits(return_X_y=True)
    split = {"train": slice(0, train), "test": slice(train, train + test)}
    arrays = {f"X_{k}": x[rows] / 16.0 for k, rows in split.items()}
    arrays |= {f"y_{k}": y[rows].astype(np.float64) for k, rows in split.items()}
    arrays |= {f"{k}_rows": np.arange(train + test)[rows] for k, rows in split.items()}
    shapes = {f"X_{k}": list(arrays[f"X_{k}"].shape) for k in split}
    meta = {"format": provenance.FORMAT, "dataset": "digits", "variant": "benchmark"}
    meta |= {"stand_in": False, "task": "multiclass", "storage": "dense", "shapes": shapes}
    write_prepared(out, arrays, meta)
    return out


def descent(model, x, y, iterations: int, flip: int | None = None) -> np.ndarray:
    """Serial gradient descent (step 0.5); at iteration 5 the network sees parameter ``flip``'s
    float32 image one unit in the last place up."""
    theta, out = model.initial_parameters(x.shape[1], 0), []
    for t in range(iterations):
        seen = theta
        if t == FLIP_AT and flip is not None:
            seen = theta.copy()
            seen[flip] = float(np.nextafter(np.float32(seen[flip]), np.float32(np.inf)))
        theta = theta - 0.5 * model.partial_gradient(x, y, seen) / len(y)
        out.append(theta)
    return np.array(out)


def flip_experiment(data: Path, iterations: int) -> None:
    from gradcode.data.prepared import load_prepared
    from gradcode.models.registry import build

    prepared = load_prepared(data)
    x, y = prepared.X_train, prepared.y_train
    model = build("mlp", {"hidden": [16], "dtype": "float32"})
    serial = descent(model, x, y, iterations)
    print(f"\none float32 rounding up at iteration {FLIP_AT}, {iterations} iterations, float32:")
    for flip in (0, 500, 1000, 1030, 1100, 1200):
        errors = relative(descent(model, x, y, iterations, flip), serial)
        print(f"  parameter {flip:5d}: {errors[FLIP_AT]:.1e} at once, {errors[-1]:.1e} at the end")


def relative(got: np.ndarray, reference: np.ndarray) -> np.ndarray:
    return np.abs(got - reference).max(axis=1) / np.abs(reference).max(axis=1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=40)
    parser.add_argument("--flip-only", action="store_true")
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="gradcode-float32-"))
    data = digits(scratch / "digits")
    if not args.flip_only and jobs(scratch, data, args.iterations):
        return 1
    flip_experiment(data, max(args.iterations, FLIP_AT + 2))
    return 0


def jobs(scratch: Path, data: Path, iterations: int) -> int:
    print(f"{'scheme':6s} {'dtype':8s} {'max rel diff':>13s} {'first nonzero':>14s} {'last':>10s}")
    for scheme in SCHEMES:
        for dtype in ("float64", "float32"):
            run = {
                "iterations": iterations,
                "data": {"prepared": str(data)},
                "model": {"kind": "mlp", "params": {"hidden": [16], "dtype": dtype}},
                "scheme": scheme,
                "optimizer": {"kind": "gd", "step": 0.5},
                "stragglers": {"model": "random-set", "params": {"count": 1, "delay": 0.1}},
                "log": {"trajectory": True, "metrics_every": 0},
            }
            name = f"{scheme['name']}-{dtype}"
            run_file = scratch / f"{name}.yaml"
            run_file.write_text(yaml.safe_dump(run))
            result = run_job(scheme["params"]["n"] + 1, run_file, ["--out", str(scratch / name)])
            if result.returncode != 0:
                print(f"{name}: job failed\n{result.stderr[-3000:]}", file=sys.stderr)
                return 1
            got = np.load(scratch / name / "trajectory.npy")
            reference = serial_trajectory(load_config(run_file))
            errors = relative(got, reference)
            nonzero = np.flatnonzero(errors)
            first = str(nonzero[0]) if nonzero.size else "-"
            print(
                f"{scheme['name']:6s} {dtype:8s} {errors.max():13.2e} {first:>14s} "
                f"{errors[-1]:10.2e}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
