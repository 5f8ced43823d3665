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
# # A straggling link: one node's link cut for a few seconds mid-run
#
# n = 8 workers, one MPI rank per node of the emulated cluster, real TCP over rate-limited
# links. Once the run's log holds `at_iteration` iterations, `gradcode cluster cut` takes one
# worker's link down (`ip link set gc-veth down` in its namespace) for a few seconds and puts
# it back (both moments recorded in the run's `cut.json`). The uncoded master needs every
# worker, so its iteration waits for the link (and for TCP's next retransmission after it is
# back); a code that tolerates one straggler decodes without that worker and carries on. Its
# iterates are checked against the serial uncoded trajectory
# (`gradcode.runfile.reference.serial_trajectory`): the gradient it decoded was exact.

# %%
import json

import matplotlib.pyplot as plt
import numpy as np

from gradcode.figures import style
from gradcode.figures.cluster import cut_window, relative_error, stall
from gradcode.figures.compare import Comparison, write_rows
from gradcode.figures.fidelity import row_fidelity
from gradcode.figures.runs import data_note, read_runs, stand_in_suffix
from gradcode.pipeline import paths
from gradcode.runfile.config import load_config
from gradcode.runfile.reference import serial_trajectory
from gradcode.runlogs.log import read_log

# %% tags=["parameters"]
runs = ""
experiment = "config/experiments/cluster/link-cut.yaml"
png = paths.fill(paths.FIGURE, "cluster_link_cut")
comparison = paths.fill(paths.FIGURE_COMPARISON, "cluster_link_cut")

# %%
style.setup()
records = read_runs(runs)
results = {}
for run in records:
    folder = run.path.parent
    times = [r["iteration_time"] for r in read_log(folder)]
    cut = json.loads((folder / paths.CUT_FILE).read_text())
    window = cut_window(cut)
    trajectory = np.load(folder / "trajectory.npy")
    reference = serial_trajectory(load_config(folder / "run.yaml"))
    results[run.short_name] = {
        "run": run,
        "times": times,
        "cut": cut,
        "window": window,
        "stall": stall(times, window),
        "error": relative_error(trajectory, reference),
    }

# %%
figure, (left, right) = plt.subplots(1, 2, figsize=(13, 4.6), width_ratios=[1.6, 1])
colors = ["tab:gray", "tab:orange", "tab:blue", "tab:green"]
for color, (name, result) in zip(colors, sorted(results.items()), strict=False):
    times = np.array(result["times"])
    left.semilogy(np.arange(times.size), times, ".-", color=color, label=name)
    if result["window"] is not None:
        first, last = result["window"]
        left.axvspan(first - 0.5, last + 0.5, color=color, alpha=0.15)
any_cut = next(r["cut"] for r in results.values())
left.set_xlabel("iteration")
left.set_ylabel("time per iteration (s)")
left.set_title(
    f"{any_cut['node']}'s link down {any_cut['seconds']:g} s from iteration "
    f"{any_cut['trigger'].get('at_iteration')} (shaded: iterations it overlapped)"
)
left.legend()
names = sorted(results)
right.bar(
    names,
    [max(results[n]["error"], 1e-17) for n in names],
    color=colors[: len(names)],
)
right.set_yscale("log")
right.set_ylabel("max relative distance to the serial uncoded iterates")
right.set_title("exactness of the decoded gradients")
figure.suptitle(
    f"Straggling link on the emulated network - {data_note(records)}; "
    f"n = {records[0].summary['workers']}, one rank per node"
)
style.save(figure, png)

# %%
rows = []
for name, result in sorted(results.items()):
    run, info, cut = result["run"], result["stall"], result["cut"]
    down = cut["up"]["clock"] - cut["down"]["clock"] if cut.get("up") else float("nan")
    note = (
        f"{run.summary['scheme']} {run.params}; link down {down:.2f} s (cut.json); median "
        f"iteration outside the cut {info['typical']:.3f} s; {info['during']} iterations "
        f"completed while it was down" + stand_in_suffix([run])
    )
    rows.append(
        Comparison(
            "issue 11 (links)",
            "straggling link",
            f"{name}: longest iteration during the cut (s) vs the cut's length",
            float(cut["seconds"]),
            info["longest"] if info["longest"] is not None else "not cut",
            "emulated network",
            note,
        )
    )
    rows.append(
        Comparison(
            "issue 11 (links)",
            "straggling link",
            f"{name}: max relative distance of the iterates to the serial uncoded ones",
            0.0,
            result["error"],
            "emulated network",
            f"{len(result['times'])} iterations; serial reference: "
            "gradcode.runfile.reference.serial_trajectory",
        )
    )
write_rows(comparison, rows, row_fidelity(r.summary for r in records))
assert all(r["error"] < 1e-9 for r in results.values()), {n: r["error"] for n, r in results.items()}
