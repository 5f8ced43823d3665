# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # A paper's schemes on the emulated network across link latencies
#
# Every run of an experiment with `sweep: {key: network.links.latency}`, one MPI rank per node,
# real TCP over rate-limited links, each run at its one-way latency (the delayer holds what is
# sent to each of the job's nodes for it, rule `train_latency`). Every run's mean time per
# iteration is set beside the `shared-links` model's prediction for its own logged computation
# at its stated latency (`gradcode.runlogs.timings.predicted_links_time`: a ring pays a latency
# per step, 2(N - 1) steps an iteration; a tree one per level and message; a flat code one per
# message, pulled results three). The experiment's `paper.focus` scheme (paper 001: CR;
# paper 000: its optimum code) is set against every other: its speedup per iteration at every
# latency, beside `paper.speedups` where the paper gives one, and the latency from which it is
# the faster one, measured and by the model (`gradcode.figures.latency.crossover`: linear
# between the swept latencies, only bounded when the sweep never sees the order change).
# The third panel is what the delayer itself took of the two cores the nodes share during the
# job (its CPU seconds per second, `latency.json`): measured times at a latency include that
# contention, which on real machines the network's switches absorb; the model has none of it.

# %%
import matplotlib.pyplot as plt
import numpy as np

from gradcode.figures import style
from gradcode.figures.compare import Comparison, write_rows
from gradcode.figures.fidelity import row_fidelity
from gradcode.figures.latency import by_scheme, crossovers, latency_point
from gradcode.figures.runs import data_note, read_runs, stand_in_suffix
from gradcode.pipeline import paths
from gradcode.runfile.experiment import load_experiment

# %% tags=["parameters"]
runs = ""
experiment = "config/experiments/cluster/coded-reduce-latency-n14.yaml"
png = paths.fill(paths.FIGURE, "cluster_coded_reduce_latency_n14")
comparison = paths.fill(paths.FIGURE_COMPARISON, "cluster_coded_reduce_latency_n14")

# %%
style.setup()
setting = load_experiment(experiment)
PAPER = setting.paper["paper"]
focus = setting.paper["focus"]
paper_speedups = setting.paper.get("speedups", {})
records = read_runs(runs)
points = [latency_point(run) for run in records]
grouped = by_scheme(points)
order = list(grouped)
others = [name for name in order if name != focus]
workers = max(point.run.summary["world_size"] for point in points) - 1
found = {other: crossovers(grouped, focus, other) for other in others}
links = points[0].run.summary["communication"]["links"]
# the latency each run found on its links (summary.json), against the one it stated
for point in points:
    print(
        f"{point.scheme:10s} stated {point.latency_text:>6s} in force {point.in_force} "
        f"(delayer {point.delayer}): measured {point.measured:.4f} s, "
        f"model {point.predicted:.4f} s"
    )

# %%
figure, (times, ratio, cpu) = plt.subplots(1, 3, figsize=(17, 4.8), width_ratios=[1.2, 1.2, 1])
colours = dict(zip(order, plt.rcParams["axes.prop_cycle"].by_key()["color"], strict=False))
for name in order:
    xs = np.array([p.latency for p in grouped[name]]) * 1e3
    times.plot(xs, [p.measured for p in grouped[name]], "o-", color=colours[name], label=name)
    times.plot(xs, [p.predicted for p in grouped[name]], "--", color=colours[name], lw=1)
times.set_yscale("log")
times.set_xlabel("one-way latency per link (ms)")
times.set_ylabel("mean time per iteration (s)")
times.set_title("measured (o) and shared-links model (--)")
times.legend(fontsize=8)
ours = {p.latency: p for p in grouped[focus]}
for other, result in found.items():
    theirs = {p.latency: p for p in grouped[other]}
    xs = np.array(result["latencies"])
    for what, line in (("measured", "o-"), ("predicted", "--")):
        speedup = [getattr(theirs[x], what) / getattr(ours[x], what) for x in xs]
        label = f"over {other}" if what == "measured" else None
        ratio.plot(xs * 1e3, speedup, line, color=colours[other], lw=1.5, label=label)
        cross = result[what]
        if cross.relation == "=":
            mark = "-" if what == "measured" else ":"
            ratio.axvline(cross.latency * 1e3, color=colours[other], lw=0.7, ls=mark)
ratio.axhline(1.0, color="k", lw=0.8)
ratio.set_yscale("log")
ratio.set_xlabel("one-way latency per link (ms)")
ratio.set_ylabel(f"{focus}'s speedup per iteration", labelpad=0)
ratio.set_title(f"{focus} against the others\n(o measured, -- model; vertical: crossover)")
ratio.legend(fontsize=8)
for name in order:
    held = [p for p in grouped[name] if p.delayer_share is not None]
    xs = np.array([p.latency for p in held]) * 1e3
    cpu.plot(xs, [p.delayer_share for p in held], "o", color=colours[name], label=name)
if any(p.delayer_share is not None for p in points):
    cpu.legend(fontsize=8)
else:
    cpu.text(0.5, 0.5, "not recorded for these runs", ha="center", transform=cpu.transAxes)
cpu.set_xlabel("one-way latency per link (ms)")
cpu.set_ylabel("delayer's share of a core during the job")
cpu.set_title("the delayer's CPU (real switches pay it)")
figure.suptitle(
    f"{setting.name}: N = {workers}, links {links['rate_text']} "
    f"(master {links['master_rate_text']}) - {data_note(records)}",
    y=1.06,
)
style.save(figure, png)

# %%
item = f"N = {workers} on real links across latencies"
rows = []
for name in order:
    for point in grouped[name]:
        share = point.delayer_share
        cost = "" if share is None else f"; the delayer took {share:.2f} of a core during the job"
        rows.append(
            Comparison(
                PAPER,
                item,
                f"{name} at {point.latency_text}: mean time per iteration (s), measured vs "
                "shared-links model",
                point.predicted,
                point.measured,
                "emulated network",
                f"{point.iterations} iterations after the first; latency in force "
                f"{point.in_force}{cost}" + stand_in_suffix([point.run]),
            )
        )
for other, result in found.items():
    measured, predicted = result["measured"], result["predicted"]
    rows.append(
        Comparison(
            PAPER,
            item,
            f"latency (ms, one way) from which {focus} is faster than {other} per iteration, "
            "measured vs shared-links model",
            predicted.latency * 1e3 if predicted.relation == "=" else predicted.describe(),
            measured.latency * 1e3 if measured.relation == "=" else measured.describe(),
            "emulated network",
            "linear between the swept latencies "
            + ", ".join(f"{x * 1e3:g}" for x in result["latencies"])
            + " ms",
        )
    )
    theirs = {p.latency: p for p in grouped[other]}
    claimed = paper_speedups.get(other, paper_speedups.get(other.split("-")[0]))
    for x in result["latencies"]:
        model = theirs[x].predicted / ours[x].predicted
        rows.append(
            Comparison(
                PAPER,
                item,
                f"{focus}'s speedup over {other} per iteration at {x * 1e3:g} ms",
                model if claimed is None else claimed,
                theirs[x].measured / ours[x].measured,
                "emulated network",
                f"paper value: {setting.paper.get('speedups_are', 'the shared-links model')}"
                + ("" if claimed is None else f"; model {model:.3g}"),
            )
        )
write_rows(comparison, rows, row_fidelity(r.summary for r in records))
