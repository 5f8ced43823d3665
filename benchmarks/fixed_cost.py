"""Where the MPI runtime's fixed cost per iteration goes: our code or the shared cores.

Runs uncoded jobs on this machine (``mpiexec -n n+1``, a small data set; the fixed straggler
model: worker ``i`` sleeps ``base + step * i`` seconds, or with ``--delays shifted-exponential``
paper 000's ``t1 + Exp(lambda1)``, ``t1 = base``, ``1 / lambda1 = --spread``, drawn anew every
iteration) and splits each iteration's fixed cost
(measured minus the time the logged work implies, ``gradcode.runlogs.timings``) along its
critical path, the result that arrived last, with the log's timestamps (one clock, one host):

- ``model``: the master began the iteration -> that worker started it (the model's way down:
  the master's sends, the worker noticing the model and reading it);
- ``worker``: the worker's own time around its work (after the measured compute and injected
  delays, before its result left: waking from the injected sleep, encoding, sending);
- ``result``: the result left -> the master's poll took it;
- ``master``: took it -> decodable (the master's bookkeeping of the last result);
- ``update``: decoding and the optimizer's step.

Each rank's CPU time and run-queue wait (runnable, but every core busy with another rank:
``/proc/PID/schedstat``) are sampled while the job runs; per iteration, the master's, the
critical worker's and the median worker's are printed. Run-queue wait on the critical path is
the shared cores' part; CPU time on it is ours; what is left is waiting for a nap to end (the
ranks poll, ``runtime.poll_interval``) and MPI's own delivery. The same split runs at a few
``n``, so the growth with the ranks sharing the two cores shows. All numbers come from this
one run; nothing here is a pass/fail test.

With fixed delays the same worker comes last every iteration, so the time between its result
and the next model (the master's turnaround: decoding, the update, the log) decides whether
it catches the model before the other nineteen take both cores for their computing: the bare
loop's turnaround is shorter than a nap, so its last worker starts first (measured: 1.5-1.8 ms
after the master began, the others 3 ms; made to spin 1.5 ms first, 4.6 ms). Random delays
(``--delays shifted-exponential``) take that lock away: the worker that comes last is another
each iteration, in both jobs alike (``bare_runtime.py --delays-file``: the same draws).

    python benchmarks/fixed_cost.py [--workers 4 20] [--iterations 40] [--poll 0.0005]
        [--delays fixed|shifted-exponential] [--spread 0.02]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from pathlib import Path

import yaml
from fixed_delay_jobs import add_options, delays, synthetic_data

from gradcode.codes import build
from gradcode.launch.jobs import command, job_environment, mpiexec, run_command
from gradcode.runfile.stragglers import build_source
from gradcode.runlogs.log import read_log
from gradcode.runlogs.timings import implied_iteration_time

SEGMENTS = ("model", "worker", "result", "master", "update")


class LoopSampler(threading.Thread):
    """CPU time and run-queue wait (``/proc/PID/schedstat``) of every MPI rank whose command
    line contains ``program``, between two points of its loop: when ``progress`` (a file that
    gains a line per iteration) has ``first`` lines and when it has ``last``. Between the two
    it only reads what was appended to ``progress``, so it takes next to no CPU from the
    ranks it measures."""

    def __init__(self, program: bytes, progress: Path, first: int, last: int) -> None:
        super().__init__(daemon=True)
        self.program, self.progress, self.marks = program, progress, (first, last)
        self.done = threading.Event()
        self.snapshots: list[tuple[int, dict[int, tuple[float, float]]]] = []
        self._pids: dict[int, int] = {}  # pid -> rank

    def run(self) -> None:
        offset = lines = 0
        while not self.done.is_set() and len(self.snapshots) < 2:
            try:
                with self.progress.open("rb") as handle:
                    handle.seek(offset)
                    tail = handle.read()
            except FileNotFoundError:
                tail = b""
            offset, lines = offset + len(tail), lines + tail.count(b"\n")
            if lines >= self.marks[len(self.snapshots)]:
                self.snapshots.append((lines, self._snapshot()))
            time.sleep(0.005)

    def _snapshot(self) -> dict[int, tuple[float, float]]:
        if not self._pids:
            for proc in Path("/proc").iterdir():
                try:
                    if not proc.name.isdigit() or self.program not in (
                        (proc / "cmdline").read_bytes()
                    ):
                        continue
                    environ = (proc / "environ").read_bytes().split(b"\0")
                except OSError:
                    continue
                rank = [e for e in environ if e.startswith(b"PMI_RANK=")]
                if rank:
                    self._pids[int(proc.name)] = int(rank[0].split(b"=")[1])
        stats = {}
        for pid, rank in self._pids.items():
            cpu, wait, _ = Path(f"/proc/{pid}/schedstat").read_text().split()
            stats[rank] = (int(cpu) / 1e9, int(wait) / 1e9)
        return stats

    def per_iteration(self) -> dict[int, tuple[float, float]]:
        """Per rank, seconds of CPU and of run-queue wait per iteration between the marks."""
        if len(self.snapshots) < 2:
            raise SystemExit(f"the loop never reached its marks {self.marks} in {self.progress}")
        (lines0, first), (lines1, last) = self.snapshots
        count = lines1 - lines0
        return {
            rank: ((last[rank][0] - cpu) / count, (last[rank][1] - wait) / count)
            for rank, (cpu, wait) in first.items()
        }


def critical_path(record: dict, implied: float) -> dict[str, float]:
    """The iteration's fixed cost split along the result that arrived last (seconds)."""
    last = max(record["messages"], key=lambda message: message["received"])
    work = last["compute"] + last["injected_compute"] + last["injected_comm"]
    return {
        "fixed": record["iteration_time"] - implied,
        "model": last["started"],
        "worker": last["sent"] - last["started"] - work,
        "result": last["received"] - last["sent"],
        "master": record["wait_time"] - last["received"],
        "update": record["iteration_time"] - record["wait_time"],
    }


def stragglers(n: int, args: argparse.Namespace) -> dict:
    """The run file's ``stragglers`` of ``args.delays``."""
    if args.delays == "fixed":
        return {"model": "fixed", "params": {"compute": delays(n, args)}}
    params = {"t1": args.base, "lambda1": 1.0 / args.spread}
    return {"model": "master-worker", "params": params, "time_unit": 1.0}


def drawn_delays(n: int, args: argparse.Namespace) -> list[list[float]]:
    """Per iteration, every worker's delay of ``stragglers`` (what the runtime injects: the
    same source, seed 0, one partition per worker)."""
    spec = stragglers(n, args)
    source = build_source(
        spec["model"],
        spec["params"],
        workers=n,
        partitions=n,
        seed=0,
        time_unit=spec.get("time_unit", 1.0),
    )
    return [source.delays(t).compute.tolist() for t in range(args.iterations)]


def bare_split(record: dict, delays: list[float]) -> dict[str, float]:
    """``critical_path`` of an iteration of ``bare_runtime.py`` (seconds)."""
    work = [c + d for c, d in zip(record["compute"], delays, strict=True)]
    last = max(range(len(delays)), key=lambda w: record["received"][w])
    return {
        "fixed": record["iteration_time"] - max(work),
        "model": record["started"][last],
        "worker": record["sent"][last] - record["started"][last] - work[last],
        "result": record["received"][last] - record["sent"][last],
        "master": 0.0,
        "update": record["iteration_time"] - record["received"][last],
    }


Sampled = tuple[list[dict[str, float]], dict[int, tuple[float, float]]]


def sampled(line: list[str], program: bytes, progress: Path, iterations: int) -> dict:
    """Run ``line``; its ranks' CPU and run-queue wait per iteration (``LoopSampler``) from
    30 % to 90 % of its ``iterations``."""
    sampler = LoopSampler(program, progress, int(0.3 * iterations), int(0.9 * iterations))
    sampler.start()
    result = run_command(line, timeout=900, env=job_environment())
    sampler.done.set()
    sampler.join()
    if result.returncode != 0:
        raise SystemExit(f"{' '.join(line)} failed:\n{result.stderr}")
    return sampler.per_iteration()


def ours_run(n: int, args: argparse.Namespace, data: Path, scratch: Path) -> Sampled:
    """An uncoded job of the runtime with ``n`` workers: its iterations split, and its
    ranks' CPU and run-queue wait per iteration."""
    run = {
        "iterations": args.iterations,
        "data": {"prepared": str(data)},
        "model": {"kind": "logistic"},
        "scheme": {"name": "uncoded", "params": {"n": n}},
        "optimizer": {"kind": "gd", "step": 1.0},
        "stragglers": stragglers(n, args),
        "log": {"metrics_every": 0},
        "runtime": {"poll_interval": args.poll},
    }
    run_file = scratch / f"uncoded-{n}.yaml"
    run_file.write_text(yaml.safe_dump(run))
    out = scratch / f"out-{n}"
    line = command(n + 1, run_file, "--out", str(out))
    ranks = sampled(line, b"gradcode.train", out / "log.jsonl", args.iterations)
    code = build("uncoded", n=n)
    records = read_log(out)[args.warmup :]
    return [
        critical_path(record, implied_iteration_time(code, record)) for record in records
    ], ranks


def bare_run(n: int, args: argparse.Namespace, scratch: Path) -> Sampled:
    """``bare_runtime.py`` with ``n`` workers, split and sampled like ``ours_run``."""
    out, progress = scratch / f"bare-{n}.json", scratch / f"bare-{n}.progress"
    script = Path(__file__).with_name("bare_runtime.py")
    line = [mpiexec(), "-n", str(n + 1), sys.executable, str(script), str(out)]
    line += ["--iterations", str(args.iterations), "--features", str(args.features)]
    line += ["--rows", str(args.rows), "--base", str(args.base), "--step", str(args.step)]
    line += ["--poll", str(args.poll), "--progress", str(progress)]
    drawn = drawn_delays(n, args)
    delays_file = scratch / f"bare-{n}.delays.json"
    delays_file.write_text(json.dumps(drawn))
    line += ["--delays-file", str(delays_file)]
    ranks = sampled(line, script.name.encode(), progress, args.iterations)
    records = json.loads(out.read_text())
    splits = [bare_split(record, row) for record, row in zip(records, drawn, strict=True)]
    return splits[args.warmup :], ranks


def row(label: str, n: int, splits: list[dict[str, float]], ranks: dict) -> str:
    def median(name: str) -> float:
        return statistics.median(split[name] for split in splits) * 1e3

    workers = [value for rank, value in ranks.items() if rank != 0]
    critical = max(ranks) if ranks else 0  # the largest delay: usually the last result
    mean_fixed = statistics.mean(split["fixed"] for split in splits) * 1e3
    return (
        f"{label:5s} {n:3d} {median('fixed'):6.2f} {mean_fixed:6.2f} "
        + " ".join(f"{median(name):6.2f}" for name in SEGMENTS)
        + f" | {ranks[0][0] * 1e3:6.2f} {ranks[0][1] * 1e3:6.2f}"
        f" {ranks[critical][0] * 1e3:6.2f} {ranks[critical][1] * 1e3:6.2f}"
        f" {statistics.median(c for c, _ in workers) * 1e3:6.2f}"
        f" {statistics.median(w for _, w in workers) * 1e3:6.2f}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[4, 20])
    add_options(parser, iterations=100, base=0.05)
    parser.add_argument("--poll", type=float, default=0.0005, help="runtime.poll_interval")
    parser.add_argument("--delays", choices=("fixed", "shifted-exponential"), default="fixed")
    parser.add_argument(
        "--spread", type=float, default=0.02, help="shifted-exponential: 1 / lambda1, seconds"
    )
    args = parser.parse_args()
    scratch, data = synthetic_data(args, "gradcode-fixed-cost-")
    print(
        f"uncoded, {args.iterations} iterations ({args.warmup} left out), p = {args.features}, "
        f"{args.rows} rows, "
        + (
            f"fixed delays {args.base} + {args.step} i s"
            if args.delays == "fixed"
            else f"delays {args.base} + Exp(mean {args.spread}) s"
        )
        + f", naps of {args.poll} s; "
        "medians over iterations, in ms"
    )
    print(
        f"{'':5s} {'n':>3s} {'fixed':>6s} {'mean':>6s} "
        + " ".join(f"{name:>6s}" for name in SEGMENTS)
        + f" | {'m cpu':>6s} {'m runq':>6s} {'c cpu':>6s} {'c runq':>6s}"
        f" {'w cpu':>6s} {'w runq':>6s}"
    )
    for n in args.workers:
        print(row("ours", n, *ours_run(n, args, data, scratch)), flush=True)
        print(row("bare", n, *bare_run(n, args, scratch)), flush=True)
    print(
        "ours: the runtime's uncoded job; bare: bare_runtime.py, the same loop with nothing "
        "else. fixed: measured - implied (median, mean); then its split along the result "
        "that came last. m: the master, c: the worker of the largest delay, w: the median "
        "worker; CPU and run-queue wait per iteration, from 30 % to 90 % of the loop"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
