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
# # Paper 000 (Ye & Abbe) at n = 8 on the emulated network
#
# Table 3's optimum (d, s, m) = (4, 1, 3), the uncoded scheme and the best m = 1 code
# (8, 7, 1), one MPI rank per node, real TCP over links rated so that a full gradient's
# transfer takes the model's mean communication time E[T2]. Only the model's computation
# (T1) is injected. Every iteration is set beside the `shared-links` model's prediction for
# that iteration's logged computation (`gradcode.train.timings.predicted_links_time`: the
# model sent to every worker through the master's link, the results sharing it), and the
# paper's Section 5 expectation (Table 3's parameters, no shared master link) is shown for
# reference. A third number replaces the model's download by the measured one (each worker's
# logged start, `gradcode.figures.cluster.predicted_after_download`): the model shares the
# master's link fairly, so every worker gets the model at once, at the end, while over TCP
# they get it one after another and the first results flow in while others still download.

# %%
import matplotlib.pyplot as plt
import numpy as np

from gradcode.codes import build
from gradcode.figures import style
from gradcode.figures.cluster import predicted_after_download
from gradcode.figures.compare import Comparison, write_rows
from gradcode.figures.runs import data_note, read_runs, stand_in_suffix
from gradcode.train.config import load_config
from gradcode.train.experiment import load_experiment
from gradcode.train.log import read_log
from gradcode.train.timings import predicted_links_time

# %% tags=["parameters"]
runs = ""
experiment = "config/experiments/cluster/ye-abbe-n8.yaml"
png = "results/figures/cluster_ye_abbe_n8.png"
comparison = "results/tables/compare/cluster_ye_abbe_n8.csv"

# %%
style.setup()
setting = load_experiment(experiment)
expected_units = setting.paper["expected_units"]
records = read_runs(runs)
SKIP = 1  # the first iteration also sets up the connections
results = {}
for run in records:
    folder = run.path.parent
    code = build(run.summary["scheme"], **run.params)
    links = load_config(folder / "run.yaml").network.links
    features = run.summary["data"]["features"]
    log = read_log(folder)[SKIP:]
    measured = np.array([r["iteration_time"] for r in log])
    predicted = np.array([predicted_links_time(code, r, links, features) for r in log])
    after = np.array([predicted_after_download(code, r, links, features) for r in log])
    results[run.short_name] = {
        "run": run,
        "measured": measured,
        "predicted": predicted,
        "after_download": after,
        "paper": expected_units.get(run.short_name, float("nan")) * run.time_unit,
    }
order = sorted(results, key=lambda name: -results[name]["predicted"].mean())
unit = records[0].time_unit

# %%
figure, (left, right) = plt.subplots(1, 2, figsize=(13, 4.6), width_ratios=[1, 1.4])
x = np.arange(len(order))
left.bar(x - 0.27, [results[n]["measured"].mean() for n in order], 0.27, label="measured")
left.bar(x, [results[n]["predicted"].mean() for n in order], 0.27, label="shared-links model")
left.bar(
    x + 0.27,
    [results[n]["after_download"].mean() for n in order],
    0.27,
    label="model after the measured download",
)
left.plot(x, [results[n]["paper"] for n in order], "k_", ms=18, label="paper 000's E[T]")
left.set_xticks(x, order)
left.set_ylabel("mean time per iteration (s)")
left.set_title("per code (after the first iteration)")
left.legend(fontsize=8)
for color, name in zip(("tab:gray", "tab:blue", "tab:orange"), order, strict=False):
    result = results[name]
    steps = np.arange(SKIP, SKIP + result["measured"].size)
    right.plot(steps, result["measured"], ".-", color=color, label=f"{name} measured")
    right.plot(steps, result["predicted"], "--", color=color, lw=1, label=f"{name} model")
right.set_xlabel("iteration")
right.set_ylabel("time per iteration (s)")
right.set_title("every iteration beside the model for its logged computation")
right.legend(fontsize=7, ncol=2)
links = load_config(records[0].path.parent / "run.yaml").network.links
figure.suptitle(
    f"Ye & Abbe, n = 8, on the emulated network ({links.rate_text} per worker, master "
    f"{links.master_rate_text}; 1 model unit = {unit * 1e3:g} ms) - {data_note(records)}"
)
style.save(figure, png)

# %%
rows = []
for name in order:
    result = results[name]
    run = result["run"]
    rows.append(
        Comparison(
            "000 (Ye & Abbe)",
            "Table 3 codes at n = 8, real links",
            f"{name}: mean time per iteration (s), measured vs shared-links model",
            float(result["predicted"].mean()),
            float(result["measured"].mean()),
            "emulated network",
            f"{result['measured'].size} iterations after the first; paper 000's E[T] "
            f"{result['paper']:.4g} s (Table 3's model, no shared master link)"
            + stand_in_suffix([run]),
        )
    )
    rows.append(
        Comparison(
            "000 (Ye & Abbe)",
            "Table 3 codes at n = 8, real links",
            f"{name}: mean time per iteration (s), measured vs the model after the measured "
            "download",
            float(result["after_download"].mean()),
            float(result["measured"].mean()),
            "emulated network",
            "paper value: shared-links model from each worker's logged start (when it had the "
            "model), the results sharing the master's link; messages never received left out",
        )
    )
# the paper's optimum (Table 3: the lowest E[T]) against each other code
best = min(results, key=lambda name: results[name]["paper"])
for other in order:
    if other == best:
        continue
    paper = 1 - results[best]["paper"] / results[other]["paper"]
    for what, key in (("measured", "measured"), ("shared-links model", "predicted")):
        saved = 1 - results[best][key].mean() / results[other][key].mean()
        rows.append(
            Comparison(
                "000 (Ye & Abbe)",
                "Table 3 codes at n = 8, real links",
                f"time saved by {best} over {other} ({what})",
                paper,
                float(saved),
                "emulated network",
                "paper value: from paper 000's E[T] (Table 3's model, k = n = 8)",
            )
        )
write_rows(comparison, rows)
