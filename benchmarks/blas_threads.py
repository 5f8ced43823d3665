"""Are simulations and analyses slower now that importing gradcode no longer pins BLAS to one
thread in every process (issue 14)?

Before, the Snakemake process imported ``gradcode.train``, which set ``OPENBLAS_NUM_THREADS=1``
(and friends) for itself and so for every local job. Now only MPI ranks, decoders' level-1
passes and reproducible analyses pin it. This runs the same simulation preset and analysis as
child processes with the variables set to 1 (as before) and unset (as now), alternating, and
prints the median time of each and their ratio, all measured in this one run.

    .venv/bin/python benchmarks/blas_threads.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from gradcode.blas import BLAS_VARIABLES, single_thread_environment

JOBS = {
    "simulate gc-mmc-fig1": ["simulate", "gc-mmc-fig1", "--trials", "20000", "--seed", "0"],
    "simulate coded-reduce": ["simulate", "coded-reduce", "--trials", "20000", "--seed", "0"],
    "analyze heterogeneous-comm-cost": [
        "analyze",
        "heterogeneous-comm-cost",
        "--trials",
        "100",
        "--seed",
        "0",
        "--quiet",
    ],
    "analyze binary-decoding": [
        "analyze",
        "binary-decoding",
        "--trials",
        "100",
        "--seed",
        "0",
        "--quiet",
    ],
}


def timed(args: list[str], env: dict[str, str], out: Path) -> float:
    command = [sys.executable, "-m", "gradcode", *args, "--out", str(out)]
    start = time.perf_counter()
    subprocess.run(command, env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    pinned = single_thread_environment()
    free = {k: v for k, v in os.environ.items() if k not in BLAS_VARIABLES}
    print(f"{'job':34s} {'pinned (s)':>10s} {'unpinned (s)':>12s} {'unpinned/pinned':>16s}")
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "table.csv"
        for name, job in JOBS.items():
            times: dict[str, list[float]] = {"pinned": [], "free": []}
            for _ in range(args.repeats):
                times["pinned"].append(timed(job, pinned, out))
                times["free"].append(timed(job, free, out))
            a, b = statistics.median(times["pinned"]), statistics.median(times["free"])
            print(f"{name:34s} {a:10.2f} {b:12.2f} {b / a:16.2f}")


if __name__ == "__main__":
    main()
