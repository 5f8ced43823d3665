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
# # Paper 004 (heterogeneous GC): adversaries and heterogeneous placement
#
# (a) Sec. III-C/III-D: with r >= s + 2a + 1 the universal-polynomial code returns the exact
# gradient from any n - s responses of which up to a are arbitrary, and no decoder can do
# better (the converse). Cyclic (n = 15, r = 7), random (n = 20, k = 30, r = 6),
# speed-weighted (n = 24, r = 8) placements and the paper's Fig. 2 placement, every design
# s <= 2, a <= 3 they allow; liars send Gaussian noise 1e3 times the messages' scale, or (the
# converse) a + 1 colluding liars answer for a different partial gradient. The paper has no
# numerical evaluation of this.
#
# (b) The heterogeneous-placement preset: 6 fast and 6 slow workers, r = 3, s = 1 (m = 2), a
# placement proportional to speed against the cyclic one and the uncoded scheme (Remarks 3-4:
# the cost depends only on r, so loads can follow the workers' speed).

# %%
import matplotlib.pyplot as plt

from gradcode.figures import style
from gradcode.figures.compare import Comparison, write_rows
from gradcode.figures.panels import ci_bars
from gradcode.figures.tables import index_by, means, read_rows
from gradcode.pipeline import paths

# %% tags=["parameters"]
table = paths.fill(paths.ANALYSIS, "heterogeneous-adversaries")
placement = paths.fill(paths.SIMULATION, "heterogeneous-placement")
png = paths.fill(paths.FIGURE, "heterogeneous_adversaries")
comparison = paths.fill(paths.FIGURE_COMPARISON, "heterogeneous_adversaries")

# %%
style.setup()
rows = read_rows(table)
timing = read_rows(placement)


def pooled(cells):
    """Outcome fractions pooled over cells (every cell has the same number of instances)."""
    fractions = {
        "correct": lambda c: c["exact_fraction"] * c["named_fraction"],
        "exact": "exact_fraction",
        "named": "named_fraction",
        "detected": "detected_fraction",
        "wrong": "undetected_wrong_fraction",
    }
    return means(cells, fractions) | {"cells": len(cells)}


adversarial = [row for row in rows if row["a"] > 0]
control = [row for row in rows if row["a"] == 0]
random = [row for row in adversarial if row["attack"] == "random"]
groups = {
    "0 < liars <= a\n(random)": [r for r in random if 0 < r["liars"] <= r["a"]],
    "a + 1 liars\n(random)": [r for r in random if r["excess"] == 1],
    "a + 2 liars\n(random)": [r for r in random if r["excess"] == 2],
    "a + 1 liars\n(converse)": [r for r in adversarial if r["attack"] == "converse"],
    "a = 0 design,\n1 liar (random)": [
        r for r in control if r["attack"] == "random" and r["liars"] == 1
    ],
}
summary = {label: pooled(cells) for label, cells in groups.items()}
figure, (left, right) = plt.subplots(
    1, 2, figsize=(13, 4.8), gridspec_kw={"width_ratios": [1.6, 1]}
)
labels = list(summary)
positions = range(len(labels))
correct = [summary[label]["correct"] for label in labels]
detected = [summary[label]["detected"] for label in labels]
wrong = [summary[label]["wrong"] for label in labels]
left.bar(positions, correct, color="tab:green", label="exact, liars named")
left.bar(
    positions, detected, bottom=correct, color="tab:orange", label="detected (NotDecodableError)"
)
left.bar(
    positions,
    wrong,
    bottom=[c + d for c, d in zip(correct, detected, strict=True)],
    color="tab:red",
    label="silently wrong",
)
left.set_xticks(list(positions), labels, fontsize=8)
left.set_ylabel("fraction of instances")
left.set_ylim(0, 1.15)
for x, label in enumerate(labels):
    cells = groups[label]
    left.text(x, 1.02, f"{len(cells)} cells", ha="center", fontsize=7)
instances = rows[0]["patterns"]
tolerated = [r for r in adversarial if r["attack"] == "random" and r["liars"] <= r["a"]]
worst = max(r["max_rel_error"] for r in tolerated)
left.set_title(
    f"(a) decoding with liars ({instances} instances per cell; "
    f"max rel. error within a: {worst:.0e})",
    fontsize=9,
)
left.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.17), ncol=3)

names = [row["label"] for row in timing]
bars = ci_bars(right, names, timing, color=["tab:gray", "tab:blue", "tab:purple"][: len(timing)])
for bar, row in zip(bars, timing, strict=True):
    right.text(
        bar.get_x() + bar.get_width() / 2,
        bar.get_height() * 0.5,
        f"{row['vectors']:g} vectors sent\nE[compute]\n{row['expected_finish_min']:g} to "
        f"{row['expected_finish_max']:g}",
        ha="center",
        fontsize=7,
        color="white",
    )
right.set_ylabel("mean completion time")
right.set_title(
    f"(b) heterogeneous-placement preset, n = 12, r = 3, s = 1 ({timing[0]['trials']:,} trials)",
    fontsize=9,
)
style.save(figure, png)

# %%
within = pooled(tolerated) if tolerated else None
with_liars = pooled([r for r in tolerated if r["liars"] > 0])
beyond = pooled([r for r in adversarial if r["attack"] == "random" and r["excess"] > 0])
converse = pooled(groups["a + 1 liars\n(converse)"])
impostor = min(r["impostor_fraction"] for r in rows if r["attack"] == "converse")
by_label = index_by(timing, "label")
speed = by_label["speed-proportional"]["mean_time"]
paper = "004 (heterogeneous GC)"
kind = "exact computation"
write_rows(
    comparison,
    [
        Comparison(
            paper,
            "Sec. III-C (RS decoding)",
            "max relative error with s stragglers and <= a liars",
            0.0,
            worst,
            kind,
            f"{len(tolerated)} cells on 4 placements, Gaussian partials vs an "
            "independent compensated sum; exact (<= 1e-8) in "
            f"{within['exact']:.1%}",
        ),
        Comparison(
            paper,
            "Sec. III-C (RS decoding)",
            "fraction of instances where exactly the liars are named (1..a liars)",
            1.0,
            with_liars["named"],
            kind,
        ),
        Comparison(
            paper,
            "Theorem 1 (r >= s + 2a + 1)",
            "a + 1 or a + 2 random liars: detected (not silently wrong)",
            "not tolerated",
            f"detected {beyond['detected']:.1%}, silently wrong {beyond['wrong']:.1%}",
            kind,
            "noise in general position cannot pass for a codeword at distance <= a",
        ),
        Comparison(
            paper,
            "Theorem 1 converse (Sec. III-D)",
            "a + 1 colluding liars: fraction returned the other gradient, undetected",
            1.0,
            converse["wrong"],
            kind,
            f"decoded equals the impostor g + delta in {impostor:.0%} of instances: the "
            "bound r >= s + 2a + 1 is tight, for any decoder",
        ),
        Comparison(
            paper,
            "Remarks 3-4",
            "speed-proportional / cyclic placement mean time",
            "below 1 (placement can follow computing power)",
            speed / by_label["cyclic"]["mean_time"],
            "simulation",
            "same r = 3 and message length; the paper gives no number",
        ),
        Comparison(
            paper,
            "Remarks 3-4",
            "speed-proportional / uncoded mean time",
            "below 1 (not stated)",
            speed / by_label["uncoded"]["mean_time"],
            "simulation",
            "the cyclic placement is slower than uncoded here: "
            f"{by_label['cyclic']['mean_time'] / by_label['uncoded']['mean_time']:.3f}",
        ),
    ],
)
