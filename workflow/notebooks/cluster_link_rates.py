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
# # The emulated network's links: message time vs rate, beside the shared-links model
#
# The link probe (`python -m gradcode.train.linkprobe`, one rank per node, MPICH on TCP) at
# every rate of config `cluster.links.rates` on one cluster: `gradcode cluster rate` sets every
# node's link, the master's node's too, to the rate for the length of the probe and puts the
# cluster's own rates back after it (rule `cluster_link_rates`, one job holding every node).
# Each median is set beside the `shared-links` model's `bytes / rate` at the stated rate
# (dashed) and at the payload's share of it (solid: `tc tbf` counts whole frames, and TCP
# carries about 95.6 % of them as payload). The links do what they say if the fitted payload
# rate is within 5 % of the stated one at every rate.

# %%
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import NullFormatter

from gradcode.figures import style
from gradcode.figures.cluster import PAYLOAD_FRACTION, read_sweep, sweep_fits, sweep_rows
from gradcode.figures.compare import Comparison, write_rows
from gradcode.pipeline import paths

# %% tags=["parameters"]
sweep = paths.CLUSTER_LINK_RATES
png = paths.fill(paths.FIGURE, "cluster_link_rates")
comparison = paths.fill(paths.FIGURE_COMPARISON, "cluster_link_rates")

# %%
style.setup()
probes = read_sweep(sweep)
rows = sweep_rows(probes)
fits = sweep_fits(probes)
mbit = lambda rate: rate * 8 / 1e6  # noqa: E731
sizes = sorted({r["bytes"] for r in rows})
directions = [d for d in ("up", "down") if any(r["direction"] == d for r in rows)]

# %%
figure, (left, middle, right) = plt.subplots(1, 3, figsize=(16, 4.6))
colors = dict(zip(sizes, plt.cm.viridis(np.linspace(0, 0.85, len(sizes))), strict=True))
markers = {"up": "o", "down": "s"}
for size in sizes:
    for direction in directions:
        mine = [r for r in rows if r["bytes"] == size and r["direction"] == direction]
        rates = [mbit(r["stated"]) for r in mine]
        fill = colors[size] if direction == "up" else "none"
        left.loglog(
            rates, [r["time"] for r in mine], markers[direction], color=colors[size], mfc=fill
        )
        middle.semilogx(
            rates,
            [r["ratio_frames"] for r in mine],
            markers[direction] + "-",
            color=colors[size],
            mfc=fill,
            lw=0.8,
        )
    model = [r for r in rows if r["bytes"] == size and r["direction"] == directions[0]]
    rates = [mbit(r["stated"]) for r in model]
    left.plot(rates, [r["predicted"] for r in model], "--", color=colors[size], lw=0.8)
    left.plot(
        rates,
        [r["predicted_frames"] for r in model],
        "-",
        color=colors[size],
        lw=0.8,
        label=f"{size / 1024:g} KiB",
    )
for direction in directions:
    fill = "0.4" if direction == "up" else "none"
    left.plot([], [], markers[direction], color="0.4", mfc=fill, label=f"{direction}: median")
left.plot([], [], "k--", lw=0.8, label="model, stated rate")
left.plot([], [], "k-", lw=0.8, label=f"model, payload {PAYLOAD_FRACTION:.1%} of it")
left.set_xlabel("stated rate (Mbit/s)")
left.set_ylabel("message time (s)")
left.set_title("measured vs shared-links model, per size")
left.legend(fontsize=7, ncol=2)
middle.axhspan(0.95, 1.05, color="0.9", label="within 5 %")
middle.axhline(1, color="k", lw=0.8)
middle.set_xlabel("stated rate (Mbit/s)")
middle.set_ylabel("measured / model at the payload rate")
middle.set_title("filled: up (to the master), open: down")
middle.legend(fontsize=8)
right.axhspan(0.95, 1.05, color="0.9", label="within 5 % of the stated rate")
right.axhline(1, color="k", ls="--", lw=0.8)
right.axhline(PAYLOAD_FRACTION, color="k", lw=0.8, label=f"payload share {PAYLOAD_FRACTION:.3f}")
for direction in directions:
    mine = [f for f in fits if f["direction"] == direction and f["fitted"]]
    right.semilogx(
        [mbit(f["stated"]) for f in mine],
        [f["fit_ratio"] for f in mine],
        markers[direction] + "-",
        color="tab:blue" if direction == "up" else "tab:orange",
        mfc="tab:blue" if direction == "up" else "none",
        label=f"{direction}",
    )
right.set_xlabel("stated rate (Mbit/s)")
right.set_ylabel("fitted payload rate / stated rate")
right.set_title("time = latency + bytes / rate, fitted over the sizes")
right.legend(fontsize=8)
# the stated rates as plain numbers: a log axis would label them 3x10^1 ...
stated = sorted({mbit(f["stated"]) for f in fits})
for axis in (left, middle, right):
    axis.set_xticks(stated, [f"{rate:g}" for rate in stated])
    axis.xaxis.set_minor_formatter(NullFormatter())
first = next(iter(probes.values()))
figure.suptitle(
    f"Emulated network at {len(probes)} rates (every link, the master's too): "
    f"{len(first['ranks'])} nodes, {first['repeats']} messages per size and worker"
)
style.save(figure, png)

# %%
result = []
for fit in fits:
    where = f"{fit['direction']} at {fit['label']}"
    if fit["fitted"]:
        within = "yes" if abs(fit["fit_ratio"] - 1) <= 0.05 else "NO"
        result.append(
            Comparison(
                "issue 11 (links)",
                "message time vs rate",
                f"{where}: fitted payload rate / stated rate",
                1.0,
                fit["fit_ratio"],
                "emulated network",
                f"paper value: the stated rate ({mbit(fit['stated']):g} Mbit/s); within 5 %: "
                f"{within}; tbf counts whole frames, so the payload's share is "
                f"{PAYLOAD_FRACTION:.4f} (fitted / that: {fit['fit_ratio_frames']:.4f}); "
                f"fitted latency {fit['latency'] * 1e3:.2f} ms",
            )
        )
    result.append(
        Comparison(
            "issue 11 (links)",
            "message time vs rate",
            f"{where}: max |measured / model at the payload rate - 1| over {fit['sizes']} sizes",
            0.0,
            fit["worst_frames"],
            "emulated network",
            f"paper value: the shared-links model exactly; against the plain model at the "
            f"stated rate {fit['worst']:.4f}",
        )
    )
write_rows(comparison, result)
