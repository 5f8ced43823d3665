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
# # Byzantine workers in simulation: one gradient step under every attack, every defence
#
# `gradcode analyze byzantine-aggregation`: 15 workers, 1 and 2 liars, every attack of
# gradcode.attacks (and reversed x100, constant 1000), logistic-regression gradients on a
# seeded synthetic data set, random liar placements. Defences: each code's own decoder
# (uncoded's sum: none; DRACO's repetition and cyclic codes and paper 004's code designed for
# a = 1 and 2; DETOX's and ByzShield's votes), and every aggregator of gradcode.aggregators
# over uncoded's gradients and over DETOX's and ByzShield's votes. Each cell: the step's mean
# relative error to the honest gradient (colour, log scale); "exact" where every step was
# exact (<= 1e-8), "det." with the fraction of steps detected (grey: all of them), "ref."
# where the combination is refused (e.g. Bulyan on DETOX's 5 votes), "*" where the liars
# exceed what the aggregator tolerates.

# %%
import math

import matplotlib.pyplot as plt
import numpy as np

from gradcode.figures import style
from gradcode.figures.compare import Comparison, write_rows
from gradcode.figures.tables import read_rows, read_sidecar
from gradcode.pipeline import paths

# %% tags=["parameters"]
table = paths.fill(paths.ANALYSIS, "byzantine-aggregation")
png = paths.fill(paths.FIGURE, "byzantine_aggregation")
comparison = paths.fill(paths.FIGURE_COMPARISON, "byzantine_aggregation")

# %%
style.setup()
rows = read_rows(table)
meta = read_sidecar(table)
patterns = meta["patterns_per_cell"]
random = [row for row in rows if row["placement"] == "random"]


def label(row):
    """The defence of a row: scheme (design a where it decodes), + aggregator."""
    name = row["scheme"]
    if row["aggregator"]:
        return f"{name} + {row['aggregator']}"
    if row["defence"] == "none":
        return f"{name} (no defence)"
    return f"{name} (a={row['design_a']})"


def attack(row):
    params = row["attack_params"].strip("{}").replace('"', "")
    return f"{row['attack']}\n{params}\nliars={row['liars']}"


defences = list(dict.fromkeys(label(row) for row in random))
columns = sorted(dict.fromkeys(attack(row) for row in random), key=lambda c: c[-1])
grid = np.full((len(defences), len(columns)), np.nan)
notes = {}
for row in random:
    i, j = defences.index(label(row)), columns.index(attack(row))
    if row["refused"]:
        notes[i, j] = "ref."
        continue
    if row["detected_fraction"] == 1:
        notes[i, j] = "det."
        continue
    error = row["mean_rel_error"]
    grid[i, j] = math.log10(max(error, 1e-16))
    text = "exact" if row["exact_fraction"] == 1 else f"{error:.2g}"
    text += "*" if row["aggregator"] and row["tolerated"] != "yes" else ""
    if row["detected_fraction"] > 0:
        text += f"\ndet. {row['detected_fraction']:.0%}"
    notes[i, j] = text

figure, axis = plt.subplots(figsize=(1.0 * len(columns) + 3, 0.32 * len(defences) + 1.5))
colours = plt.get_cmap("viridis").copy()
colours.set_bad("0.85")  # refused or always detected: no step to measure
image = axis.imshow(grid, cmap=colours, aspect="auto", vmin=-16, vmax=2)
axis.grid(False)
for (i, j), text in notes.items():
    dark = not np.isnan(grid[i, j]) and grid[i, j] < -3
    axis.text(j, i, text, ha="center", va="center", fontsize=6, color="white" if dark else "black")
axis.set_xticks(range(len(columns)), columns, fontsize=6)
axis.set_yticks(range(len(defences)), defences, fontsize=7)
figure.colorbar(image, ax=axis, label="log10 mean relative error of the step")
axis.set_title(
    f"One step, n = 15, random liars ({patterns} placements a cell; "
    "* beyond the aggregator's tolerance)",
    fontsize=9,
)
style.save(figure, png)

# %%
KIND = "simulation"
NOTE = f"{patterns} random placements a cell, logistic gradients, every attack"
#: scheme -> (paper, item) whose exactness claim its decoder's rows check
CLAIMS = {
    "draco-repetition": ("DRACO (Chen et al., ICML 2018)", "repetition code, 2a + 1 copies"),
    "draco-cyclic": ("DRACO (Chen et al., ICML 2018)", "cyclic code, Sec. 4.2"),
    "heterogeneous": ("004 (heterogeneous GC)", "Theorem 1 (r >= s + 2a + 1)"),
    "detox": ("DETOX (Rajput et al., NeurIPS 2019)", "majority vote, (r - 1) / 2 liars"),
    "byzshield": ("ByzShield (Konstantinidis & Ramamoorthy, 2021)", "vote per file"),
}
decoded = [r for r in rows if r["defence"] == "decoder" and not r["refused"]]
out = []
for scheme, (paper, item) in CLAIMS.items():
    within = [r for r in decoded if r["scheme"] == scheme and r["liars"] <= r["design_a"]]
    if not within:
        continue
    out.append(
        Comparison(
            paper,
            item,
            "fraction of steps exact with <= a liars (lowest over attacks and designs)",
            1.0,
            min(r["exact_fraction"] for r in within),
            KIND,
            f"{NOTE}; liars named exactly in {min(r['named_fraction'] for r in within):.0%}; "
            f"largest relative error {max(r['max_rel_error'] for r in within):.1e}",
        )
    )

aggregated = [r for r in rows if r["aggregator"] and not r["refused"]]
tolerated = [r for r in aggregated if r["tolerated"] == "yes" and r["max_rel_error"] != ""]
beyond = [r for r in aggregated if r["tolerated"] != "yes" and r["max_rel_error"] != ""]
undefended = [r for r in rows if r["defence"] == "none"]
out.append(
    Comparison(
        "robust aggregators (median, trimmed mean, Krum, geometric median, Bulyan)",
        "error bounds within the tolerated liars",
        "largest mean relative error of the step within tolerance",
        "bounded by the honest values' spread (no number for this setting)",
        max(r["mean_rel_error"] for r in tolerated),
        KIND,
        f"{NOTE}; no defence: up to {max(r['mean_rel_error'] for r in undefended):.3g}; "
        f"beyond tolerance: up to {max(r['mean_rel_error'] for r in beyond):.3g}"
        if beyond
        else NOTE,
    )
)
# beyond the votes' a: the vote alone against the vote followed by an aggregator
voted = [
    r
    for r in aggregated
    if r["defence"] == "vote + aggregator"
    and r["liars"] > r["design_a"]
    and r["tolerated"] == "yes"
]
voting = {r["scheme"] for r in voted}
alone = [
    r
    for r in decoded
    if r["scheme"] in voting and r["liars"] > r["design_a"] and r["max_rel_error"] != ""
]
if voted and alone:
    best = min((r for r in voted if r["max_rel_error"] != ""), key=lambda r: r["max_rel_error"])
    worst = max(alone, key=lambda r: r["mean_rel_error"])
    out.append(
        Comparison(
            "DETOX (Rajput et al., NeurIPS 2019)",
            "vote then robust aggregation",
            "beyond a: largest mean relative error of the vote alone, vs the best vote + "
            "aggregator's largest",
            "aggregation after the vote is more robust (no number for this setting)",
            f"{worst['mean_rel_error']:.3g} vs {best['max_rel_error']:.3g}",
            KIND,
            f"{NOTE}; vote alone: {label(worst)}, {worst['placement']} placement; best: "
            f"{label(best)}, {best['placement']} placement",
        )
    )
write_rows(comparison, out)
