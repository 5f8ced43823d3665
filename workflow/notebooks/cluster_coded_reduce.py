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
# # Paper 001 (CodedReduce) on the emulated network
#
# UMW, GC, RAR (the explicit ring and `MPI_Allreduce`), SGD and CR, one MPI rank per node,
# real TCP over links that all run at one rate (paper 001's model has one tc for every port),
# rated so that a full gradient's transfer takes the model's tc. Only the model's computation
# is injected. Every iteration is set beside the `shared-links` model's prediction for that
# iteration's computation (`gradcode.runlogs.timings.predicted_links_time`: flat schemes share
# the master's link, trees each parent's, the ring pays 2(N - 1) chunk steps after the slowest
# worker) and, for flat and tree schemes, beside its link-limited floor
# (`gradcode.runlogs.timings.link_floor`, the red marks). Three questions of issue 11: is CR
# still ahead once the traffic crosses real links; does RAR stay ahead of CR once its 2(N - 1)
# steps do; and do UMW and GC suffer incast at the master (their messages' measured transfer
# times beside one message's on an idle link).
# Paper 001's speedups are times to a target error on EC2 at N = 84; for the exact schemes
# (same iterates) that is the ratio of times per iteration, which is what is measured here.

# %%
import matplotlib.pyplot as plt
import numpy as np

from gradcode.codes import build
from gradcode.figures import style
from gradcode.figures.cluster import floor_comparison, message_transfers, predicted_after_download
from gradcode.figures.compare import Comparison, write_rows
from gradcode.figures.fidelity import machine_decided, mark_machine, run_fidelity, with_fidelity
from gradcode.figures.runs import data_note, read_runs, stand_in_suffix
from gradcode.pipeline import paths
from gradcode.runfile.config import load_config
from gradcode.runfile.experiment import load_experiment
from gradcode.runlogs.log import read_log
from gradcode.runlogs.timings import link_floor, predicted_links_time
from gradcode.timing.links import FLOAT, message_time
from gradcode.topology import topology_of
from gradcode.train.protocol import H

# %% tags=["parameters"]
runs = ""
experiment = "config/experiments/cluster/coded-reduce-n14.yaml"
png = paths.fill(paths.FIGURE, "cluster_coded_reduce_n14")
comparison = paths.fill(paths.FIGURE_COMPARISON, "cluster_coded_reduce_n14")

# %%
style.setup()
setting = load_experiment(experiment)
paper_speedups = setting.paper.get("speedups", {})
paper_figure = setting.paper.get("figure", "the paper")
paper_setting = setting.paper.get("setting", "its setting")
records = read_runs(runs)
SKIP = 1  # the first iteration also sets up the connections
results = {}
for run in records:
    folder = run.path.parent
    code = build(run.summary["scheme"], **run.params)
    links = load_config(folder / "run.yaml").network.links
    features = run.summary["data"]["features"]
    log = read_log(folder)[SKIP:]
    # the ways the run's model went and its results came (summary.json; trees and rings: isend,
    # push)
    way = run.summary.get("distribution", {}).get("way", "isend")
    got = run.summary.get("collection", {}).get("way", "push")
    result = {
        "run": run,
        "code": code,
        "measured": np.array([r["iteration_time"] for r in log]),
        "predicted": np.array(
            [
                predicted_links_time(code, r, links, features, distribution=way, collection=got)
                for r in log
            ]
        ),
    }
    topology = topology_of(code)
    if topology.collects_results:
        result["floor"] = np.array([link_floor(code, r, links, features).total for r in log])
    if topology.direct:
        result["after_download"] = np.array(
            [predicted_after_download(code, r, links, features, collection=got) for r in log]
        )
        pairs = [message_transfers(code, r, links, features, collection=got) for r in log]
        result["transfer"] = np.concatenate([p[0] for p in pairs])
        result["transfer_model"] = np.concatenate([p[1] for p in pairs])
    steps = [m.get("step_time", 0.0) for r in log for m in r["messages"]]
    ring = topology.ring(code)
    if ring is not None and any(steps):
        # the explicit ring: each worker's time over its 2 (N - 1) steps, per step
        result["step"] = np.array(steps) / ring.rounds()
    results[run.short_name] = result
order = [name for name in ("UMW", "GC", "SGD", "RAR", "RAR-mpi", "CR") if name in results]
order += sorted(set(results) - set(order))
links = load_config(records[0].path.parent / "run.yaml").network.links
features = records[0].summary["data"]["features"]
workers = max(result["code"].n for result in results.values())
idle = message_time(FLOAT * features + FLOAT * H, links.rate, links.master_rate, links.latency)

# %%
figure, (bars, incast, steps_axis) = plt.subplots(1, 3, figsize=(16, 4.6), width_ratios=[1.5, 1, 1])
x = np.arange(len(order))
bars.bar(x - 0.27, [results[n]["measured"].mean() for n in order], 0.27, label="measured")
bars.bar(x, [results[n]["predicted"].mean() for n in order], 0.27, label="shared-links model")
bars.bar(
    x + 0.27,
    [results[n].get("after_download", np.array([np.nan])).mean() for n in order],
    0.27,
    label="model after the measured download (flat)",
)
floors = [results[n].get("floor", np.array([np.nan])).mean() for n in order]
bars.plot(x - 0.27, floors, "r_", ms=12, mew=2, label="link-limited floor (flat, tree)")
mark_machine(
    bars,
    x - 0.27,
    [results[n]["measured"].mean() for n in order],
    [machine_decided(results[n]["run"].summary) for n in order],
)
bars.set_xticks(x, order)
bars.set_yscale("log")
bars.set_ylabel("mean time per iteration (s)")
bars.set_title(f"per scheme, N = {workers} (after the first iteration)")
bars.legend(fontsize=8)
flat = [name for name in order if "transfer" in results[name] and results[name]["transfer"].size]
for name in flat:
    measured = np.sort(results[name]["transfer"])
    incast.plot(measured / idle, np.linspace(0, 1, measured.size), label=f"{name} measured")
    model = np.sort(results[name]["transfer_model"])
    incast.plot(model / idle, np.linspace(0, 1, model.size), "--", lw=1, label=f"{name} model")
incast.axvline(1, color="k", lw=0.8)
incast.set_xscale("log")
incast.set_xlabel("result message transfer / one message on idle links")
incast.set_ylabel("fraction of messages")
incast.set_title("incast at the master's link")
incast.legend(fontsize=7)
rings = [name for name in order if "step" in results[name]]
chunk = message_time(FLOAT * features / workers, links.rate, links.rate, links.latency)
for name in rings:
    step = np.sort(results[name]["step"])
    steps_axis.plot(step * 1e3, np.linspace(0, 1, step.size), label=f"{name}: per worker")
steps_axis.axvline(chunk * 1e3, color="k", lw=0.8, label="model: one chunk on its link")
steps_axis.set_xlabel("mean time per ring step (ms)")
steps_axis.set_title("explicit ring: 2(N - 1) steps per iteration")
steps_axis.legend(fontsize=7)
dilations = sorted({float(run_fidelity(r.summary)[0] or 1) for r in records})
figure.suptitle(
    f"CodedReduce's comparison on the emulated network: N = {workers}, every link "
    f"{links.rate_text}, time dilation {'/'.join(f'{k:g}' for k in dilations)} - "
    f"{data_note(records)}"
)
style.save(figure, png)

# %%
PAPER = "001 (CodedReduce)"
item = f"N = {workers} on real links"
rows = []


def add(row: Comparison, *names: str) -> None:
    """``row`` with the dilation and fidelity verdict of the named schemes' runs."""
    rows.append(with_fidelity(row, [results[name]["run"].summary for name in names]))


for name in order:
    result = results[name]
    add(
        Comparison(
            PAPER,
            item,
            f"{name}: mean time per iteration (s), measured vs shared-links model",
            float(result["predicted"].mean()),
            float(result["measured"].mean()),
            "emulated network",
            f"{result['measured'].size} iterations after the first"
            + stand_in_suffix([result["run"]]),
        ),
        name,
    )
    if "floor" in result:
        add(floor_comparison(PAPER, item, name, result, "emulated network"), name)
    if "after_download" in result:
        add(
            Comparison(
                PAPER,
                item,
                f"{name}: mean time per iteration (s), measured vs the model after the "
                "measured download",
                float(result["after_download"].mean()),
                float(result["measured"].mean()),
                "emulated network",
                "paper value: shared-links model from each worker's logged start",
            ),
            name,
        )
    if "transfer" in result and result["transfer"].size:
        add(
            Comparison(
                PAPER,
                item,
                f"{name}: mean result message transfer / one message on idle links (incast)",
                float(result["transfer_model"].mean() / idle),
                float(result["transfer"].mean() / idle),
                "emulated network",
                f"paper value: the shared-links model for the logged readiness; one message on "
                f"idle links {idle * 1e3:.3g} ms",
            ),
            name,
        )
    if "step" in result:
        add(
            Comparison(
                PAPER,
                item,
                f"{name}: mean time per ring step (ms), measured vs one chunk on its link",
                chunk * 1e3,
                float(result["step"].mean() * 1e3),
                "emulated network",
                f"{FLOAT * features / workers:.0f}-byte chunks; a step also waits for the left "
                "neighbour to reach it",
            ),
            name,
        )
if "CR" in results:
    cr = results["CR"]
    for name in order:
        if name == "CR":
            continue
        baseline = name.split("-")[0]
        paper = paper_speedups.get(baseline, float("nan"))
        for what, key in (("measured", "measured"), ("shared-links model", "predicted")):
            speedup = results[name][key].mean() / cr[key].mean()
            add(
                Comparison(
                    PAPER,
                    item,
                    f"CR's speedup over {name} per iteration ({what})",
                    paper,
                    float(speedup),
                    "emulated network",
                    f"paper value: {paper_figure}'s speedup to a target error ({paper_setting}); "
                    "here time per iteration ratio, "
                    + (f"{name} ahead of CR" if speedup < 1 else "CR ahead")
                    + (" (SGD's iterates differ)" if baseline == "SGD" else ""),
                ),
                name,
                "CR",
            )
write_rows(comparison, rows)
