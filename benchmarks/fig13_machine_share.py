"""What part of each Fig. 13 run's iteration the machine, not the paper's timing model or the
network's real computation, explains (issue 48, point 4), from the runs' own records.

For each run of an experiment (``summary.json``, ``log.jsonl``):

- ``measured``: the mean iteration time (every iteration, as the work counters cover them);
- ``model``: the paper's timing model on the very delays the run injected
  (``gradcode.figures.convergence.model_clock``: what the runs emulate);
- ``cpu``: the real computation a rank did an iteration on CPU time, the largest over the
  ranks (``fidelity.machine.work``: gradients and encoding, ``time.process_time``); what that
  rank's work would take on a core of its own;
- ``real``: the same rank's real seconds of it (``perf_counter``): ``real / cpu`` is how much
  sharing the cores stretched it (``stretch``);
- ``own cores`` = ``model + cpu``: the iteration with a core per rank (the critical path's
  real work taken as the busiest rank's: the ranks compute side by side, a tree's parents
  beside their children), and ``machine`` = ``measured - own cores``: what waiting for a core
  (the stretched work, the wake-ups between messages) adds.

Prints one Markdown row a run and, for the ``subject`` (CR), its deficit against every other
run split into the three parts.

    python benchmarks/fig13_machine_share.py results/train/coded-reduce-fig13-n42 \\
        config/experiments/nn/coded-reduce-fig13-n42.yaml
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from gradcode.fidelity.record import stretched_wait
from gradcode.fidelity.rule import verdict
from gradcode.figures.convergence import model_clock
from gradcode.runfile.experiment import load_experiment


def measure(folder: Path, config: Any) -> dict[str, Any]:
    """One run's row (see the module docstring)."""
    summary = json.loads((folder / "summary.json").read_text())
    records = [json.loads(line) for line in (folder / "log.jsonl").read_text().splitlines()]
    times = [r["iteration_time"] for r in records if "iteration_time" in r]
    iterations = len(times)
    fidelity = summary["fidelity"]
    work = fidelity["machine"]["work"]
    busiest = max(work["ranks"], key=lambda row: row[2])
    measured = float(np.mean(times))
    clock = model_clock(config, list(range(iterations)))
    model_mean = float(clock[-1] / iterations)
    cpu, real = busiest[2] / iterations, busiest[1] / iterations
    own = model_mean + cpu
    return {
        "run": folder.name,
        "iterations": iterations,
        "measured": measured,
        "model": model_mean,
        "cpu": cpu,
        "real": real,
        "stretch": real / cpu,
        "stretch_median": work["stretch_median"],
        "rank": busiest[0],
        "own_cores": own,
        "machine": measured - own,
        "machine_share": (measured - own) / measured,
        "cpu_share": fidelity["machine"]["cpu"],
        "verdict": fidelity["verdict"]["decided_by"],
        # the rule as it stands now (a record written before ``stretched`` judged again)
        "verdict_now": verdict(
            fidelity["machine"],
            fidelity.get("critical"),
            fidelity["model"]["kind"],
            stretched_wait(fidelity["undilated"], work, fidelity["model"]["measured"]),
        )["decided_by"],
        "pressure": fidelity["machine"]["cpu_pressure_some"],
        "wall": fidelity["machine"]["seconds"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path, help="the experiment's run folders' parent")
    parser.add_argument("experiment", type=Path)
    parser.add_argument("--subject", default="CR")
    args = parser.parse_args()
    spec = load_experiment(args.experiment)
    rows = {}
    for folder in sorted(p for p in args.runs.iterdir() if (p / "summary.json").is_file()):
        rows[folder.name] = measure(folder, spec.config(folder.name))
    print(
        "| run | iterations | measured (s) | model (s) | busiest rank's work: CPU (s) | "
        "its real (s) | stretch | median stretch | own cores (s) | machine (s) | "
        "machine's share | ranks' share of the cores | verdict (recorded) | verdict (rule now) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows.values():
        print(
            f"| {r['run']} | {r['iterations']} | {r['measured']:.3f} | {r['model']:.3f} | "
            f"{r['cpu']:.3f} (rank {r['rank']}) | {r['real']:.3f} | {r['stretch']:.2f} | "
            f"{r['stretch_median']:.2f} | {r['own_cores']:.3f} | {r['machine']:.3f} | "
            f"{r['machine_share']:.0%} | {r['cpu_share']:.2f} | {r['verdict']} | "
            f"{r['verdict_now']} |"
        )
    subject = rows.get(args.subject)
    if subject is None:
        return
    print()
    print(
        f"| {args.subject} against | measured deficit (s) | model's part (s) | "
        "real computation's part (s) | machine's part (s) |"
    )
    print("|---|---|---|---|---|")
    for name, r in rows.items():
        if name == args.subject:
            continue
        print(
            f"| {name} | {subject['measured'] - r['measured']:+.3f} | "
            f"{subject['model'] - r['model']:+.3f} | {subject['cpu'] - r['cpu']:+.3f} | "
            f"{subject['machine'] - r['machine']:+.3f} |"
        )


if __name__ == "__main__":
    main()
