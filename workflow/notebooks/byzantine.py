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
# # Byzantine workers: exact coded correction, votes and robust aggregators under attack
#
# The same data and model (logistic regression on 2000 synthetic rows), the same liars and
# attacks, real MPI runs: paper 004's heterogeneous code, DRACO's repetition and cyclic codes
# (both exact with 2a + 1 copies of every partition), DETOX (a majority vote inside groups of
# 3, then the median of the votes), five robust aggregators over the uncoded partial
# gradients, and uncoded without any defence. Every run is compared with the honest serial
# run of its own run file (no liars, the exact sum): `max |theta_t - theta*_t| / max
# |theta*_t|`.
#
# Left: the final relative distance per defence (rows) and attack and number of liars
# (columns); a code whose claim is exactness must sit at round-off (<= 1e-9, written 0).
# Middle: the distance per iteration under the attack that hurt most (largest median final
# distance), with the most liars run. Right: the median time per iteration and, in the label,
# the partitions each worker holds (load) and the master's median decode or aggregation time.

# %%
import matplotlib.pyplot as plt
import numpy as np

from gradcode.figures import style
from gradcode.figures.byzantine import EXACT_TOLERANCE, measure, read_byzantine_run
from gradcode.figures.compare import Comparison, write_rows
from gradcode.pipeline import paths
from gradcode.runfile.experiment import load_experiment

# %% tags=["parameters"]
runs = paths.fill(paths.RUN_SUMMARY, "byzantine/heterogeneous-a1-alie")
experiment = "config/experiments/byzantine.yaml"
png = paths.fill(paths.FIGURE, "byzantine")
comparison = paths.fill(paths.FIGURE_COMPARISON, "byzantine")

# %%
KIND = "emulated attack"
#: a distance of exactly 0 drawn on the log axis
FLOOR = 1e-17
DRACO = "DRACO (Chen et al., ICML 2018)"
DETOX = "DETOX (Rajput et al., NeurIPS 2019)"
BYZSHIELD = "ByzShield (Konstantinidis, Ramamoorthy, MLSys 2021)"
NO_NUMBER = "no number reported"
#: defence -> (paper, its claim, whether the claim is exactness); quotes are the papers'
#: abstracts (DRACO arXiv 1803.09877, DETOX arXiv 1907.12205, ByzShield MLSys 2021)
#: and paper 004's Theorem 1
CLAIMS = {
    "heterogeneous": (
        "004 (heterogeneous GC)",
        "exact gradient from any n - s responses with up to a adversarial ones for any "
        "placement with r >= s + 2a + 1 (Theorem 1; the converse: none with r <= s + 2a)",
        True,
    ),
    "draco-repetition": (
        DRACO,
        "redundancy 2a + 1 suffices and 'the model that it trains is identical to the one "
        "trained in the adversary-free setup' (repetition code, majority vote)",
        True,
    ),
    "draco-cyclic": (
        DRACO,
        "redundancy 2a + 1 suffices and 'the model that it trains is identical to the one "
        "trained in the adversary-free setup' (cyclic code, Fourier decoder)",
        True,
    ),
    "detox+median": (
        DETOX,
        "majority vote in groups filters most Byzantine gradients, a robust aggregator the "
        "rest; 'orders of magnitude accuracy and speedup improvements' over robust "
        "aggregators (deep nets; " + NO_NUMBER + " for this setting)",
        False,
    ),
    "byzshield": (
        BYZSHIELD,
        "each file's vote (a value sent by (r + 1) / 2 of its r copies) is its true gradient "
        "while fewer than (r + 1) / 2 of its holders lie: with one liar and r = 3 every "
        "file's, so the sum of the votes is exact",
        True,
    ),
    "byzshield+median": (
        BYZSHIELD,
        "MOLS placement: the fewest files an omniscient attacker's q liars can take "
        "(c_max = 1 of 25 for q = 2 at K = 15; 'over a 36% reduction on average in the "
        "fraction of corrupted gradients compared to the state of the art'), then a robust "
        "aggregator over the file votes (" + NO_NUMBER + " for this setting)",
        False,
    ),
    "uncoded+median": (
        "coordinate-wise median (Yin et al., ICML 2018)",
        "a robust estimate of the mean, not the sum: " + NO_NUMBER,
        False,
    ),
    "uncoded+trimmed-mean": (
        "trimmed mean (Yin et al., ICML 2018)",
        "a robust estimate of the mean, not the sum: " + NO_NUMBER,
        False,
    ),
    "uncoded+multi-krum": (
        "multi-Krum (Blanchard et al., NeurIPS 2017)",
        "a robust estimate of the mean, not the sum: " + NO_NUMBER,
        False,
    ),
    "uncoded+geometric-median": (
        "geometric median (Chen, Su, Xu, 2017)",
        "a robust estimate of the mean, not the sum: " + NO_NUMBER,
        False,
    ),
    "uncoded+bulyan": (
        "Bulyan (El Mhamdi et al., ICML 2018)",
        "a robust estimate of the mean, not the sum: " + NO_NUMBER,
        False,
    ),
    "uncoded+none": (
        DETOX,
        "no defence: 'a single Byzantine compute node can result in arbitrarily bad global "
        "models when aggregating gradients via their average' (Sec. 1, after Blanchard et "
        "al.); " + NO_NUMBER,
        False,
    ),
}

spec = load_experiment(experiment)
order = list(spec.runs)
records = sorted(
    (read_byzantine_run(path) for path in runs.split(",") if path),
    key=lambda run: order.index(run.name),
)
table = [measure(run) for run in records]
assert {row["defence"] for row in table} <= set(CLAIMS), "every defence needs its claim"
defences = list(dict.fromkeys(row["defence"] for row in table))
columns = list(dict.fromkeys((row["a"], row["attack"]) for row in table))
cells = {
    (row["defence"], row["a"], row["attack"]): (run, row)
    for run, row in zip(records, table, strict=True)
}

# %%
style.setup()
figure, (grid_axis, distance_axis, time_axis) = plt.subplots(
    1,
    3,
    figsize=(20, 0.4 * len(defences) + 5),
    layout="constrained",
    width_ratios=[max(1.2, 0.3 * len(columns)), 1.2, 1.0],
)
values = np.full((len(defences), len(columns)), np.nan)
for (defence, a, attack), (_, row) in cells.items():
    i, j = defences.index(defence), columns.index((a, attack))
    values[i, j] = np.log10(max(row["distance_final"], FLOOR))
    text = "0" if row["exact"] else f"{row['distance_final']:.2g}"
    grid_axis.text(j, i, text, ha="center", va="center", fontsize=7, color="w")
image = grid_axis.imshow(values, cmap="viridis", aspect="auto", vmin=np.log10(FLOOR), vmax=0.5)
grid_axis.set_xticks(range(len(columns)), [f"{attack}\na={a}" for a, attack in columns])
grid_axis.set_yticks(range(len(defences)), defences)
grid_axis.tick_params(axis="x", labelsize=7)
figure.colorbar(
    image, ax=grid_axis, label=f"log10 final relative distance (0: <= {EXACT_TOLERANCE:g})"
)
grid_axis.set_title("final distance to the honest serial run", fontsize=10)

# the strongest attack (largest median final distance over defences), with the most liars
most = max(a for a, _ in columns)
shown = max(
    (attack for a, attack in columns if a == most),
    key=lambda attack: np.median(
        [row["distance_final"] for row in table if (row["a"], row["attack"]) == (most, attack)]
    ),
)
for index, defence in enumerate(defences):
    if (defence, most, shown) in cells:
        run, _ = cells[(defence, most, shown)]
        steps = np.arange(1, len(run.trajectory) + 1)
        distance_axis.plot(
            steps,
            np.maximum(run.distance, FLOOR),
            marker=".",
            color=f"C{index % 10}",
            linestyle="-" if index < 10 else "--",
            label=defence,
        )
distance_axis.set_yscale("log")
distance_axis.set_xlabel("iteration")
distance_axis.set_ylabel(f"max |theta - theta*| / max |theta*| (0 drawn at {FLOOR:g})")
distance_axis.set_title(f"distance per iteration: {shown}, a = {most}", fontsize=10)
distance_axis.legend(fontsize=7)

# per defence, over its runs: median iteration and decode time, its load
timing = {defence: [row for row in table if row["defence"] == defence] for defence in defences}
positions = np.arange(len(defences))
medians = [np.median([row["iteration_ms"] for row in group]) for group in timing.values()]
time_axis.barh(positions, medians, color=[f"C{i % 10}" for i in range(len(defences))])
for position, group in zip(positions, timing.values(), strict=True):
    loads = sorted({row["load_max"] for row in group})
    decode = np.median([row["decode_ms"] for row in group])
    label = f" load {'/'.join(map(str, loads))}, decode {decode:.2f} ms"
    time_axis.text(0, position, label, va="center", fontsize=7)
time_axis.set_yticks(positions, defences)
time_axis.invert_yaxis()
time_axis.set_xlabel("median time per iteration (ms) over the defence's runs")
time_axis.set_title("time per iteration; load = partitions per worker", fontsize=10)
data = records[0].summary["data"]
title = (
    f"{len(records)} MPI runs, {data['dataset']} {data['rows']} x {data['features']}, "
    f"{records[0].summary['iterations']} iterations, liars: workers "
    + " or ".join(sorted({str(list(run.config.adversaries.workers)) for run in records}))
)
if any(run.summary["data"].get("stand_in") for run in records):
    title += f"\n{style.STAND_IN_NOTE}"
figure.suptitle(title, fontsize=10)
style.save(figure, png)


# %%
def per_attack(group, field, digits=3):
    return "; ".join(f"{row['attack']}: {row[field]:.{digits}g}" for row in group)


def outcome(group):
    """Whether an exactness claim held in every run of ``group``, in one line."""
    held = [row for row in group if row["exact"]]
    verdict = "reproduced" if len(held) == len(group) else "NOT reproduced"
    text = f"{verdict}: distance <= {EXACT_TOLERANCE:g} under {len(held)} of {len(group)} attacks"
    named = [row["liars_named"] for row in group if row["liars_named"] is not None]
    if named:
        text += f"; the liars named in {100 * min(named):.0f}% of iterations or more"
    return text


rows = []
for defence in defences:
    paper, claim, exact = CLAIMS[defence]
    for a in sorted({row["a"] for row in timing[defence]}):
        group = [row for row in timing[defence] if row["a"] == a]
        first = group[0]
        item = (
            f"{defence}, a = {a} of n = {first['workers']} "
            f"({first['load_max']} partitions per worker)"
        )
        worst = max(row["distance_final"] for row in group)
        note = "; ".join(
            f"{row['attack']}: distance {row['distance_final']:.3g}, loss {row['loss']:.4g} "
            f"(honest {row['loss_honest']:.4g}), AUC {row['auc']:.4f} (honest "
            f"{row['auc_honest']:.4f}), {row['iteration_ms']:.2f} ms per iteration"
            for row in group
        )
        quantity = "final relative distance to the honest serial run (largest over attacks)"
        rows.append(Comparison(paper, item, quantity, 0.0 if exact else claim, worst, KIND, note))
        if exact:
            largest = max(row["distance_max"] for row in group)
            rows.append(
                Comparison(
                    paper,
                    item,
                    "claim: exact with a liars",
                    claim,
                    outcome(group),
                    KIND,
                    f"largest distance over iterations and attacks {largest:.3g}",
                )
            )
        else:
            quantity = (
                "relative error of the gradient sum stepped along (median, largest over attacks)"
            )
            error = max(row["gradient_error"] for row in group)
            rows.append(
                Comparison(
                    paper,
                    item,
                    quantity,
                    NO_NUMBER,
                    error,
                    KIND,
                    per_attack(group, "gradient_error"),
                )
            )


def median_of(defence, a, field):
    values = [row[field] for row in table if row["defence"] == defence and row["a"] == a]
    return float(np.median(values)) if values else None


# the speed claims: DRACO against a median-based rule (iteration time), DETOX's vote against
# the same aggregator over every worker's gradient (the aggregation's time)
for a in sorted({row["a"] for row in table}):
    slow = median_of("uncoded+geometric-median", a, "iteration_ms")
    for code in ("draco-repetition", "draco-cyclic"):
        fast = median_of(code, a, "iteration_ms")
        if slow is not None and fast is not None:
            rows.append(
                Comparison(
                    DRACO,
                    f"{code} against uncoded + geometric median, a = {a}",
                    "time per iteration: geometric median / DRACO (medians over attacks)",
                    "'several times, to orders of magnitude faster than median-based "
                    "approaches' (deep nets on a cluster; " + NO_NUMBER + " for this setting)",
                    slow / fast,
                    KIND,
                    f"{slow:.2f} ms and {fast:.2f} ms per iteration",
                )
            )
    plain, voted = (
        median_of("uncoded+median", a, "decode_ms"),
        median_of("detox+median", a, "decode_ms"),
    )
    if plain is not None and voted is not None:
        rows.append(
            Comparison(
                DETOX,
                f"detox + median against uncoded + median, a = {a}",
                "aggregation time at the master: median of n gradients / median of n/r votes",
                "'orders of magnitude ... speedup improvements' (deep nets; "
                + NO_NUMBER
                + " for this setting)",
                plain / voted,
                KIND,
                f"{plain:.3f} ms and {voted:.3f} ms (decode time, medians over attacks)",
            )
        )
write_rows(comparison, rows)
