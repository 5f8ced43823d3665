"""Wall time and peak memory of preparing Amazon with the Tandon recipe (issue 3).

Runs ``gradcode.data.prepare("amazon", ...)`` (read and check train.csv.xz, encode 241,915
one-hot features, split, write data.npz and meta.json) ``--repeats`` times into a temporary
directory and prints:

- wall time of the first call (cold: includes lazily imported scikit-learn modules) and the
  median of all calls, measured with ``time.perf_counter`` around ``prepare``;
- wall time of the whole process, from interpreter start (``/proc/self/stat``) to the end;
- peak resident memory of the whole process (``resource.getrusage(RUSAGE_SELF).ru_maxrss``,
  so the interpreter and numpy/scipy/scikit-learn are included), and the resident memory
  after imports, before the first ``prepare``, for comparison.

Targets (issue 3, our 2-core machine): under 20 s and under 2 GiB.

    GRADCODE_DATA_DIR=/work/shared/datasets python benchmarks/prepare_amazon.py [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import gradcode.data
from gradcode.data import prepare

TARGET_SECONDS = 20.0
TARGET_BYTES = 2 * 1024**3


def process_seconds() -> float:
    """Seconds since this process started (Linux: /proc/self/stat field 22, in clock ticks)."""
    start_ticks = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[19])
    uptime = float(Path("/proc/uptime").read_text().split()[0])
    return uptime - start_ticks / os.sysconf("SC_CLK_TCK")


def peak_rss_bytes() -> int:
    # ru_maxrss is in KiB on Linux (bytes on macOS)
    scale = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * scale


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_raw = Path(os.environ.get("GRADCODE_DATA_DIR", "")) / "amazon"
    parser.add_argument("--raw", type=Path, default=default_raw, help="folder with train.csv[.xz]")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    if not os.environ.get("GRADCODE_DATA_DIR") and args.raw == default_raw:
        print("set GRADCODE_DATA_DIR (or pass --raw) to the folder with train.csv.xz")
        return 2
    rss_after_imports = peak_rss_bytes()
    times = []
    with tempfile.TemporaryDirectory() as scratch:
        for run in range(args.repeats):
            start = time.perf_counter()
            try:
                data = prepare("amazon", Path(scratch) / f"run{run}", raw=[args.raw])
            except gradcode.data.DataError as error:
                print(f"error: {error}")
                return 2
            times.append(time.perf_counter() - start)
    peak = peak_rss_bytes()
    total = process_seconds()
    print(
        f"amazon (variant {data.variant}): {data.n_features:,} features, "
        f"{data.n_train:,} train / {data.n_test:,} test rows, "
        f"data.npz {data.meta['outputs']['data.npz']['bytes'] / 2**20:.1f} MiB"
    )
    print(f"prepare() wall time, first call     {times[0]:7.2f} s")
    print(f"prepare() wall time, median of {len(times)}    {statistics.median(times):7.2f} s")
    print(f"whole process wall time             {total:7.2f} s   (target < {TARGET_SECONDS:.0f} s)")
    print(f"peak RSS, whole process             {peak / 2**20:7.0f} MiB (target < 2048 MiB)")
    print(f"peak RSS after imports (before)    {rss_after_imports / 2**20:7.0f} MiB")
    ok = total < TARGET_SECONDS and peak < TARGET_BYTES
    print("verdict                             " + ("within targets" if ok else "OVER TARGET"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
