"""Training runs on the emulated cluster with each way of distributing the model and of
collecting the results (issue 20).

For every scheme of ``--schemes`` (default: issue 20's codes at ``--n`` workers, CodedReduce
where a tree has ``--n`` nodes, run the runtime's way), every way of ``--ways``
(``runtime.distribution``) and of ``--collections`` (``runtime.collection``), trains
``--iterations`` iterations of paper 000's setting (l = 125,000, T1 = 1.6 + Exp(0.8) units of
5 ms injected, the links' own communication), one rank per node, and prints the median time per
iteration, its link-limited floor (``gradcode.runlogs.timings.link_floor``) and their ratio, the
``shared-links`` model of the run's own way (``predicted_links_time``) and the ratio to it, and
how many chunks the master covered per iteration. Needs the cluster up with the rates of
``--rate`` and ``--master-rate``::

    gradcode cluster up --nodes 9 --rate 100mbit --master-rate 200mbit
    python benchmarks/distribution_runs.py --n 8 --out /tmp/distribution
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import yaml

from gradcode.runfile.config import load_config
from gradcode.runfile.plan import build_plan
from gradcode.runlogs.log import read_log
from gradcode.runlogs.timings import link_floor, predicted_links_time


def schemes(n: int) -> dict[str, dict]:
    return {
        "uncoded": {"name": "uncoded", "params": {"n": n}},
        "frc": {"name": "frc", "params": {"n": n, "s": 1}},
        "crc": {"name": "crc", "params": {"n": n, "s": 1}},
        f"d{n}-s{n - 1}-m1": {"name": "ye-abbe", "params": {"n": n, "d": n, "s": n - 1, "m": 1}},
        "d4-s1-m3": {"name": "ye-abbe", "params": {"n": n, "d": 4, "s": 1, "m": 3}},
        "binary": {"name": "binary", "params": {"n": n, "s": 1}},
    } | ({"cr": {"name": "coded-reduce", "params": TREES[n]}} if n in TREES else {})


#: CodedReduce trees of 8, 14 and 20 nodes: (8, 1, 1), (2, 3, 1), (4, 2, 1); a tree's results
#: go up its own tree (pulled: by every parent), its model each way of ``--ways``
TREES = {8: {"n": 8, "L": 1, "s": 1}, 14: {"n": 2, "L": 3, "s": 1}, 20: {"n": 4, "L": 2, "s": 1}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=8)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--ways", nargs="+", default=["isend", "scatter"])
    parser.add_argument("--collections", nargs="+", default=["push"])
    parser.add_argument("--schemes", nargs="+", default=None)
    parser.add_argument("--iterations", type=int, default=15)
    parser.add_argument("--skip", type=int, default=2)
    parser.add_argument("--rate", default="100mbit")
    parser.add_argument("--master-rate", default="200mbit")
    args = parser.parse_args()
    data = args.out / "data"
    if not (data / "data.npz").exists():
        shutil.rmtree(data, ignore_errors=True)
        subprocess.run(
            [sys.executable, "-m", "gradcode", "data", "prepare", "synthetic-logistic",
             "--variant", "links-p125000-r20", "--out", str(data)],
            check=True,
        )  # fmt: skip
    chosen = schemes(args.n)
    names = args.schemes or list(chosen)
    print(
        f"{'run':16s} {'way':8s} {'results':7s} {'measured s':>10s} {'floor s':>8s} "
        f"{'ratio':>6s} {'model s':>7s} {'/model':>6s} {'covered':>7s}"
    )
    runs = [
        (name, way, collection)
        for name in names
        for way in args.ways
        for collection in (["auto"] if way == "auto" else args.collections)
    ]
    for name, way, collection in runs:
        folder = args.out / f"{name}-{way}-{collection}"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        run = {
            "name": f"{name}-{way}-{collection}",
            "iterations": args.iterations,
            "data": {"prepared": str(data)},
            "model": {"kind": "logistic"},
            "optimizer": {"kind": "gd", "step": 1.0},
            "scheme": chosen[name],
            "stragglers": {
                "model": "master-worker",
                "params": {"lambda1": 0.8, "t1": 1.6},
                "time_unit": 0.005,
            },
            "network": {"links": {"rate": args.rate, "master_rate": args.master_rate}},
            "log": {"metrics_every": 0},
            "checkpoint": {"every": 0},
            "runtime": {"distribution": way, "collection": collection},
        }
        run_file = folder / "run.yaml"
        run_file.write_text(yaml.safe_dump(run))
        ranks = build_plan(load_config(run_file)).workers + 1
        command = ["gradcode", "cluster", "mpiexec", "-n", str(ranks), "--"]
        command += [sys.executable, "-m", "gradcode", "train", "run", str(run_file)]
        command += ["--out", str(folder)]
        subprocess.run(command, check=True, capture_output=True, text=True, timeout=900)
        config = load_config(run_file)
        plan = build_plan(config)
        links = config.network.links
        assert links is not None
        summary = json.loads((folder / "summary.json").read_text())
        features = summary["data"]["features"]
        records = read_log(folder)[args.skip :]
        measured = np.median([r["iteration_time"] for r in records])
        floor = np.median([link_floor(plan.code, r, links, features).total for r in records])
        ways = {"distribution": summary["distribution"]["way"]}
        ways["collection"] = summary["collection"]["way"]
        model = np.median(
            [predicted_links_time(plan.code, r, links, features, **ways) for r in records]
        )
        covered = np.mean([len(r.get("covered", [])) for r in records])
        print(
            f"{name:16s} {ways['distribution']:8s} {ways['collection']:7s} {measured:10.3f} "
            f"{floor:8.3f} {measured / floor:6.2f} {model:7.3f} {measured / model:6.2f} "
            f"{covered:7.1f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
