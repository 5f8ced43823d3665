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
# # Paper 003 (binary GC), Section VI: loads for heterogeneous workers
#
# Two worker types: 6 fast workers (time per partition 0.1 + Exp(1.25), mean 0.9) and 6 slow
# ones (0.2 + Exp(0.625), mean 1.8); n = 12, s = 2, so each of the 3 congruence classes holds
# 2 fast and 2 slow workers. Section VI sizes the loads so that every worker has the same
# expected finishing time: w_j t_j equal across types with every class still covering the
# k partitions, w_j = k (s + 1) / (t_j sum_i tau_i / t_i). binary-uniform gives every worker
# the same load (Section III); binary-times sizes the loads from the times (fast 4, slow 2
# partitions). The table is `gradcode simulate binary-heterogeneous`: expected finishing
# times (exact, from the model's means) and the simulated time per iteration. The paper has
# no numerical example for this section.

# %%
from fractions import Fraction

import matplotlib.pyplot as plt
import numpy as np

from gradcode.figures import style
from gradcode.figures.compare import Comparison, write_rows
from gradcode.figures.panels import ci_bars
from gradcode.figures.tables import index_by, read_rows, read_sidecar
from gradcode.pipeline import paths

# %% tags=["parameters"]
table = paths.fill(paths.SIMULATION, "binary-heterogeneous")
png = paths.fill(paths.FIGURE, "binary_heterogeneous")
comparison = paths.fill(paths.FIGURE_COMPARISON, "binary_heterogeneous")

# %%
style.setup()
rows = read_rows(table)
spec = read_sidecar(table)
by = index_by(rows, "label")
sized = by["binary-times"]

# Section VI's equalised finishing time for the preset's two types: the paper's value
counts = spec["parameters"]["t1"]["counts"]
means = [
    Fraction(str(shift)) + 1 / Fraction(str(rate))
    for shift, rate in zip(
        spec["parameters"]["t1"]["values"], spec["parameters"]["lambda1"]["values"], strict=True
    )
]
k, s = sized["k"], sized["s"]
paper_finish = float(k * (s + 1) / sum(Fraction(c) / t for c, t in zip(counts, means, strict=True)))
paper_loads = [paper_finish / float(t) for t in means]

labels = [row["label"] for row in rows]
x = np.arange(len(rows))
figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4.3))
width = 0.38
left.bar(
    x - width / 2,
    [row["expected_finish_min"] for row in rows],
    width,
    label="least (fastest-finishing worker)",
)
left.bar(
    x + width / 2,
    [row["expected_finish_max"] for row in rows],
    width,
    label="largest (slowest-finishing worker)",
)
left.axhline(
    paper_finish,
    color="black",
    linestyle="--",
    linewidth=1,
    label=f"Sec. VI equalised value {paper_finish:g}",
)
left.set_xticks(x, labels)
left.set_ylabel("expected finishing time of a worker")
left.set_title("(a) expected finishing times (exact)")
left.legend(fontsize=8, loc="upper left")
left.set_ylim(0, 1.3 * max(row["expected_finish_max"] for row in rows))
ci_bars(right, x, rows, capsize=4)
right.set_xticks(x, labels)
right.set_ylabel("mean time per iteration (95% CI)")
right.set_title(f"(b) simulated, {rows[0]['trials']:,} trials")
figure.suptitle(
    f"Binary GC with two worker types: n = {sized['n']}, s = {s}, k = {k}; "
    f"mean times per partition {', '.join(f'{float(t):g}' for t in means)}"
)
style.save(figure, png)

# %%
paper, item = "003 (binary GC)", "Sec. VI"
uniform, uncoded = by["binary-uniform"], by["uncoded"]
write_rows(
    comparison,
    [
        Comparison(
            paper,
            item,
            "expected finishing time of every worker (times-sized loads)",
            paper_finish,
            sized["expected_finish_max"],
            "exact computation",
            f"least {sized['expected_finish_min']:g}, largest "
            f"{sized['expected_finish_max']:g}; paper's loads "
            f"{', '.join(f'{w:g}' for w in paper_loads)} per type; uniform loads give "
            f"{uniform['expected_finish_min']:g} and {uniform['expected_finish_max']:g}",
        ),
        Comparison(
            paper,
            item,
            "largest / least expected finishing time",
            1,
            sized["expected_finish_max"] / sized["expected_finish_min"],
            "exact computation",
        ),
        Comparison(
            paper,
            item,
            "time per iteration, times-sized / uniform loads",
            "not stated (the aim of Sec. VI)",
            sized["mean_time"] / uniform["mean_time"],
            "simulation",
            f"times-sized / uncoded = {sized['mean_time'] / uncoded['mean_time']:.3f}: "
            "the coded schemes compute s + 1 = 3 times the data of uncoded, which they "
            "only just recover under this model",
        ),
    ],
)
