"""What fault tolerance costs per iteration: the same runs on MPICH and on Open MPI with ULFM.

For each scheme, the same run file (the ``fixed`` straggler model: worker ``i`` sleeps ``base +
step * i`` seconds per partition, on a small synthetic data set) runs twice in this one
invocation, alternating: as every run does (MPICH, ``mpiexec.hydra``) and with ``faults:
{tolerate: true}`` (Open MPI with ULFM, ``python -m gradcode.launch.ulfm``), no worker killed.
Printed per scheme: the mean measured iteration time of each (warm-up left out) and their
ratio ULFM / MPICH. Target: the fault-tolerant path at most 5 % slower per iteration.

    python benchmarks/fault_tolerance_overhead.py [--workers 8] [--iterations 40] [--repeats 2]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import yaml
from fixed_delay_jobs import add_options, synthetic_data
from fixed_delay_jobs import delays as fixed_delays

from gradcode.launch.jobs import run_job
from gradcode.runlogs.log import read_log


def schemes(n: int) -> list[tuple[str, str, dict]]:
    return [
        ("uncoded", "uncoded", {"n": n}),
        ("frc s=1", "frc", {"n": n, "s": 1}),
        ("crc s=2", "crc", {"n": n, "s": 2}),
        ("ye-abbe d=3 s=1 m=2", "ye-abbe", {"n": n, "d": 3, "s": 1, "m": 2}),
    ]


def mean_iteration(out: Path, warmup: int) -> float:
    return float(np.mean([r["iteration_time"] for r in read_log(out)[warmup:]]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=8)
    add_options(parser, iterations=40, base=0.02)
    parser.add_argument("--repeats", type=int, default=2, help="alternating runs of each")
    args = parser.parse_args()
    n = args.workers
    scratch, data = synthetic_data(args, "gradcode-ft-overhead-")
    delays = fixed_delays(n, args)
    print(
        f"n = {n} workers, {args.iterations} iterations ({args.warmup} warm-up left out), "
        f"p = {args.features}, fixed delays {delays[0]}..{delays[-1]} s per partition, "
        f"{args.repeats} alternating runs of each"
    )
    print(f"{'scheme':22s} {'MPICH':>9s} {'ULFM':>9s} {'ULFM/MPICH':>11s}")
    worst = 0.0
    for label, name, params in schemes(n):
        run = {
            "iterations": args.iterations,
            "data": {"prepared": str(data)},
            "model": {"kind": "logistic"},
            "scheme": {"name": name, "params": params},
            "optimizer": {"kind": "gd", "step": 1.0},
            "stragglers": {"model": "fixed", "params": {"compute": delays}},
            "log": {"metrics_every": 0},
        }
        times: dict[bool, list[float]] = {False: [], True: []}
        for repeat in range(args.repeats):
            for tolerant in (False, True):
                run_file = scratch / f"{name}-{tolerant}.yaml"
                run_file.write_text(
                    yaml.safe_dump(run | ({"faults": {"tolerate": True}} if tolerant else {}))
                )
                out = scratch / f"out-{name}-{tolerant}-{repeat}"
                result = run_job(
                    n + 1, run_file, ["--out", str(out)], timeout=900, tolerant=tolerant
                )
                if result.returncode != 0:
                    print(f"{label}: job failed\n{result.stderr[-3000:]}", file=sys.stderr)
                    return 1
                times[tolerant].append(mean_iteration(out, args.warmup))
        mpich, ulfm = float(np.mean(times[False])), float(np.mean(times[True]))
        worst = max(worst, ulfm / mpich)
        print(f"{label:22s} {mpich * 1e3:7.1f}ms {ulfm * 1e3:7.1f}ms {ulfm / mpich:11.3f}")
    print(f"largest ULFM / MPICH {worst:.3f} (target <= 1.05)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
