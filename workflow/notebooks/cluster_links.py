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
# # The emulated network's links: message time vs size, beside the shared-links model
#
# `python -m gradcode.train.linkprobe` as an MPI job on the emulated cluster, one rank per node
# (MPICH on TCP): every message size between the master's node and every worker's, both
# directions (up: worker to master, down: master to worker), one message at a time on idle
# links. The `shared-links` model predicts `bytes / min(rate, master_rate)` for such a
# message; `tc tbf` counts whole frames, so TCP carries about 95.6 % of the stated rate as
# payload (1448 of 1514 bytes per frame), and the comparison rows set the measured medians
# beside the model at that payload rate (the plain model's ratio is in each row's note).

# %%
import json

import matplotlib.pyplot as plt
import numpy as np

from gradcode.figures import style
from gradcode.figures.cluster import PAYLOAD_FRACTION, peer_medians, probe_rows
from gradcode.figures.compare import Comparison, write_rows
from gradcode.pipeline import paths

# %% tags=["parameters"]
links = paths.CLUSTER_LINKS
png = paths.fill(paths.FIGURE, "cluster_links")
comparison = paths.fill(paths.FIGURE_COMPARISON, "cluster_links")

# %%
style.setup()
probe = json.loads(open(links).read())
rows = probe_rows(probe)
stated = probe["stated"]
per_peer = peer_medians(probe)
mbit = lambda rate: rate * 8 / 1e6  # noqa: E731

# %%
figure, (left, right) = plt.subplots(1, 2, figsize=(13, 4.6))
colors = {"up": "tab:blue", "down": "tab:orange"}
for direction in ("up", "down"):
    mine = [r for r in rows if r["direction"] == direction]
    if not mine:
        continue
    sizes = np.array([r["bytes"] for r in mine])
    left.loglog(
        sizes, [r["time"] for r in mine], "o", color=colors[direction], label=f"{direction}: median"
    )
    for (_peer, d, size), value in per_peer.items():
        if d == direction:
            left.plot(size, value, ".", color=colors[direction], alpha=0.3)
    left.plot(sizes, [r["predicted"] for r in mine], "k--", lw=1)
    left.plot(sizes, [r["predicted_frames"] for r in mine], "k-", lw=1)
    right.semilogx(sizes, [r["ratio"] for r in mine], "o--", color=colors[direction], mfc="none")
    right.semilogx(
        sizes, [r["ratio_frames"] for r in mine], "o-", color=colors[direction], label=direction
    )
left.plot([], [], "k--", lw=1, label="model, stated rate")
left.plot([], [], "k-", lw=1, label=f"model, payload {PAYLOAD_FRACTION:.1%} of it")
left.set_xlabel("message size (bytes)")
left.set_ylabel("message time (s)")
left.set_title("measured (dots: each worker) vs shared-links model")
left.legend(fontsize=8)
right.axhspan(0.95, 1.05, color="0.9", label="within 5 %")
right.axhline(1, color="k", lw=0.8)
right.set_xlabel("message size (bytes)")
right.set_ylabel("measured / predicted")
right.set_title("filled: model at the payload rate; open: at the stated rate")
right.legend(fontsize=8)
figure.suptitle(
    f"Emulated network: workers' links {mbit(stated['rate']):g} Mbit/s, the master's "
    f"{mbit(stated['master_rate']):g} Mbit/s; {len(probe['ranks'])} nodes, "
    f"{probe['repeats']} messages per size and worker"
)
style.save(figure, png)

# %%
result = []
effective = min(stated["rate"], stated["master_rate"])
for r in rows:
    result.append(
        Comparison(
            "issue 11 (links)",
            "message time vs size",
            f"{r['direction']}: {r['bytes']} B, median time (s) at {mbit(effective):g} Mbit/s",
            r["predicted_frames"],
            r["time"],
            "emulated network",
            f"paper value: shared-links model at the payload rate ({PAYLOAD_FRACTION:.4f} x "
            f"stated); plain model {r['predicted']:.5g} s (ratio {r['ratio']:.3f}); median of "
            f"{len(probe['ranks']) - 1} workers x {probe['repeats']} messages",
        )
    )
for direction, summary in probe["summary"].items():
    fit = summary.get("fit") or {}
    if fit.get("rate"):
        result.append(
            Comparison(
                "issue 11 (links)",
                "message time vs size",
                f"{direction}: fitted payload rate (Mbit/s), time = latency + bytes / rate",
                mbit(effective),
                mbit(fit["rate"]),
                "emulated network",
                f"paper value: the stated link rate; fitted latency {fit['latency'] * 1e3:.2f} ms",
            )
        )
write_rows(comparison, result)
