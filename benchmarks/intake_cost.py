"""What the master's intake check costs per message (``gradcode.train.intake``), against an
iteration's time, all from one run.

1. In process: ``Intake.check`` on an honest result of ``--features`` float64 (117,706: the
   largest message the project runs, paper 001's Table II CNN), median of ``--repeats`` calls,
   beside three finiteness tests alone: ``x . x`` (what it uses), ``np.isfinite(x).all()`` and
   a plain sum.
2. One real MPI job: ``uncoded`` with ``--workers`` workers training logistic regression on
   32 synthetic rows of ``--features`` features (as many bytes per message as the CNN, and a
   gradient cheap enough that the iteration is mostly the runtime's: the worst case for the
   ratio), ``--iterations`` iterations, the first ``--warmup`` left out. Per iteration the
   log's ``intake_time`` (every check of the iteration's messages) over its
   ``iteration_time``: median and largest printed.

    .venv/bin/python benchmarks/intake_cost.py [--features 117706] [--workers 4]
        [--iterations 12] [--warmup 2] [--repeats 201]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

from gradcode.data import prepare
from gradcode.launch.jobs import run_job
from gradcode.runlogs.log import read_log
from gradcode.train.intake import Intake, Sender
from gradcode.train.protocol import FIELD, H, result_tag


def median_seconds(call, repeats: int) -> float:
    call()
    times = []
    for _ in range(repeats):
        began = time.perf_counter()
        call()
        times.append(time.perf_counter() - began)
    return statistics.median(times)


def in_process(features: int, repeats: int) -> None:
    rng = np.random.default_rng(0)
    buffer = np.empty(H + features)
    buffer[:H] = 0.0
    buffer[FIELD["key"]] = buffer[FIELD["worker"]] = 1
    buffer[H:] = rng.standard_normal(features)
    intake = Intake(features, lambda source: Sender(1, frozenset({1})), ahead=0)
    tag, nbytes = result_tag(0), buffer.nbytes
    x = buffer[H:]
    check = median_seconds(lambda: intake.check(2, tag, nbytes, buffer, 0), repeats)
    print(f"Intake.check, {features} float64: {1e6 * check:.1f} us (median)")
    for name, test in [
        ("x . x", lambda: np.isfinite(x.dot(x))),
        ("np.isfinite(x).all()", lambda: np.isfinite(x).all()),
        ("np.add.reduce(x)", lambda: np.isfinite(np.add.reduce(x))),
    ]:
        print(f"{name} alone: {1e6 * median_seconds(test, repeats):.1f} us (median)")


def in_run(args: argparse.Namespace) -> list[float]:
    with tempfile.TemporaryDirectory() as scratch:
        data = Path(scratch) / "data"
        prepare(
            "synthetic-logistic",
            data,
            variant="custom",
            rows=32,
            features=args.features,
            test_rows=0,
        )
        run = {
            "iterations": args.iterations,
            "data": {"prepared": str(data)},
            "model": {"kind": "logistic"},
            "scheme": {"name": "uncoded", "params": {"n": args.workers}},
            "optimizer": {"kind": "gd", "step": 0.1},
            "log": {"metrics_every": args.iterations},
        }
        run_file = Path(scratch) / "run.yaml"
        run_file.write_text(yaml.safe_dump(run))
        out = Path(scratch) / "out"
        result = run_job(args.workers + 1, run_file, ["--out", str(out)], timeout=600)
        if result.returncode:
            raise SystemExit(result.stderr[-2000:])
        log = read_log(out)[args.warmup :]
        print(
            "iteration_time (ms):",
            " ".join(f"{1e3 * r['iteration_time']:.2f}" for r in log),
        )
        print("intake_time (ms):", " ".join(f"{1e3 * r['intake_time']:.3f}" for r in log))
        print("messages checked per iteration:", sorted({len(r["messages"]) for r in log}))
        print("intake_time per message (us, median):", end=" ")
        print(f"{1e6 * statistics.median(r['intake_time'] / len(r['messages']) for r in log):.1f}")
        return [r["intake_time"] / r["iteration_time"] for r in log]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--features", type=int, default=117_706)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--iterations", type=int, default=12)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=201)
    args = parser.parse_args()
    in_process(args.features, args.repeats)
    ratios = in_run(args)
    print(
        f"intake_time / iteration_time: median {statistics.median(ratios):.4f}, "
        f"largest {max(ratios):.4f} over {len(ratios)} iterations"
    )


if __name__ == "__main__":
    main()
