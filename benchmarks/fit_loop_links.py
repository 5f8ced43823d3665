"""The loop closed on links with latency (issue 43, part 3), on the emulated cluster: fit runs
of two message sizes at a latency, ``gradcode codes recommend --spec`` the fitted spec with a
ring among the candidates, run the recommended code and the ring on the same links, and set
every run's measured mean iteration time beside the spec's prediction
(``gradcode.fit.predict``).

    gradcode cluster up --nodes 9 --rate 40mbit --master-rate 320mbit --no-slurm
    python benchmarks/fit_loop_links.py --latency 2.5ms --out loop
    gradcode cluster down

The calibration runs are ``benchmarks/fit_latency_links.py``'s (``uncoded`` n = 8 and
``ye-abbe`` (8, 4, 1, 3), model copies and pushed results, only the computation injected);
the fit is the user's: a misfit stops the loop unless ``--accept-misfit`` (recorded in the
output; on cores other jobs share, the computation's KS test may reject). Prints one JSON line
per run (``ratio``: measured over predicted) and writes ``OUT/loop.json``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import yaml

from gradcode.cluster.control import current_spec
from gradcode.fit.predict import predict_runs

sys.path.insert(0, str(Path(__file__).parent))
from fit_latency_links import BIN, CODES, run_file, with_latency

#: the candidates recommend ranks: flat codes of both kinds and the ring (a full grid takes
#: minutes on 2 cores and ranks the same leaders)
CANDIDATES = "uncoded,frc,ye-abbe,gc-mmc,ring-allreduce"
RING = "ring-allreduce"


def train(name: str, scheme: dict, args: argparse.Namespace, seed: int) -> Path:
    """One run of ``scheme`` on the cluster's links at ``args.latency``: its directory."""
    spec = run_file(name, scheme, args.rate, args.master_rate, args.latency, args.iterations)
    spec["seed"] = seed
    path = args.out / f"{name}.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    ranks = len(current_spec().nodes)
    mpiexec = [str(BIN / "gradcode"), "cluster", "mpiexec", "-n", str(ranks), "--"]
    run = args.out / name
    command = [str(BIN / "python"), "-m", "gradcode.train", str(path), "--out", str(run)]
    with_latency(args.latency, [*mpiexec, *command], timeout=900)
    return run


def loop(args: argparse.Namespace) -> dict:
    args.out.mkdir(parents=True, exist_ok=True)
    calibration = [train(name, scheme, args, 0) for name, scheme in CODES.items()]
    fitted = args.out / "fitted.yaml"
    fit = [str(BIN / "gradcode"), "timing", "fit", *map(str, calibration)]
    fit += ["--model", "shared-links", "--out", str(fitted)]
    if args.accept_misfit:  # the computation's KS test on cores other jobs share
        fit.append("--accept-misfit")
    done = subprocess.run(fit, capture_output=True, text=True, timeout=900)
    (args.out / "fit.txt").write_text(done.stdout + done.stderr)
    if done.returncode != 0:
        raise SystemExit(f"the fit wrote no spec: {done.stderr.strip().splitlines()[-1]}")
    workers = len(current_spec().nodes) - 1
    recommend = [str(BIN / "gradcode"), "codes", "recommend", "--spec", str(fitted)]
    recommend += ["--n", str(workers), "--exact-only", "--model-kind", "logistic", "--json"]
    recommend += ["--quiet", "--schemes", args.candidates, "--trials", str(args.trials)]
    ranked = json.loads(
        subprocess.run(recommend, capture_output=True, text=True, check=True, timeout=1800).stdout
    )["ranked"]
    best = ranked[0]
    ring = next(row for row in ranked if row["scheme"] == RING)
    chosen = {"recommended": best, "ring": ring}
    runs = [
        train(role, {"name": row["scheme"], "params": row["params"]}, args, 1)
        for role, row in chosen.items()
    ]
    predictions = predict_runs(fitted, runs, trials=args.trials)
    fit_record = yaml.safe_load(fitted.read_text())["fit"]
    return {
        "accept_misfit": args.accept_misfit,
        "misfit": fit_record.get("misfit"),
        "latency_set": args.latency,
        "latency_fitted": fit_record["link_rates"]["latency"],
        "rank_of_ring": ring["rank"],
        "runs": [
            {"role": role, **prediction.record()}
            for role, prediction in zip(chosen, predictions, strict=True)
        ],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", default="2.5ms", help="one way, on every link")
    parser.add_argument("--rate", default="40mbit", help="the workers' links, as brought up")
    parser.add_argument("--master-rate", default="320mbit", help="the master's, as brought up")
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--trials", type=int, default=20_000)
    parser.add_argument("--candidates", default=CANDIDATES, help="recommend's --schemes")
    parser.add_argument("--accept-misfit", action="store_true", help="passed to the fit")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    result = loop(args)
    for run in result["runs"]:
        print(json.dumps(run), flush=True)
    (args.out / "loop.json").write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
