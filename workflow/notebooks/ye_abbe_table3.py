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
# # Paper 000 (Ye & Abbe), Table 3: E[T_tot] for every (d, m)
#
# Monte Carlo of the paper's Section 5 model (n = k = 8, lambda1 = 0.8, lambda2 = 0.1,
# t1 = 1.6, t2 = 6, s = d - m); completion times come from the ye-abbe code's own decodability
# rule. Markers: reproduced; crosses: the paper's Table 3.

# %%
import matplotlib.pyplot as plt

from gradcode.figures import style
from gradcode.figures.compare import Comparison, write_rows
from gradcode.figures.tables import group_by, read_rows
from gradcode.pipeline import paths

# %% tags=["parameters"]
table = paths.fill(paths.SIMULATION, "ye-abbe-table3")
png = paths.fill(paths.FIGURE, "ye-abbe-table3")
comparison = paths.fill(paths.FIGURE_COMPARISON, "ye-abbe-table3")

# %%
style.setup()
rows = read_rows(table)
trials = rows[0]["trials"]
figure, axis = plt.subplots(figsize=(7, 4.5))
for m, cells in sorted(group_by(rows, "m").items()):
    d = [cell["d"] for cell in cells]
    (line,) = axis.plot(d, [cell["mean_time"] for cell in cells], marker="o", label=f"m = {m}")
    axis.plot(d, [cell["reference_time"] for cell in cells], "x", color=line.get_color())
axis.set_xlabel("computation load d")
axis.set_ylabel("E[T_tot]")
axis.set_title(f"Ye & Abbe Table 3 (o reproduced, {trials:,} trials; x paper)")
axis.legend(ncol=2, fontsize=8)
style.save(figure, png)

# %%
best = min(rows, key=lambda cell: cell["mean_time"])
uncoded = next(cell for cell in rows if cell["d"] == 1 and cell["m"] == 1)
best_m1 = min((cell for cell in rows if cell["m"] == 1), key=lambda cell: cell["mean_time"])
paper_best, paper_uncoded, paper_m1 = 21.3697, 36.1138, 24.1063
worst = max(rows, key=lambda cell: abs(cell["mean_time"] / cell["reference_time"] - 1))
paper, item, kind = "000 (Ye & Abbe)", "Table 3", "simulation"
write_rows(
    comparison,
    [
        Comparison(paper, item, "optimal (d, m)", "(4, 3)", f"({best['d']}, {best['m']})", kind),
        Comparison(
            paper,
            item,
            "E[T_tot] at d = 4, m = 3",
            paper_best,
            next(c["mean_time"] for c in rows if (c["d"], c["m"]) == (4, 3)),
            kind,
        ),
        Comparison(
            paper, item, "E[T_tot] uncoded (d = m = 1)", paper_uncoded, uncoded["mean_time"], kind
        ),
        Comparison(
            paper,
            item,
            "speed-up of the optimum over uncoded (%)",
            100 * (1 - paper_best / paper_uncoded),
            100 * (1 - best["mean_time"] / uncoded["mean_time"]),
            kind,
        ),
        Comparison(
            paper,
            item,
            "speed-up over the best m = 1 code (%)",
            100 * (1 - paper_best / paper_m1),
            100 * (1 - best["mean_time"] / best_m1["mean_time"]),
            kind,
            f"best m = 1 code reproduced at d = {best_m1['d']}",
        ),
        Comparison(
            paper,
            item,
            f"worst of 36 cells (d = {worst['d']}, m = {worst['m']})",
            worst["reference_time"],
            worst["mean_time"],
            kind,
        ),
    ],
)
