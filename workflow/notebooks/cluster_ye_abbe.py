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
# # Paper 000 (Ye & Abbe) on the emulated network
#
# One notebook for the experiments cluster-ye-abbe-n8 (Table 3's optimum (d, s, m) =
# (4, 1, 3), the uncoded scheme and the best m = 1 code (8, 7, 1)) and cluster-ye-abbe-figs34
# (Figs. 3 and 4: per n = 10, 15, 20 the uncoded scheme, the best m = 1 code and the two best
# m > 1 codes), grouped by the codes' n. One MPI rank per node, real TCP over links rated so
# that a full gradient's transfer takes the model's mean communication time E[T2]; only the
# model's computation (T1) is injected. Every iteration is set beside the `shared-links`
# model's prediction for that iteration's logged computation
# (`gradcode.runlogs.timings.predicted_links_time`: the model sent to the workers the run's way,
# `summary.json`'s `distribution`: a copy each through the master's link, or scattered and
# forwarded among them; the results sharing the master's link, all of them or, pulled
# (`summary.json`'s `collection`), only those the code needs), and the paper's Section 5
# expectation (Table 3's parameters, k = n, no shared master link: the experiment's
# `paper.expected_units`) is shown for reference. A third number replaces the model's
# download by the measured one (each worker's logged start,
# `gradcode.figures.cluster.predicted_after_download`): the model shares the master's link
# fairly, so every worker gets the model at once, at the end, while over TCP they get it one
# after another and the first results flow in while others still download. The red mark is
# every run's link-limited floor (`gradcode.runlogs.timings.link_floor`: one copy of the model
# through a worker's link, the longest logged work among the results the decoder used, and
# those results through the master's port): what no runtime could beat on these links.
#
# Per n, the time the paper's optimum (the lowest E[T]) saves over the uncoded scheme and over
# the best m = 1 code, measured and by the shared-links model, beside the paper's claim where
# the experiment gives one (`paper.claims`: Figs. 3/4's "at least 32 %" and "at least 23 %"),
# else beside what paper 000's E[T] implies.

# %%
import matplotlib.pyplot as plt
import numpy as np

from gradcode.codes import build
from gradcode.figures import style
from gradcode.figures.cluster import (
    by_workers,
    floor_comparison,
    iteration_times,
    reference_codes,
    time_saved,
)
from gradcode.figures.compare import Comparison, write_rows
from gradcode.figures.fidelity import row_fidelity
from gradcode.figures.runs import data_note, read_runs, stand_in_suffix
from gradcode.pipeline import paths
from gradcode.runfile.config import load_config
from gradcode.runfile.experiment import load_experiment
from gradcode.runlogs.log import read_log

# %% tags=["parameters"]
runs = ""
experiment = "config/experiments/cluster/ye-abbe-n8.yaml"
png = paths.fill(paths.FIGURE, "cluster_ye_abbe_n8")
comparison = paths.fill(paths.FIGURE_COMPARISON, "cluster_ye_abbe_n8")

# %%
PAPER = "000 (Ye & Abbe)"
KIND = "emulated network"
SKIP = 1  # the first iteration also sets up the connections
#: the roles of reference_codes the paper compares its optimum with -> the claim's key
CLAIMS = {"uncoded": "faster_than_uncoded", "m1": "faster_than_m1"}

style.setup()
setting = load_experiment(experiment)
expected_units = setting.paper["expected_units"]
claims = setting.paper.get("claims", {})
codes_label = setting.paper.get("codes", "Table 3 codes")
records = read_runs(runs)
results = {}
codes = {}
for run in records:
    folder = run.path.parent
    code = build(run.summary["scheme"], **run.params)
    links = load_config(folder / "run.yaml").network.links
    way = run.summary.get("distribution", {}).get("way", "isend")  # the model's way to them
    features = run.summary["data"]["features"]
    collected = run.summary.get("collection", {}).get("way", "push")  # its results' way
    log = read_log(folder)[SKIP:]
    times = iteration_times(code, log, links, features, distribution=way, collection=collected)
    codes[run.short_name] = code
    results[run.short_name] = times | {
        "run": run,
        "paper": expected_units.get(run.short_name, float("nan")) * run.time_unit,
    }
groups = by_workers(codes)
# per n, slowest first by the model
orders = {
    n: sorted(names, key=lambda name: -results[name]["predicted"].mean())
    for n, names in groups.items()
}
unit = records[0].time_unit

# %%
figure, axes = plt.subplots(
    2, len(orders), figsize=(6.5 * len(orders), 9), squeeze=False, layout="constrained"
)
for column, (n, order) in enumerate(orders.items()):
    top, bottom = axes[0, column], axes[1, column]
    x = np.arange(len(order))
    mean = {
        key: [results[name][key].mean() for name in order]
        for key in ("measured", "predicted", "after_download", "floor")
    }
    top.bar(x - 0.27, mean["measured"], 0.27, label="measured")
    top.bar(x, mean["predicted"], 0.27, label="shared-links model")
    top.bar(x + 0.27, mean["after_download"], 0.27, label="model after the measured download")
    top.plot(x, [results[name]["paper"] for name in order], "k_", ms=18, label="paper 000's E[T]")
    top.plot(x - 0.27, mean["floor"], "r_", ms=12, mew=2, label="link-limited floor")
    top.set_xticks(x, order, fontsize=8)
    top.set_ylabel("mean time per iteration (s)")
    top.set_title(f"n = {n} (after the first iteration)")
    top.legend(fontsize=7)
    for color, name in zip(
        ("tab:gray", "tab:blue", "tab:orange", "tab:green"), order, strict=False
    ):
        result = results[name]
        steps = np.arange(SKIP, SKIP + result["measured"].size)
        bottom.plot(steps, result["measured"], ".-", color=color, label=f"{name} measured")
        bottom.plot(steps, result["predicted"], "--", color=color, lw=1, label=f"{name} model")
        bottom.plot(steps, result["floor"], ":", color=color, lw=1, label=f"{name} floor")
    bottom.set_xlabel("iteration")
    bottom.set_ylabel("time per iteration (s)")
    bottom.set_title(f"n = {n}: every iteration beside the model for its logged computation")
    bottom.legend(fontsize=6, ncol=2)
links = load_config(records[0].path.parent / "run.yaml").network.links
figure.suptitle(
    f"Ye & Abbe, n = {', '.join(map(str, orders))}, on the emulated network "
    f"({links.rate_text} per worker, master {links.master_rate_text}; "
    f"1 model unit = {unit * 1e3:g} ms) - {data_note(records)}"
)
style.save(figure, png)

# %%
rows = []
for n, order in orders.items():
    item = f"{codes_label} at n = {n}, real links"
    for name in order:
        result = results[name]
        rows.append(
            Comparison(
                PAPER,
                item,
                f"{name}: mean time per iteration (s), measured vs shared-links model",
                float(result["predicted"].mean()),
                float(result["measured"].mean()),
                KIND,
                f"{result['measured'].size} iterations after the first; paper 000's E[T] "
                f"{result['paper']:.4g} s (Table 3's model, no shared master link)"
                + stand_in_suffix([result["run"]]),
            )
        )
        rows.append(floor_comparison(PAPER, item, name, result, KIND))
        rows.append(
            Comparison(
                PAPER,
                item,
                f"{name}: mean time per iteration (s), measured vs the model after the "
                "measured download",
                float(result["after_download"].mean()),
                float(result["measured"].mean()),
                KIND,
                "paper value: shared-links model from each worker's logged start (when it had "
                "the model), the results sharing the master's link; messages never received "
                "left out",
            )
        )
    roles = reference_codes({name: codes[name] for name in order}, expected_units)
    best = roles["optimum"]
    for role, claim_key in CLAIMS.items():
        other = roles[role]
        if other is None or other == best:
            continue
        implied = time_saved(results[best]["paper"], results[other]["paper"])
        if claim_key in claims:
            paper_value = float(claims[claim_key])
            note = (
                f"paper value: the paper's claim ({claim_key}: at least {paper_value:.0%} on "
                f"EC2); paper 000's E[T] (Table 3's model, k = n = {n}) implies {implied:.1%}"
            )
        else:
            paper_value = implied
            note = f"paper value: from paper 000's E[T] (Table 3's model, k = n = {n})"
        for what, key in (("measured", "measured"), ("shared-links model", "predicted")):
            saved = time_saved(results[best][key].mean(), results[other][key].mean())
            rows.append(
                Comparison(
                    PAPER,
                    item,
                    f"time saved by {best} over {other} ({what})",
                    paper_value,
                    float(saved),
                    KIND,
                    note,
                )
            )
write_rows(comparison, rows, row_fidelity(r.summary for r in records))
