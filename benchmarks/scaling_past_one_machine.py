"""Paper 001's schemes past one machine: predicted time per iteration at N = 84, 1,000 and
10,000 workers and one-way latencies of 0-50 ms, and what the simulator itself costs.

Per cluster size:

1. the simulator's own cost, like with like: ``gradcode simulate`` at 0 ms on the schemes
   every size runs (``COMMON``: UMW, SGD, RAR, CR), and on GC alone where it is run (it is
   not at 10,000: ``scaling.not_run``), each spec written beside the results and run as a
   child process: its wall time, CPU time (user + system) and peak resident memory from
   ``wait4``, so each is measured alone, construction of the codes included;
2. the predictions at every latency (``gradcode.analysis.scaling.predict``: the codes built
   once, the same seed and trials as 1.), checked against 1.'s table at 0 ms (the same draws
   must give the same means).

3. CR alone on the other regular trees the size allows (``trees_by_depth``: the largest of
   every depth with at least half the workers), at the smallest and largest latency.

Writes ``OUT/predictions.csv``, ``OUT/trees.csv``, ``OUT/cost.csv``,
``OUT/scaling-past-one-machine.png`` and prints the page's tables
(docs/measurements/scaling-past-one-machine.md) as Markdown.

    python benchmarks/scaling_past_one_machine.py [--out results/scaling] [--trials 1000]
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from gradcode.analysis import scaling
from gradcode.figures.latency import crossover
from gradcode.sim.table import read_csv

SCHEMES = ("UMW", "GC", "SGD", "RAR", "CR")
#: the schemes simulated at every size: the cost panel compares these across sizes, and GC
#: (built only up to ``scaling.GC_MAX_WORKERS``) on its own
COMMON = ("UMW", "SGD", "RAR", "CR")


def measure_cli(spec_file: Path, out: Path, trials: int, seed: int) -> dict[str, float]:
    """Run ``gradcode simulate`` on ``spec_file``; its wall, CPU seconds and peak MiB."""
    command = shutil.which("gradcode", path=str(Path(sys.executable).parent)) or "gradcode"
    argv = [command, "simulate", str(spec_file), "--trials", str(trials), "--seed", str(seed)]
    started = time.perf_counter()
    child = subprocess.Popen([*argv, "--out", str(out), "--quiet"])
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise SystemExit(f"{' '.join(argv)} failed with status {child.returncode}")
    # ru_maxrss is in KiB on Linux
    return {
        "wall_seconds": wall,
        "cpu_seconds": usage.ru_utime + usage.ru_stime,
        "peak_mib": usage.ru_maxrss / 1024,
    }


def measure_spec(
    workers: int, labels: tuple[str, ...], name: str, trials: int, seed: int, out: Path
) -> tuple[dict[str, float], dict[str, float]]:
    """``gradcode simulate`` on ``labels`` at ``workers`` and 0 ms: its cost and its means."""
    spec_file = out / f"spec-n{workers}-{name}.yaml"
    spec_file.write_text(yaml.safe_dump(scaling.spec(workers, 0.0, labels), sort_keys=False))
    table = out / f"cli-n{workers}-{name}.csv"
    print(f"N = {workers}: gradcode simulate {name}, {trials} trials", file=sys.stderr, flush=True)
    cost = measure_cli(spec_file, table, trials, seed)
    return cost, {row["label"]: float(row["mean_time"]) for row in read_csv(table)}


def run(
    workers: int, latencies: list[float], trials: int, seed: int, out: Path
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """One cluster size: its prediction rows and its cost row."""
    cost, cli = measure_spec(workers, COMMON, "common", trials, seed, out)
    gc = "GC" not in scaling.not_run(workers)
    if gc:
        alone, means = measure_spec(workers, ("GC",), "gc", trials, seed, out)
        cost |= {f"gc_{key}": value for key, value in alone.items()}
        cli |= means
    print(f"N = {workers}: every latency", file=sys.stderr, flush=True)
    rows = scaling.predict(workers, latencies, trials=trials, seed=seed)
    for row in rows:
        if row["latency_ms"] == 0 and "mean_time" in row:
            if abs(row["mean_time"] - cli[row["scheme"]]) > 1e-9 * cli[row["scheme"]]:
                raise SystemExit(f"N = {workers} {row['scheme']}: CLI and predict disagree")
    tree = scaling.paper_tree(workers)
    build = next(row["build_seconds"] for row in rows if "build_seconds" in row)
    cost |= {
        "workers": workers,
        "trials": trials,
        "tree": tree.describe(),
        "tree_workers": tree.workers,
        "schemes": "+".join(COMMON),
        "build_seconds_in_process": build,
        "simulate_cpu_seconds_in_process_0ms": sum(
            row["simulate_cpu_seconds"]
            for row in rows
            if row["latency_ms"] == 0 and "trials" in row and row["scheme"] in COMMON
        ),
        "not_run": "; ".join(f"{k}: {v}" for k, v in scaling.not_run(workers).items()),
    }
    return rows, cost


def write_rows(path: Path, rows: list[dict[str, Any]]) -> None:
    names: dict[str, None] = {}
    for row in rows:
        names.update(dict.fromkeys(row))
    with open(path, "w", newline="", encoding="utf-8") as stream:
        writer = csv.DictWriter(stream, list(names), lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def time_of(rows: list[dict[str, Any]], workers: int, latency: float, scheme: str) -> float | None:
    for row in rows:
        if (row["workers"], row["latency_ms"], row["scheme"]) == (workers, latency, scheme):
            return row.get("mean_time")
    return None


def figure(rows: list[dict[str, Any]], costs: list[dict[str, Any]], path: Path) -> None:
    """Time per iteration against N (0 and 50 ms), CR's speedups against latency, the cost."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = sorted({row["workers"] for row in rows})
    latencies = sorted({row["latency_ms"] for row in rows})
    fig, (left, middle, right) = plt.subplots(1, 3, figsize=(15, 4.6))
    colours = dict(zip(SCHEMES, plt.rcParams["axes.prop_cycle"].by_key()["color"], strict=False))
    for scheme in SCHEMES:
        for latency, style in ((latencies[0], "-o"), (latencies[-1], "--s")):
            points = [(n, time_of(rows, n, latency, scheme)) for n in sizes]
            points = [(n, t) for n, t in points if t is not None]
            if points:
                label = f"{scheme}, {latency:g} ms"
                left.plot(*zip(*points, strict=True), style, color=colours[scheme], label=label)
    left.set(xscale="log", yscale="log", xlabel="workers N", ylabel="s per iteration (model)")
    left.set_title("shared-links model, 100 Mbit/s, tc = 0.05 s")
    left.legend(fontsize=7, ncol=2)
    for n, marker in zip(sizes, "o^s", strict=False):
        colour = None
        for other, style in (("RAR", "-"), ("UMW", ":")):
            speedups = [
                time_of(rows, n, x, other) / time_of(rows, n, x, "CR")  # type: ignore[operator]
                for x in latencies
            ]
            (line,) = middle.plot(
                latencies, speedups, style + marker, color=colour, label=f"over {other}, N = {n}"
            )
            colour = line.get_color()  # one colour per N
    middle.axhline(1, color="grey", lw=0.8)
    middle.set_xscale("symlog", linthresh=0.5)
    middle.set(yscale="log", xlabel="one-way latency (ms)", xlim=(0, latencies[-1] * 1.2))
    middle.set(ylabel="CR's speedup per iteration (model)")
    middle.set_title("CR against RAR (solid) and UMW (dotted)")
    middle.legend(fontsize=7)
    cost_panel(right, costs)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def cost_panel(right: Any, costs: list[dict[str, Any]]) -> None:
    """The simulator's cost per size on the same schemes (``COMMON``), GC's alone beside it."""
    ns = [cost["workers"] for cost in costs]
    right.plot(ns, [c["wall_seconds"] for c in costs], "-o", label="wall, UMW+SGD+RAR+CR")
    right.plot(ns, [c["cpu_seconds"] for c in costs], "-^", label="CPU, UMW+SGD+RAR+CR")
    with_gc = [c for c in costs if "gc_wall_seconds" in c]
    for field, marker in (("wall", ":o"), ("cpu", ":^")):
        right.plot(
            [c["workers"] for c in with_gc],
            [c[f"gc_{field}_seconds"] for c in with_gc],
            marker,
            color="tab:grey",
            label=f"{field.replace('cpu', 'CPU')}, GC alone",
        )
    right.set(xscale="log", yscale="log", xlabel="workers N", ylabel="seconds")
    memory = right.twinx()
    memory.plot(ns, [c["peak_mib"] for c in costs], "--s", color="tab:red", label="peak (MiB)")
    memory.set(ylabel="peak resident memory (MiB), UMW+SGD+RAR+CR", ylim=(0, None))
    right.set_title("gradcode simulate at 0 ms, the same schemes at every size")
    lines = right.get_legend_handles_labels()
    extra = memory.get_legend_handles_labels()
    right.legend(lines[0] + extra[0], lines[1] + extra[1], fontsize=7, loc="upper left")


def markdown(rows: list[dict[str, Any]], costs: list[dict[str, Any]]) -> str:
    sizes = sorted({row["workers"] for row in rows})
    latencies = sorted({row["latency_ms"] for row in rows})
    head = "| N | scheme | " + " | ".join(f"{x:g} ms" for x in latencies) + " |"
    lines = [head, "|" + "---|" * (len(latencies) + 2)]
    for n in sizes:
        for scheme in SCHEMES:
            cells = []
            for x in latencies:
                t = time_of(rows, n, x, scheme)
                cr = time_of(rows, n, x, "CR")
                if t is None:
                    cells.append("not run")
                elif scheme == "CR":
                    cells.append(f"{t:.4g}")
                else:
                    cells.append(f"{t:.4g} ({t / cr:.3g}x)")  # type: ignore[operator]
            lines.append(f"| {n} | {scheme} | " + " | ".join(cells) + " |")
    lines += ["", "| N | CR overtakes RAR at |", "|---|---|"]
    for n in sizes:
        found = crossover(
            [x / 1e3 for x in latencies],
            [time_of(rows, n, x, "CR") for x in latencies],  # type: ignore[misc]
            [time_of(rows, n, x, "RAR") for x in latencies],  # type: ignore[misc]
        )
        lines.append(f"| {n} | {found.describe()} |")
    lines += [
        "",
        "| N | CR's tree | trials | UMW+SGD+RAR+CR: wall (s) | CPU (s) | peak (MiB) "
        "| GC alone: wall (s) | CPU (s) | peak (MiB) | codes built in (s) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in costs:
        gc = (
            f"{c['gc_wall_seconds']:.1f} | {c['gc_cpu_seconds']:.1f} | {c['gc_peak_mib']:.0f}"
            if "gc_wall_seconds" in c
            else "not run | | "
        )
        lines.append(
            f"| {c['workers']} | {c['tree']} ({c['tree_workers']} workers) | {c['trials']} | "
            f"{c['wall_seconds']:.1f} | {c['cpu_seconds']:.1f} | {c['peak_mib']:.0f} | {gc} | "
            f"{c['build_seconds_in_process']:.1f} |"
        )
    return "\n".join(lines)


def tree_table(trees: list[dict[str, Any]]) -> str:
    """CR on every depth's tree: workers used, Theorem 1's load, s per iteration."""
    ends = sorted({row["latency_ms"] for row in trees})
    lines = [
        "| N | tree | workers used | load r_CR | " + " | ".join(f"{x:g} ms" for x in ends) + " |",
        "|" + "---|" * (4 + len(ends)),
    ]
    shapes: dict[tuple[int, str], dict[float, dict[str, Any]]] = {}
    for row in trees:
        shapes.setdefault((row["workers"], row["tree"]), {})[row["latency_ms"]] = row
    for (n, tree), found in shapes.items():
        first = found[ends[0]]
        times = " | ".join(f"{found[x]['mean_time']:.4g}" for x in ends)
        lines.append(f"| {n} | {tree} | {first['used_workers']} | {first['load']:.3g} | {times} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("results/scaling"))
    parser.add_argument("--trials", type=int, default=1000, help="cut to 10^7 / N per size")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, nargs="+", default=list(scaling.WORKERS))
    parser.add_argument(
        "--latencies", type=float, nargs="+", default=[x * 1e3 for x in scaling.LATENCIES]
    )
    args = parser.parse_args()
    if args.trials < 2:
        raise SystemExit(f"--trials must be >= 2 (got {args.trials})")
    args.out.mkdir(parents=True, exist_ok=True)
    latencies = [x / 1e3 for x in args.latencies]
    rows: list[dict[str, Any]] = []
    costs: list[dict[str, Any]] = []
    for workers in args.workers:
        found, cost = run(
            workers, latencies, scaling.trials_for(workers, args.trials), args.seed, args.out
        )
        rows += found
        costs.append(cost)
    trees: list[dict[str, Any]] = []
    for workers in args.workers:
        ends = [latencies[0], latencies[-1]]
        trials = scaling.trials_for(workers, args.trials)
        for tree in scaling.trees_by_depth(workers):
            print(f"N = {workers}: CR on {tree.describe()}", file=sys.stderr, flush=True)
            trees += scaling.predict_tree(workers, tree, ends, trials=trials, seed=args.seed)
    write_rows(args.out / "trees.csv", trees)
    write_rows(args.out / "predictions.csv", rows)
    write_rows(args.out / "cost.csv", costs)
    figure(rows, costs, args.out / "scaling-past-one-machine.png")
    print(markdown(rows, costs))
    print()
    print(tree_table(trees))


if __name__ == "__main__":
    main()
