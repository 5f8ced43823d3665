"""Paper 000's Table 3 by Monte Carlo: all 36 (d, m) cells at 10^6 trials each.

Runs the ``ye-abbe-table3`` preset through ``gradcode.sim.simulate`` (common random numbers:
the draws of a chunk are generated once and reused by all 36 cells) and prints, per cell, the
estimate, its 95 % confidence half-width, the paper's value and the exact expectation
(``gradcode.timing.exact``) with the relative differences, then the whole grid's wall time and
the rate in cell-trials per second (and the CPU time, which other processes on the machine do
not inflate). Target: the whole grid in under 10 s on the project's 2-core machine. All
numbers come from this one run.

    python benchmarks/simulate_table3.py [--trials 1000000] [--seed 0] [--chunk 65536]
"""

from __future__ import annotations

import argparse
import time

from gradcode.sim import load_spec, preset, simulate
from gradcode.timing.exact import ye_abbe_expected_time

MODEL = {"lambda1": 0.8, "t1": 1.6, "lambda2": 0.1, "t2": 6}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--chunk", type=int, default=65536)
    args = parser.parse_args()

    spec = load_spec(preset("ye-abbe-table3"), origin="ye-abbe-table3")
    start, cpu = time.perf_counter(), time.process_time()
    rows = simulate(spec, trials=args.trials, seed=args.seed, chunk=args.chunk)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu

    print(f"{'d':>2s} {'m':>2s} {'s':>2s} {'monte carlo':>12s} {'+-95%':>8s} {'paper':>9s}"
          f" {'vs paper':>9s} {'exact':>9s} {'vs exact':>9s}")  # fmt: skip
    worst_paper = worst_exact = 0.0
    for row in rows:
        d, m = row.params["d"], row.params["m"]
        exact = ye_abbe_expected_time(8, d, m, **MODEL)
        vs_paper = 100 * (row.mean_time / row.reference_time - 1)
        vs_exact = 100 * (row.mean_time / exact - 1)
        worst_paper = max(worst_paper, abs(vs_paper))
        worst_exact = max(worst_exact, abs(vs_exact))
        half = (row.ci_high - row.ci_low) / 2
        print(
            f"{d:2d} {m:2d} {d - m:2d} {row.mean_time:12.4f} {half:8.4f} {row.reference_time:9.4f}"
            f" {vs_paper:+8.3f}% {exact:9.4f} {vs_exact:+8.3f}%"
        )
    best = min(rows, key=lambda row: row.mean_time)
    uncoded = next(row for row in rows if row.params["d"] == row.params["m"] == 1)
    best_m1 = min((row for row in rows if row.params["m"] == 1), key=lambda row: row.mean_time)
    print(
        f"optimum d={best.params['d']} m={best.params['m']}: {best.mean_time:.4f}; "
        f"{100 * (1 - best.mean_time / uncoded.mean_time):.1f}% faster than uncoded, "
        f"{100 * (1 - best.mean_time / best_m1.mean_time):.1f}% faster than the best m = 1 "
        f"(d={best_m1.params['d']})"
    )
    print(f"largest |difference|: {worst_paper:.3f}% from the paper, {worst_exact:.3f}% from exact")
    cells = len(rows) * args.trials
    print(
        f"whole grid: {len(rows)} cells x {args.trials} trials in {elapsed:.2f} s wall, "
        f"{cpu:.2f} s CPU ({cells / elapsed:.3g} cell-trials/s, {args.trials / elapsed:.3g} "
        f"grid trials/s; target < 10 s: ratio {elapsed / 10:.2f}; the CPU time shows how much "
        f"other processes slowed the wall time)"
    )


if __name__ == "__main__":
    main()
