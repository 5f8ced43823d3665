"""Coordination overhead of the MPI runtime at n = 20 workers on this machine.

For each scheme, one real job (``mpiexec -n 21``) runs with deterministic injected delays (the
``fixed`` straggler model: worker ``i`` sleeps ``base + step * i`` seconds per partition) on a
small data set, so that real computation is a small part of each iteration. Per iteration, the
log gives the measured iteration time and, per result, the measured computation and the
injected delays; ``gradcode.runlogs.timings.implied_iteration_time`` turns those into the time
the iteration would take with free coordination (the code's own completion rule on the implied
arrivals). Printed: ``(measured - implied) / measured`` over all iterations after a warm-up.
Target: <= 5 %. All numbers come from this one run.

    python benchmarks/runtime_overhead.py [--workers 20] [--iterations 40] [--base 0.05]
"""

from __future__ import annotations

import argparse
import sys

import yaml
from fixed_delay_jobs import add_options, synthetic_data
from fixed_delay_jobs import delays as fixed_delays

from gradcode.codes import build
from gradcode.launch.jobs import run_job
from gradcode.runlogs.log import read_log
from gradcode.runlogs.timings import coordination_overhead


def schemes(n: int) -> list[tuple[str, str, dict]]:
    return [
        ("uncoded", "uncoded", {"n": n}),
        ("frc s=3", "frc", {"n": n, "s": 3}),
        ("crc s=3", "crc", {"n": n, "s": 3}),
        ("ye-abbe d=6 s=3 m=3", "ye-abbe", {"n": n, "d": 6, "s": 3, "m": 3}),
        ("binary s=3", "binary", {"n": n, "s": 3}),
        ("gc-mmc r=4 order=2", "gc-mmc", {"n": n, "r": 4, "design": "correlated", "order": 2}),
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=20)
    add_options(parser, iterations=40, base=0.05)
    args = parser.parse_args()
    n = args.workers
    scratch, data = synthetic_data(args, "gradcode-overhead-")
    delays = fixed_delays(n, args)
    print(
        f"n = {n} workers, {args.iterations} iterations ({args.warmup} warm-up left out), "
        f"p = {args.features}, fixed delays {delays[0]}..{delays[-1]} s per partition"
    )
    print(f"{'scheme':24s} {'measured':>10s} {'implied':>10s} {'overhead':>9s}")
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
        run_file = scratch / f"{name}.yaml"
        run_file.write_text(yaml.safe_dump(run))
        out = scratch / f"out-{name}"
        result = run_job(n + 1, run_file, ["--out", str(out)], timeout=900)
        if result.returncode != 0:
            print(f"{label}: job failed\n{result.stderr}", file=sys.stderr)
            return 1
        stats = coordination_overhead(build(name, **params), read_log(out), skip=args.warmup)
        worst = max(worst, stats["overhead"])
        print(
            f"{label:24s} {stats['measured_mean'] * 1e3:8.1f}ms "
            f"{stats['implied_mean'] * 1e3:8.1f}ms "
            f"{stats['overhead'] * 100:8.2f}%"
        )
    print(f"worst overhead {worst * 100:.2f} % (target <= 5 %)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
