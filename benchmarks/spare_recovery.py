"""How long a spare takes to replace a dead worker, against the size of the worker's data.

One FRC run per data size (n workers, s = 1, one spare; the ``fixed`` straggler model), worker
``--victim`` killed with SIGKILL from outside at iteration ``--at`` (``gradcode train inject``).
Printed per size: the bytes of the dead worker's partitions the master ships to the spare, the
detection time (kill to the master's notice, one monotonic clock), the recovery (the master's
notice to the spare's READY: pickling, sending and unpickling the data), the time until the
spare's first result reached the master (``never`` when its group's other worker answered
first every iteration), the part of the recovery the master spent pickling the share (inside
the iteration that noticed the death, which it lengthens), and whether the run ended at the
serial model.

    python benchmarks/spare_recovery.py [--workers 8] [--rows 10000 100000 400000]
"""

from __future__ import annotations

import argparse
import json
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import yaml

from gradcode.data import prepare
from gradcode.launch.jobs import command, job_environment
from gradcode.runfile.config import load_config
from gradcode.runfile.dataset import load_training_data
from gradcode.runfile.plan import build_plan
from gradcode.runfile.reference import serial_trajectory
from gradcode.train.shares import worker_share


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=8)
    parser.add_argument("--rows", type=int, nargs="+", default=[10_000, 100_000, 400_000])
    parser.add_argument("--features", type=int, default=500)
    parser.add_argument("--iterations", type=int, default=12)
    parser.add_argument("--victim", type=int, default=2, help="the worker killed")
    parser.add_argument("--at", type=int, default=4, help="the iteration it is killed at")
    args = parser.parse_args()
    n, scratch = args.workers, Path(tempfile.mkdtemp(prefix="gradcode-spare-"))
    print(
        f"FRC n = {n}, s = 1, one spare; worker {args.victim} killed at iteration {args.at}; "
        f"p = {args.features}, {args.iterations} iterations"
    )
    print(
        f"{'rows':>8s} {'shipped':>10s} {'detect':>9s} {'recovery':>9s} {'first result':>13s} "
        f"{'assigning':>11s}"
    )
    for rows in args.rows:
        data = scratch / f"data-{rows}"
        prepare(
            "synthetic-logistic",
            data,
            variant="custom",
            rows=rows,
            features=args.features,
            test_rows=200,
        )
        run = {
            "iterations": args.iterations,
            "data": {"prepared": str(data)},
            "model": {"kind": "logistic"},
            "scheme": {"name": "frc", "params": {"n": n, "s": 1}},
            "optimizer": {"kind": "gd", "step": 1.0},
            "stragglers": {"model": "fixed", "params": {"compute": 0.02}},
            "log": {"metrics_every": 0, "trajectory": True},
            "faults": {"kill": [{"worker": args.victim, "iteration": args.at}], "spares": 1},
        }
        run_file, out = scratch / f"run-{rows}.yaml", scratch / f"out-{rows}"
        run_file.write_text(yaml.safe_dump(run))
        record = scratch / f"kills-{rows}.json"
        job = command(n + 2, run_file, "--out", str(out), tolerant=True)
        inject = [sys.executable, "-m", "gradcode", "train", "inject", str(run_file)]
        inject += ["--out", str(out), "--record", str(record), "--", *job]
        done = subprocess.run(
            inject, env=job_environment(), capture_output=True, text=True, timeout=1800
        )
        if done.returncode != 0:
            print(f"rows {rows}: job failed\n{done.stderr[-3000:]}", file=sys.stderr)
            return 1
        summary = json.loads((out / "summary.json").read_text())
        kill = json.loads(record.read_text())["kills"][0]
        failure = summary["failures"][0]
        [made] = summary["replacements"]
        config = load_config(run_file)
        shipped = len(pickle.dumps(_share(config, args.victim), pickle.HIGHEST_PROTOCOL))
        reference = serial_trajectory(config)
        trajectory = np.load(out / "trajectory.npy")
        error = np.abs(trajectory - reference).max() / np.abs(reference).max()
        # never: every iteration the partner in its group answered first and the spare dropped
        # its stale work (a straggler's fate), so only the tolerance it restores shows
        first = (
            f"{(made['first_result'] - made['detected']) * 1e3:11.1f}ms"
            if made["first_result"] is not None
            else f"{'never':>13s}"
        )
        pickling = made["assigned"] - made["detected"]
        detect = failure["monotonic"] - kill["monotonic"]
        print(
            f"{rows:8d} {shipped / 2**20:8.1f}MB {detect * 1e3:7.1f}ms "
            f"{made['recovery'] * 1e3:7.1f}ms {first} {pickling * 1e3:9.1f}ms  "
            f"(exact to {error:.1e})"
        )
    return 0


def _share(config, worker: int) -> dict:
    """The dead worker's partitions as the master ships them (``gradcode.train.run``)."""
    plan = build_plan(config)
    data = load_training_data(config.data, plan.partitions, config.model.kind)
    return worker_share(plan, data, worker)


if __name__ == "__main__":
    sys.exit(main())
