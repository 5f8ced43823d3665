"""How often do `gradcode timing fit`'s intervals cover the injected model, on real MPI runs?

For each seed, one uncoded job (``mpiexec -n n+1``) runs with paper 000's delays injected
(``master-worker``, Table 3's parameters by default, ``--unit`` seconds per model unit) on a
small data set; the fit sees only the log. Counted per seed: whether the 95 % intervals of
``lambda1`` and ``lambda2`` cover the injected rates (``lambda / unit``), and the fitted shifts
against the injected ones (they also carry what the runtime really spends: the measured compute,
the transfers and polls, so they sit a little above). Then, from each seed's fit, the
prediction of a coded run (``--coded``, one job per seed, same seed) against its measurement.
All numbers come from this one run.

    python benchmarks/fit_coverage.py [--seeds 10] [--workers 8] [--iterations 60]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np
import yaml

from gradcode.data import prepare
from gradcode.fit.predict import predict_runs
from gradcode.fit.runs import fit_runs
from gradcode.launch.jobs import run_job

TABLE3 = {"lambda1": 0.8, "t1": 1.6, "lambda2": 0.1, "t2": 6.0}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--iterations", type=int, default=60)
    parser.add_argument("--unit", type=float, default=0.01, help="seconds per model unit")
    parser.add_argument(
        "--coded", default="frc:s=3", help="scheme:param=value,... predicted from each fit"
    )
    args = parser.parse_args()
    n = args.workers
    scheme, _, rest = args.coded.partition(":")
    coded = {"n": n, **{k: int(v) for k, v in (p.split("=") for p in rest.split(",") if p)}}
    scratch = Path(tempfile.mkdtemp(prefix="gradcode-fit-coverage-"))
    data = scratch / "data"
    prepare("synthetic-logistic", data, variant="custom", rows=2400, features=200, test_rows=200)
    print(
        f"n = {n}, {args.iterations} iterations per run, model {TABLE3}, unit {args.unit} s; "
        f"intervals at 95 %; prediction of {scheme} {coded}"
    )
    print(
        f"{'seed':>4s} {'lambda1 [CI]':>24s} {'lambda2 [CI]':>24s} {'t1 - inj':>9s} "
        f"{'t2 - inj':>9s} {'coded meas/pred':>16s}"
    )
    covered = {"lambda1": 0, "lambda2": 0}
    ratios = []
    for seed in range(args.seeds):
        outs = []
        for name, params in (("uncoded", {"n": n}), (scheme, coded)):
            run = {
                "seed": seed,
                "iterations": args.iterations,
                "data": {"prepared": str(data)},
                "model": {"kind": "logistic"},
                "scheme": {"name": name, "params": params},
                "optimizer": {"kind": "gd", "step": 1.0},
                "stragglers": {"model": "master-worker", "params": TABLE3, "time_unit": args.unit},
                "log": {"metrics_every": 0},
                "checkpoint": {"every": 0},
            }
            run_file = scratch / f"{name}-{seed}.yaml"
            run_file.write_text(yaml.safe_dump(run))
            out = scratch / f"out-{name}-{seed}"
            result = run_job(n + 1, run_file, ["--out", str(out)], timeout=900)
            if result.returncode != 0:
                print(f"seed {seed} {name}: job failed\n{result.stderr}", file=sys.stderr)
                return 1
            outs.append(out)
        fitted = fit_runs([outs[0]], bootstrap=100)
        cells = []
        for key, component in (("lambda1", fitted.pooled.compute), ("lambda2", fitted.pooled.comm)):
            truth = TABLE3[key] / args.unit
            low, high = component.rate_interval
            hit = low <= truth <= high
            covered[key] += hit
            cells.append(f"{component.rate:7.2f} [{low:6.2f},{high:6.2f}]{'' if hit else ' x'}")
        shift1 = fitted.pooled.compute.shift - TABLE3["t1"] * args.unit
        shift2 = fitted.pooled.comm.shift - TABLE3["t2"] * args.unit
        prediction = predict_runs(fitted.spec(), [outs[1]], trials=20_000)[0]
        ratios.append(prediction.ratio)
        print(
            f"{seed:4d} {cells[0]:>24s} {cells[1]:>24s} {shift1 * 1e3:7.2f}ms "
            f"{shift2 * 1e3:7.2f}ms {prediction.ratio:16.3f}"
        )
    print(
        f"covered: lambda1 {covered['lambda1']}/{args.seeds}, lambda2 {covered['lambda2']}/"
        f"{args.seeds} (95 % intervals); {scheme} measured / predicted: mean "
        f"{np.mean(ratios):.3f}, range {min(ratios):.3f}-{max(ratios):.3f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
