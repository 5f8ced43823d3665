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
# # Numerical stability of decoding versus n
#
# Maximum relative decode error over random straggler patterns (against an independent sum of
# random partial gradients), for the real-valued codes and the binary code of paper 003. The
# dashed line is the 1e-8 soundness bound each scheme's `numerically_sound_up_to` refers to.

# %%
import matplotlib.pyplot as plt

from gradcode.figures import style
from gradcode.figures.compare import Comparison, write_rows
from gradcode.figures.tables import group_by, read_rows, select
from gradcode.pipeline import paths

# %% tags=["parameters"]
stability = paths.STABILITY
png = paths.fill(paths.FIGURE, "stability")
comparison = paths.fill(paths.FIGURE_COMPARISON, "stability")

# %%
style.setup()
table = read_rows(stability)
figure, axis = plt.subplots(figsize=(7, 4.5))
for family, rows in group_by(table, "family").items():
    errors = [max(row["max_relative_error"], 1e-17) for row in rows]
    axis.semilogy([row["n"] for row in rows], errors, marker=".", label=family)
axis.axhline(1e-8, color="black", linestyle="--", linewidth=1)
axis.set_xlabel("workers n (s = n // 4 stragglers)")
axis.set_ylabel("max relative decode error")
axis.set_title("Decoding error versus n (random partials, random straggler patterns)")
axis.legend(fontsize=8)
style.save(figure, png)

# %%
binary = select(table, scheme="binary")
ns = [row["n"] for row in binary]
write_rows(
    comparison,
    [
        Comparison(
            paper="003 (binary GC)",
            item="numerical exactness",
            quantity=f"max relative decode error, n = {min(ns)}..{max(ns)}",
            paper_value="exact (0/1 coefficients, no division)",
            reproduced=max(row["max_relative_error"] for row in binary),
            kind="exact computation",
            note="float round-off only; the real-valued codes are plotted beside it",
        )
    ],
)
