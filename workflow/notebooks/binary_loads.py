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
# # Paper 003 (binary GC), Section V: close-to-uniform loads
#
# The binary code splits the workers into the s + 1 congruence classes mod (s + 1); every
# class holds each of the k = n partitions once. Writing n = l (s + 1) + r, the paper shows
# that the loads are uniform iff (s + 1) | n, differ by at most one inside the classes of
# equal size, and (Lemma 4) are at most 3 apart for l >= s - 2. The table
# (`gradcode analyze binary-loads`) holds the exact loads of every (n, s) with
# 2 <= n <= 60, 1 <= s < n. The paper has no load figure; the comparison rows check its
# statements on that whole grid.

# %%
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import BoundaryNorm, ListedColormap

from gradcode.figures import style
from gradcode.figures.compare import Comparison, write_rows
from gradcode.figures.tables import read_rows, select
from gradcode.pipeline import paths

# %% tags=["parameters"]
table = paths.fill(paths.ANALYSIS, "binary-loads")
png = paths.fill(paths.FIGURE, "binary_loads")
comparison = paths.fill(paths.FIGURE_COMPARISON, "binary_loads")

# %%
style.setup()
rows = read_rows(table)
n_max = max(row["n"] for row in rows)
figure, (heat, lines, groups) = plt.subplots(
    1, 3, figsize=(17, 5), gridspec_kw={"width_ratios": [1.25, 1, 1], "wspace": 0.45}
)

# (a) spread max - min over the (n, s) grid, with the boundaries of Section V's regimes
grid = np.full((n_max, n_max + 1), np.nan)
for row in rows:
    grid[row["s"], row["n"]] = row["spread"]
levels = [0, 2, 3, 4, 6, 11, 31]
colours = ListedColormap(["#2c7bb6", "#a6d96a", "#ffffbf", "#fdae61", "#f46d43", "#a50026"])
image = heat.pcolormesh(
    np.arange(n_max + 2) - 0.5,
    np.arange(n_max + 1) - 0.5,
    grid,
    cmap=colours,
    norm=BoundaryNorm(levels, colours.N),
)
bar = figure.colorbar(image, ax=heat, ticks=[1, 2.5, 3.5, 5, 8.5, 21], fraction=0.05)
bar.ax.set_yticklabels(["0", "2", "3", "4-5", "6-10", "11-30"])
bar.set_label("spread = max load - min load")
for column, label, line_style in (
    ("two_l_ge_s", "2l >= s", "-"),
    ("lemma4_spread", "l >= s - 2 (Lemma 4)", "--"),
):
    edge = {}
    for row in rows:
        inside = row[column] == "true" if column == "two_l_ge_s" else row[column] != ""
        if inside and row["divisible"] != "true":
            edge[row["s"]] = min(edge.get(row["s"], n_max + 1), row["n"])
    xs, ys = [], []
    for s in sorted(edge):
        xs += [edge[s] - 0.5, edge[s] - 0.5]
        ys += [s - 0.5, s + 0.5]
    heat.plot(
        xs, ys, color="black", linestyle=line_style, linewidth=1.3, label=f"{label} to the right"
    )
heat.set_xlim(0.5, n_max + 0.5)
heat.set_ylim(0.5, n_max - 0.5)
heat.set_xlabel("workers n")
heat.set_ylabel("stragglers s")
heat.set_title("(a) load spread, k = n")
heat.legend(loc="upper left", fontsize=8)

# (b) loads versus n for a fixed s
s_line = 4
chosen = select(rows, s=s_line)
n_values = [row["n"] for row in chosen]
lines.plot(n_values, [row["max_load"] for row in chosen], "^-", markersize=4, label="max load")
lines.plot(n_values, [row["min_load"] for row in chosen], "v-", markersize=4, label="min load")
lines.plot(n_values, [row["mean_load"] for row in chosen], "k.", label="mean load")
lines.plot(
    n_values,
    [row["ideal_load"] for row in chosen],
    "k-",
    linewidth=0.8,
    label="ideal (s + 1) k / n",
)
for row in chosen:
    if row["divisible"] == "true":
        lines.axvline(row["n"], color="grey", linewidth=0.6, linestyle=":")
lines.set_xlabel("workers n (dotted: (s + 1) | n, uniform)")
lines.set_ylabel("partitions per worker")
lines.set_title(f"(b) loads for s = {s_line}, k = n")
lines.legend(fontsize=8, loc="upper right", ncol=2)

# (c) worst spread over the remainders r, per (l, s): at most 3 exactly when 2l >= s
worst = {}
for row in rows:
    worst[(row["l"], row["s"])] = row["worst_spread_over_r"]
cells = sorted(worst.items())
points = groups.scatter(
    [2 * l / s for (l, s), _ in cells],
    [w for _, w in cells],
    c=[s for (_, s), _ in cells],
    cmap="viridis",
    s=14,
)
figure.colorbar(points, ax=groups, fraction=0.05).set_label("s")
groups.axhline(3, color="black", linewidth=1, linestyle="--")
groups.axvline(1, color="black", linewidth=1)
groups.set_xscale("log")
groups.set_yscale("log")
ticks = [2, 3, 4, 6, 10, 20, 30, 50]
groups.set_yticks(ticks, [str(t) for t in ticks])
groups.minorticks_off()
groups.set_xlabel("2 l / s (one point per (l, s))")
groups.set_ylabel("largest spread over r = 1 .. s")
groups.set_title("(c) spread <= 3 for every r iff 2l >= s")
figure.suptitle(f"Binary gradient code loads (exact), all 2 <= n <= {n_max}, 1 <= s < n")
style.save(figure, png)

# %%
paper, item, kind = "003 (binary GC)", "Sec. V", "exact computation"
pairs = len(rows)
divisible = select(rows, divisible="true")
remainder = [row for row in rows if row["divisible"] != "true"]
lemma = [row for row in remainder if row["lemma4_spread"] != ""]
lemma_bad = [row for row in lemma if row["lemma4_holds"] != "true"]
bad_text = "; ".join(
    f"n = {row['n']}, s = {row['s']} (l = {row['l']}, r = {row['r']}): loads "
    f"{row['min_load']}..{row['max_load']}, spread {row['spread']}"
    for row in lemma_bad
)
regime_max = max(row["spread"] for row in lemma)
groups_ok = all((w <= 3) == (2 * l >= s) for (l, s), w in worst.items())
small_l_within_3 = sum(
    row["two_l_ge_s"] != "true" and row["at_most_3_apart"] == "true" for row in remainder
)
widest = max(rows, key=lambda row: (row["spread"], row["n"]))
write_rows(
    comparison,
    [
        Comparison(
            paper,
            "Sec. III",
            "largest load difference inside a set of equal classes",
            1,
            max(max(row["spread_small_classes"], row["spread_large_classes"] or 0) for row in rows),
            kind,
            f"all {pairs} (n, s) with n <= {n_max}",
        ),
        Comparison(
            paper,
            "Sec. IV",
            "total load (mean load vs (s + 1) k / n)",
            "k (s + 1), as MDS codes",
            f"max |mean - ideal| = "
            f"{max(abs(row['mean_load'] - row['ideal_load']) for row in rows):g}",
            kind,
            f"all {pairs} (n, s)",
        ),
        Comparison(
            paper,
            "Def. 2",
            "loads uniform iff (s + 1) | n",
            "iff",
            "holds"
            if all((row["spread"] == 0) == (row["divisible"] == "true") for row in rows)
            else "fails",
            kind,
            f"{len(divisible)} divisible of {pairs} pairs",
        ),
        Comparison(
            paper,
            "Prop. 3",
            "spread = least over class-partitioning assignments",
            "optimal",
            f"{sum(row['spread'] == row['spread_lower_bound'] for row in rows)}"
            f" of {pairs} pairs at the bound ceil(k / l) - floor(k / c_max)",
            kind,
            "our reading: the proposition's statement was lost in the extraction",
        ),
        Comparison(
            paper,
            "Lemma 4",
            "spread for l >= s - 2, r > 0",
            "2; 3 iff (l, r) = (s - 1, s) or l = s - 2, r in {1, s - 1, s}",
            f"{len(lemma) - len(lemma_bad)} of {len(lemma)} pairs as predicted",
            kind,
            f"exception: {bad_text}" if lemma_bad else "",
        ),
        Comparison(
            paper,
            item,
            "loads at most 3 apart for l >= s - 2",
            3,
            regime_max,
            kind,
            "3 everywhere except the Lemma 4 exception" if lemma_bad else "",
        ),
        Comparison(
            paper,
            item,
            "loads at most 3 apart for every r iff 2l >= s",
            "not stated (extends Sec. V-A)",
            f"{'holds' if groups_ok else 'fails'} on all {len(worst)} (l, s) groups",
            kind,
            "per (n, s), 2l >= s is sufficient, not necessary: "
            f"{small_l_within_3} pairs with 2l < s and r > 0 still have spread <= 3",
        ),
        Comparison(
            paper,
            item,
            "wide range when l is small against s",
            "drawback (l small)",
            f"spread {widest['spread']} at n = {widest['n']}, s = {widest['s']} "
            f"(l = {widest['l']}): loads {widest['min_load']}..{widest['max_load']}",
            kind,
        ),
    ],
)
