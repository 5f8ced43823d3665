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
# # Simulation specs of the config: completion time and communication load
#
# One row of panels per spec file of `simulate.specs` (a user's own study: built-in codes, codes
# and timing models of installed plug-ins). A scheme with a published `reference` in its spec
# gets a comparison row, its paper named by the spec's `source`.

# %%
import matplotlib.pyplot as plt

from gradcode.figures import style
from gradcode.figures.compare import Comparison, write_rows
from gradcode.figures.panels import ci_bars
from gradcode.figures.tables import read_rows, read_sidecar
from gradcode.pipeline import paths

# %% tags=["parameters"]
tables = paths.fill(paths.SPEC_SIMULATION, "example")
png = paths.fill(paths.FIGURE, "simulations")
comparison = paths.fill(paths.FIGURE_COMPARISON, "simulations")

# %%
style.setup()
files = tables.split(",")
figure, axes = plt.subplots(len(files), 2, figsize=(11, 4 * len(files)), squeeze=False)
comparisons = []
for (left, right), path in zip(axes, files, strict=True):
    rows = read_rows(path)
    spec = read_sidecar(path)
    labels = [row["label"] for row in rows]
    ci_bars(left, labels, rows)
    left.set_ylabel("mean completion time")
    right.bar(labels, [row["vectors"] for row in rows])
    right.set_ylabel("full-length vectors received")
    for axis in (left, right):
        axis.tick_params(axis="x", rotation=30)
        plt.setp(axis.get_xticklabels(), ha="right")
    left.set_title(f"{spec['name']}: model {spec['model']} ({rows[0]['trials']:,} trials)")
    right.set_title("communication load")
    comparisons += [
        Comparison(
            spec.get("source") or spec["name"],
            row["label"],
            "mean completion time",
            row["reference_time"],
            row["mean_time"],
            "simulation",
            f"spec {spec['name']}, model {spec['model']}",
        )
        for row in rows
        if row.get("reference_time") not in (None, "")
    ]
style.save(figure, png)

# %%
write_rows(comparison, comparisons)
