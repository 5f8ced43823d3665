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

# %%
import matplotlib.pyplot as plt

from gradcode.figures import style
from gradcode.figures.compare import Comparison, write_rows
from gradcode.figures.fidelity import row_fidelity
from gradcode.figures.runs import legend_label, read_runs
from gradcode.pipeline import paths

# %% tags=["parameters"]
runs = paths.fill(paths.RUN_SUMMARY, "smoke-frc")
png = paths.fill(paths.FIGURE, "training")
comparison = paths.fill(paths.FIGURE_COMPARISON, "training")

# %%
style.setup()
records = read_runs(runs)
#: the papers' metric of a run, the first of these it logged: test AUC (logistic regression),
#: normalized error (linear regression), test accuracy (classifiers of several classes: networks)
METRICS = ("auc", "normalized_error", "accuracy")
figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
for run in records:
    times = [row["time"] for row in run.points]
    left.plot(times, [row["loss"] for row in run.points], marker=".", label=legend_label(run))
    metric = next((m for m in METRICS if any(m in row for row in run.points)), "relative_error")
    values = [row.get(metric, row.get("relative_error")) for row in run.points]
    right.plot(times, values, marker=".", label=legend_label(run))
for axis in (left, right):
    axis.set_xscale("log")  # runs differ by orders of magnitude in iteration time
left.set_xlabel("training wall-clock time (s)")
left.set_ylabel("training loss")
right.set_xlabel("training wall-clock time (s)")
right.set_ylabel("test AUC / normalized error / accuracy")
left.legend(fontsize=7)
stand_in = any(run.stand_in for run in records)
figure.suptitle(
    "Training as MPI jobs, emulated stragglers"
    + (f" - includes {style.STAND_IN_NOTE}" if stand_in else "")
)
style.save(figure, png)

# %%
comparisons = []
for run in records:
    summary, params = run.summary, run.params
    if summary["scheme"] == "ye-abbe" and (params["n"], params["d"], params["m"]) == (8, 4, 3):
        unit = summary["config"]["stragglers"]["time_unit"]
        comparisons.append(
            Comparison(
                "000 (Ye & Abbe)",
                "Table 3, d = 4, m = 3",
                f"mean time per iteration (s; 1 model unit = {unit} s)",
                21.3697 * unit,
                run.iteration_time,
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
write_rows(comparison, comparisons, row_fidelity(r.summary for r in records))
