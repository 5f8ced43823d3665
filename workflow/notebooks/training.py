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
# # Training runs: loss and the papers' metric versus wall-clock time
#
# Real MPI jobs (one master, n workers as ranks) on one machine, stragglers emulated by injected
# delays from the papers' timing models. Runs on stand-in data are labelled STAND-IN.

# %% tags=["parameters"]
runs = "results/train/smoke-frc/summary.json"
png = "results/figures/training.png"
comparison = "results/tables/compare/training.csv"

# %%
import json
from pathlib import Path

import matplotlib.pyplot as plt

from gradcode.figures import style
from gradcode.figures.compare import Comparison, write_rows

style.setup()
summaries = [Path(path) for path in runs.split(",")]


def label(summary):
    data = summary["data"]
    tag = " (STAND-IN data)" if data.get("stand_in") else ""
    return f"{summary['name']}: {summary['scheme']} on {data['dataset']}{tag}"


records = []
for path in summaries:
    summary = json.loads(path.read_text())
    rows = [json.loads(line) for line in (path.parent / "log.jsonl").read_text().splitlines()]
    records.append((summary, [row for row in rows if "loss" in row]))

metric_of = {"logistic": "auc", "linear": "normalized_error"}
figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
for summary, rows in records:
    times = [row["time"] for row in rows]
    left.plot(times, [row["loss"] for row in rows], marker=".", label=label(summary))
    metric = metric_of[summary["model"]["kind"]]
    values = [row.get(metric, row.get("relative_error")) for row in rows]
    right.plot(times, values, marker=".", label=label(summary))
for axis in (left, right):
    axis.set_xscale("log")  # runs differ by orders of magnitude in iteration time
left.set_xlabel("training wall-clock time (s)")
left.set_ylabel("training loss")
right.set_xlabel("training wall-clock time (s)")
right.set_ylabel("test AUC (logistic) / error (linear)")
left.legend(fontsize=7)
stand_in = any(summary["data"].get("stand_in") for summary, _ in records)
figure.suptitle(
    "Training as MPI jobs, emulated stragglers"
    + (f" - includes {style.STAND_IN_NOTE}" if stand_in else "")
)
style.save(figure, png)

# %%
comparisons = []
for summary, _ in records:
    params = summary["scheme_params"]
    if summary["scheme"] == "ye-abbe" and (params["n"], params["d"], params["m"]) == (8, 4, 3):
        unit = summary["config"]["stragglers"]["time_unit"]
        comparisons.append(
            Comparison(
                "000 (Ye & Abbe)",
                "Table 3, d = 4, m = 3",
                f"mean time per iteration (s; 1 model unit = {unit} s)",
                21.3697 * unit,
                summary["iteration_time"]["mean"],
                "emulated cluster",
                f"{summary['world_size']} MPI ranks on one machine, delays from the paper's model;"
                " includes real compute and coordination",
            )
        )
    if summary["name"] == "amazon-tandon-uncoded":
        comparisons.append(
            Comparison(
                "Tandon et al. (baseline)",
                "public code, Amazon",
                "test AUC after 100 iterations, uncoded",
                0.88,
                summary["final"]["auc"],
                "emulated cluster",
            )
        )
write_rows(comparison, comparisons)
