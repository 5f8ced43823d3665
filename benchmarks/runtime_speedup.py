"""Measured speedups of communication-efficient codes on real MPI jobs, next to the simulator.

Paper 000's timing model (Section 5, Table 3): ``n = k = 8``, ``T1 = 1.6 + Exp(0.8)`` per data
subset, ``T2 = 6 + Exp(0.1)`` per full-length vector, in units of ``--unit`` seconds. The
schemes are the ones Table 3 singles out: uncoded (``d = m = 1``, 36.11), the best ``m = 1``
code (``d = 8``, 24.11) and the best ``m > 1`` code (``d = 4, m = 3``, 21.37). Each runs as a
real job (``mpiexec -n 9``) whose workers sleep the injected delays: ``T1`` after every
partition, and the communication as bandwidth emulation on each worker's own link, a message
of ``L`` of the ``l`` floats leaving ``T2 L / l`` after it is ready (paper 000's assumption 2;
this is what makes ``m > 1`` pay). Every scheme sees the same draws (keyed by seed and
iteration). A second part replaces ``T2`` by a single-port master: the master takes one
message at a time, ``tc`` per full-length vector (``--tc`` units), paper 001's communication
model with paper 000's computation.

Printed per part: mean measured iteration time of each scheme; the simulator's prediction for
the same draws (``gradcode.runlogs.timings.predicted_iteration_time``); the simulator's expected
time over 20,000 fresh draws (``gradcode.timing``'s model when that package is present, else
the same predictor), in the same units; and the speedups of the best ``m > 1`` code over
uncoded and over the best ``m = 1`` code, measured / predicted. Target: within 10 %.

    python benchmarks/runtime_speedup.py [--iterations 60] [--unit 0.01] [--tc 4]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import yaml

from gradcode.codes import build
from gradcode.data import prepare
from gradcode.launch.jobs import run_job
from gradcode.runfile.config import BandwidthConfig
from gradcode.runfile.stragglers import build_source
from gradcode.runlogs.log import read_log
from gradcode.runlogs.timings import predicted_iteration_time

N = 8
PAPER = {"lambda1": 0.8, "t1": 1.6, "lambda2": 0.1, "t2": 6}
SCHEMES = {
    "uncoded": ("uncoded", {"n": N}),
    "best m=1 (d=8)": ("ye-abbe", {"n": N, "d": 8, "s": 7, "m": 1}),
    "best m>1 (d=4, m=3)": ("ye-abbe", {"n": N, "d": 4, "s": 1, "m": 3}),
}
TRIALS = 20_000


def expected_times(params: dict, bandwidth_units: float | None, features: int) -> dict[str, float]:
    """Expected iteration time of every scheme (model units) over ``TRIALS`` fresh draws."""
    try:
        from gradcode.timing import MasterWorkerModel, SinglePortModel
    except ImportError:
        MasterWorkerModel = SinglePortModel = None  # fall back to our predictor
    out = {}
    for label, (name, scheme_params) in SCHEMES.items():
        code = build(name, **scheme_params)
        if MasterWorkerModel is not None:
            if bandwidth_units is None:
                model = MasterWorkerModel(**params)
            else:  # paper 001's single port, paper 000's computation: d_i X_i with X = T1
                model = SinglePortModel(
                    a=params["t1"], mu=params["lambda1"], tc=bandwidth_units, data=N
                )
            draws = model.sample(np.random.default_rng(12345), TRIALS, N)
            out[label] = float(model.prepare(code).run(draws).times.mean())
        else:
            source = build_source(
                "master-worker", params, workers=N, partitions=code.k, seed=12345, time_unit=1.0
            )
            bandwidth = _port(bandwidth_units, 1.0, features)
            out[label] = float(
                np.mean(
                    [
                        predicted_iteration_time(code, source.delays(t), features, bandwidth)
                        for t in range(TRIALS)
                    ]
                )
            )
    return out


def _port(tc_units: float | None, unit: float, features: int) -> BandwidthConfig | None:
    """The single port on which a full-length vector takes ``tc``."""
    if tc_units is None:
        return None
    return BandwidthConfig(vector_seconds=tc_units * unit)


def run_part(
    title: str,
    params: dict,
    tc_units: float | None,
    args: argparse.Namespace,
    data: Path,
    scratch: Path,
) -> list[float]:
    unit, features = args.unit, args.features
    bandwidth = _port(tc_units, unit, features)
    print(f"\n{title}")
    print(f"{'scheme':22s} {'measured':>9s} {'same draws':>11s} {'expected':>9s}  (units)")
    measured, predicted = {}, {}
    expected = expected_times(params, tc_units, features)
    for label, (name, scheme_params) in SCHEMES.items():
        run = {
            "iterations": args.iterations,
            "seed": args.seed,
            "data": {"prepared": str(data)},
            "model": {"kind": "logistic"},
            "scheme": {"name": name, "params": scheme_params},
            "optimizer": {"kind": "gd", "step": 1.0},
            "stragglers": {"model": "master-worker", "params": params, "time_unit": unit},
            "log": {"metrics_every": 0},
        }
        if bandwidth is not None:
            run["bandwidth"] = {"vector_seconds": bandwidth.vector_seconds}
        slug = f"{'port' if tc_units else 'links'}-{name}-{scheme_params.get('d', 1)}"
        run_file = scratch / f"{slug}.yaml"
        run_file.write_text(yaml.safe_dump(run))
        out = scratch / slug
        result = run_job(N + 1, run_file, ["--out", str(out)], timeout=1800)
        if result.returncode != 0:
            raise SystemExit(f"{label}: job failed\n{result.stderr}")
        records = read_log(out)[args.warmup :]
        code = build(name, **scheme_params)
        source = build_source(
            "master-worker", params, workers=N, partitions=code.k, seed=args.seed, time_unit=unit
        )
        measured[label] = np.mean([r["iteration_time"] for r in records]) / unit
        predicted[label] = (
            np.mean(
                [
                    predicted_iteration_time(
                        code, source.delays(r["iteration"]), features, bandwidth
                    )
                    for r in records
                ]
            )
            / unit
        )
        print(f"{label:22s} {measured[label]:9.2f} {predicted[label]:11.2f} {expected[label]:9.2f}")
    uncoded, m1, best = SCHEMES
    deviations = []
    for reference in (uncoded, m1):
        got = measured[reference] / measured[best]
        same = predicted[reference] / predicted[best]
        model = expected[reference] / expected[best]
        deviation = got / same - 1
        deviations.append(deviation)
        print(
            f"speedup of {best} over {reference}: measured {got:.3f}, predicted for the same "
            f"draws {same:.3f} ({deviation * 100:+.1f} %), expected {model:.3f} "
            f"({(got / model - 1) * 100:+.1f} %)"
        )
    return deviations


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=60)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--unit", type=float, default=0.01, help="seconds per model time unit")
    parser.add_argument("--tc", type=float, default=4.0, help="units per vector, single port")
    parser.add_argument("--features", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="gradcode-speedup-"))
    data = scratch / "data"
    prepare(
        "synthetic-logistic", data, variant="custom", rows=800, features=args.features, test_rows=0
    )
    print(
        f"n = k = {N}, {args.iterations} iterations ({args.warmup} left out), time unit "
        f"{args.unit} s, gradient length {args.features}"
    )
    deviations = run_part(
        "paper-000 model (T1, T2 on per-worker links)", PAPER, None, args, data, scratch
    )
    compute_only = {"lambda1": PAPER["lambda1"], "t1": PAPER["t1"]}
    deviations += run_part(
        f"paper-000 computation, single-port master (tc = {args.tc} units)",
        compute_only,
        args.tc,
        args,
        data,
        scratch,
    )
    worst = max(abs(d) for d in deviations)
    print(
        f"\nworst deviation of a measured speedup from its prediction: {worst * 100:.1f} % "
        "(target <= 10 %)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
