"""What a logged transfer measures on links with latency, and whether the fit recovers the
latency that was set (issue 43, parts 1 and 2), on the emulated cluster.

For every ``--latencies`` value (set on every link for the length of one command by
``gradcode cluster latency``):

- the message-time probe (``gradcode.train.linkprobe``: one message at a time, the receive
  posted first) at ``--sizes`` from each worker to the master, beside ``latency + bytes /
  rate``;
- two training runs whose results differ in size (``uncoded`` n = 8, a full gradient, and
  ``ye-abbe`` (8, 4, 1, 3), a third of it), model copies and pushed results as the fit guide
  says, only the computation injected; every worker's fastest logged ``transfer`` of each
  size beside ``latency + bytes / rate``;
- ``gradcode timing fit`` of the two runs with ``--model shared-links --accept-misfit``: its
  latency, interval and rates.

    gradcode cluster up --nodes 9 --rate 40mbit --master-rate 320mbit --no-slurm
    python benchmarks/fit_latency_links.py --latencies 0ms 0.5ms 1ms 2.5ms 5ms --out fitlat
    gradcode cluster down

Writes ``OUT/<latency>/`` (the probe, the runs, the fitted spec) and ``OUT/summary.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import yaml

from gradcode.cluster.control import current_spec
from gradcode.duration import Duration

BIN = Path(sys.executable).parent
CODES = {
    "uncoded": {"name": "uncoded", "params": {"n": 8}},
    "ya-d4-m3": {"name": "ye-abbe", "params": {"n": 8, "d": 4, "s": 1, "m": 3}},
}


def run_file(
    name: str, scheme: dict, rate: str, master_rate: str, latency: str, iters: int
) -> dict:
    return {
        "name": name,
        "iterations": iters,
        "seed": 0,
        "data": {"dataset": "synthetic-logistic", "variant": "links-p25000", "trim": False},
        "model": {"kind": "logistic"},
        "scheme": scheme,
        "optimizer": {"kind": "gd", "step": 1.0},
        "stragglers": {
            "model": "master-worker",
            "params": {"lambda1": 0.8, "t1": 1.6},
            "time_unit": 0.01,
        },
        "network": {"links": {"rate": rate, "master_rate": master_rate, "latency": latency}},
        # the data from the shared file system: over the links (67 MB through 40 Mbit/s) it
        # took most of a run's wall time before the first iteration, and no fit reads it
        "runtime": {"distribution": "isend", "collection": "push", "data": "load"},
        "log": {"metrics_every": 0},
        "checkpoint": {"every": 0},
    }


def with_latency(latency: str, argv: list[str], **kwargs) -> subprocess.CompletedProcess:
    wrapper = [str(BIN / "gradcode"), "cluster", "latency", "--latency", latency, "--"]
    if Duration.parse(latency, "--latencies").seconds == 0:
        wrapper = []  # a delayer at zero still costs every packet its path
    return subprocess.run([*wrapper, *argv], capture_output=True, text=True, check=True, **kwargs)


def fastest_transfers(run: Path) -> dict[str, dict[str, float]]:
    """Per worker: its fastest logged transfer (s) and that message's bytes."""
    best: dict[str, dict[str, float]] = {}
    for line in (run / "log.jsonl").read_text().splitlines():
        row = json.loads(line)
        for message in row.get("messages", []) or []:
            transfer = message.get("transfer")
            if transfer is None:
                continue
            worker = str(message.get("worker"))
            if worker not in best or transfer < best[worker]["transfer"]:
                best[worker] = {"transfer": transfer, "bytes": message.get("bytes")}
    return best


def one_latency(latency: str, args: argparse.Namespace) -> dict:
    out = args.out / latency
    out.mkdir(parents=True, exist_ok=True)
    ranks = len(current_spec().nodes)
    seconds = Duration.parse(latency, "--latencies").seconds
    mpiexec = [str(BIN / "gradcode"), "cluster", "mpiexec", "-n", str(ranks), "--"]
    probe = [str(BIN / "python"), "-m", "gradcode.train.linkprobe", "--out", str(out / "probe")]
    probe += ["--sizes", args.sizes, "--repeats", "5", "--directions", "up"]
    probe += ["--rate", args.rate, "--master-rate", args.master_rate, "--latency", str(seconds)]
    with_latency(latency, [*mpiexec, *probe], timeout=900)
    runs = []
    for name, scheme in CODES.items():
        path = out / f"{name}.yaml"
        spec = run_file(name, scheme, args.rate, args.master_rate, latency, args.iterations)
        path.write_text(yaml.safe_dump(spec, sort_keys=False))
        run = out / name
        train = [str(BIN / "python"), "-m", "gradcode.train", str(path), "--out", str(run)]
        with_latency(latency, [*mpiexec, *train], timeout=900)
        runs.append(run)
    fit = [str(BIN / "gradcode"), "timing", "fit", *map(str, runs), "--model", "shared-links"]
    fit += ["--accept-misfit", "--out", str(out / "fitted.yaml")]
    fitted = subprocess.run(fit, capture_output=True, text=True, timeout=900)
    (out / "fit.txt").write_text(fitted.stdout + fitted.stderr)
    probe_medians = json.loads((out / "probe" / "links.json").read_text()).get("medians")
    return {
        "latency": latency,
        "rate": args.rate,
        "master_rate": args.master_rate,
        "probe_medians": probe_medians,
        "fastest": {run.name: fastest_transfers(run) for run in runs},
        "fit_exit": fitted.returncode,
        "fit_latency": _fitted_latency(out / "fitted.yaml"),
    }


def _fitted_latency(path: Path) -> object:
    if not path.exists():
        return None
    spec = yaml.safe_load(path.read_text())
    return spec.get("fit", {}).get("link_rates", {}).get("latency")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latencies", nargs="+", default=["0ms", "0.5ms", "1ms", "2.5ms", "5ms"])
    parser.add_argument("--rate", default="40mbit", help="the workers' links, as brought up")
    parser.add_argument("--master-rate", default="320mbit", help="the master's, as brought up")
    parser.add_argument("--sizes", default="1KiB,4KiB,16KiB,64KiB,256KiB,1MiB")
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for latency in args.latencies:
        row = one_latency(latency, args)
        print(json.dumps({k: row[k] for k in ("latency", "fit_exit", "fit_latency")}), flush=True)
        with (args.out / "summary.jsonl").open("a") as out:
            out.write(json.dumps(row) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
