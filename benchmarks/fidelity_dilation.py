"""Which runs the links decide and which the machine, and what time dilation changes (issue
48): an experiment's runs (``config/experiments/cluster/*.yaml``) trained on the emulated
cluster brought up at each dilation factor K in turn, each run's mean time per iteration (after
the first) set beside the ``shared-links`` model's and beside the same run's at the other
factors, with its fidelity record's measures and verdict, and what TCP did on the links
(retransmissions, time-outs: the record's ``tcp``) (``gradcode.fidelity``).

    python benchmarks/fidelity_dilation.py config/experiments/cluster/coded-reduce-n84.yaml \\
        --dilation 1 8 32 --runs UMW CR RAR RAR-mpi --iterations 5 --out fidelity-n84

``--data load`` has every worker read the prepared data itself, so that the data does not
cross the dilated links before the first iteration (``runtime.data``); ``--latency 2ms``
sets every link's one-way latency, on the cluster and in the runs' stated links; ``--queue
400ms`` every link's queue bound (``gradcode cluster up --queue``). ``--busy N``
runs N busy loops beside every run, to make the machine decide on purpose.
Needs root and no cluster up: it brings each one up itself (``--nodes`` the largest run's
ranks, ``--rate`` the experiment's stated rate, no SLURM) and takes it down again. A run whose
times do not move between K and a larger K was decided by its links at K; the verdict of its
record should say so. Prints one line per run and writes ``OUT/fidelity.json``.
"""

from __future__ import annotations

import argparse
import copy
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import yaml

from gradcode.runfile.experiment import load_experiment
from gradcode.runlogs.log import read_log

BIN = Path(sys.executable).parent


def cluster(*args: str) -> None:
    subprocess.run([str(BIN / "gradcode"), "cluster", *args], check=True, capture_output=True)


def train(run: dict, ranks: int, out: Path) -> dict:
    """``run`` on the cluster that is up: its measures (mean time after the first iteration,
    the fidelity record, the wall time it took)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    path = out.with_suffix(".yaml")
    path.write_text(yaml.safe_dump(run, sort_keys=False))
    mpiexec = [str(BIN / "gradcode"), "cluster", "mpiexec", "-n", str(ranks), "--"]
    command = [str(BIN / "python"), "-m", "gradcode.train", str(path), "--out", str(out)]
    began = time.monotonic()
    done = subprocess.run([*mpiexec, *command, "--fresh"], capture_output=True, text=True)
    wall = time.monotonic() - began
    if done.returncode != 0:
        return {"failed": done.stderr.strip().splitlines()[-1:], "wall": wall}
    summary = json.loads((out / "summary.json").read_text())
    times = [record["iteration_time"] for record in read_log(out)[1:]]
    record = summary["fidelity"]
    return {
        "mean": float(np.mean(times)),
        "model": record["model"].get("predicted"),
        "ratio": record["model"].get("ratio"),
        "verdict": record["verdict"]["decided_by"],
        "reasons": record["verdict"]["reasons"],
        "critical": (record.get("critical") or {}).get("share"),
        "machine": record["machine"],
        "undilated": (record.get("undilated") or {}).get("share"),
        "tcp": tcp_measures(record.get("tcp")),
        "wall": wall,
    }


def tcp_measures(section: dict | None) -> dict | None:
    """The record's ``tcp`` for one line: the sums over the namespaces, and rank 0's own
    namespace's counters apart (``rank0``: with a master, where its workers' flows converge
    on one rate-limited link, the incast the sums alone would not place)."""
    if section is None:
        return None
    rows = section["counted"]
    first = next((row["counters"] for row in rows if row["rank"] == 0), None)
    return {k: v for k, v in section.items() if k != "counted"} | {"rank0": first}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("experiment")
    parser.add_argument("--dilation", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--runs", nargs="+", help="the experiment's runs to take (default all)")
    parser.add_argument("--iterations", type=int, help="instead of the experiment's")
    parser.add_argument("--distribution", help="runtime.distribution instead of the experiment's")
    parser.add_argument(
        "--data",
        choices=("send", "load"),
        help="runtime.data: load keeps the data off the (dilated) links before the first iteration",
    )
    parser.add_argument(
        "--latency", help="one-way latency of every link (cluster and run), e.g. 2ms"
    )
    parser.add_argument(
        "--poll",
        type=float,
        help="runtime.poll_interval (virtual seconds): what a hand-off waits for the next poll",
    )
    parser.add_argument(
        "--queue", help="every link's queue bound on the cluster (gradcode cluster up --queue)"
    )
    parser.add_argument(
        "--busy", type=int, default=0, help="busy loops beside every run (a CPU-bound machine)"
    )
    parser.add_argument("--out", type=Path, default=Path("fidelity"))
    args = parser.parse_args()
    experiment = load_experiment(args.experiment)
    names = args.runs or list(experiment.runs)
    ranks = {name: experiment.world_sizes[name] for name in names}
    links = experiment.runs[names[0]]["network"]["links"]
    found: dict[str, dict[int, dict]] = {name: {} for name in names}
    for k in args.dilation:
        cluster("down")
        up = ["up", "--nodes", str(max(ranks.values())), "--rate", str(links["rate"])]
        up += ["--master-rate", str(links.get("master_rate", links["rate"]))]
        if args.latency:
            up += ["--latency", args.latency]
        if args.queue:
            up += ["--queue", args.queue]
        cluster(*up, "--dilation", str(k), "--no-slurm")
        try:
            for name in names:
                run = copy.deepcopy(experiment.runs[name])
                run["name"] = f"{experiment.name}-{name}-k{k}"
                run.setdefault("runtime", {})["dilation"] = k
                if args.iterations:
                    run["iterations"] = args.iterations
                if args.distribution:
                    run["runtime"]["distribution"] = args.distribution
                if args.data:
                    run["runtime"]["data"] = args.data
                if args.latency:
                    run["network"]["links"]["latency"] = args.latency
                if args.poll:
                    run["runtime"]["poll_interval"] = args.poll
                loops = [
                    subprocess.Popen([sys.executable, "-c", "while True: pass"])
                    for _ in range(args.busy)
                ]
                try:
                    measured = train(run, ranks[name], args.out / f"{name}-k{k}")
                finally:
                    for loop in loops:
                        loop.kill()
                        loop.wait()
                found[name][k] = measured
                print(json.dumps({"run": name, "dilation": k} | measured), flush=True)
        finally:
            cluster("down")
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "fidelity.json").write_text(json.dumps(found, indent=1))
    print(f"{'run':10s} {'K':>3s} {'s/iter':>8s} {'model':>8s} {'ratio':>6s} {'crit':>6s}"
          f" {'cpu':>5s} {'wall':>6s}  verdict")  # fmt: skip
    for name in names:
        for k, m in found[name].items():
            if "failed" in m:
                print(f"{name:10s} {k:3d} failed: {m['failed']}")
                continue
            print(
                f"{name:10s} {k:3d} {m['mean']:8.4f} {m['model'] or float('nan'):8.4f} "
                f"{m['ratio'] or float('nan'):6.3f} {m['critical'] or float('nan'):6.3f} "
                f"{m['machine'].get('cpu') or float('nan'):5.2f} {m['wall']:6.0f}  {m['verdict']}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
