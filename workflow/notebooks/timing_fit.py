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
# # Which code for this cluster? Paper 000's model fitted to runs, a code recommended, run
#
# A fit study (config `fit`, `gradcode.pipeline.fit_studies`): `gradcode timing fit` reads the
# calibration runs' logs (here the uncoded run: what a user runs first) and fits paper 000's
# `T1 = t1 + Exp(lambda1)` per data subset and `T2 = t2 + Exp(lambda2)` per full-length vector
# by maximum likelihood with the stragglers' censoring, plus the runtime's own cost per
# iteration; `gradcode codes recommend` ranks every registered code under the fitted model;
# the workflow trains the recommended code (run `<study>/recommended`). Panels: QQ plots of the
# two fitted laws (complete samples, censoring undone), the fitted rates against the injected
# ones, and every run's measured mean time per iteration against the fitted model's
# prediction (the calibration run, the experiment's other codes of the same size, the
# recommended code).

# %%
import json
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import yaml

from gradcode.figures import style
from gradcode.figures.compare import Comparison, write_rows
from gradcode.figures.fidelity import row_fidelity
from gradcode.figures.runs import read_runs, stand_in_suffix
from gradcode.fit.predict import predict_runs
from gradcode.fit.runs import fit_runs
from gradcode.pipeline import paths

# %% tags=["parameters"]
runs = ""
experiment = "config/experiments/ye-abbe-amazon.yaml"
fitted = paths.fill(paths.FIT_FITTED, "ye-abbe-amazon-n10")
recommendation = paths.fill(paths.FIT_RECOMMENDATION, "ye-abbe-amazon-n10")
recommended = paths.fill(paths.RECOMMENDED_SUMMARY, "ye-abbe-amazon-n10")
png = paths.fill(paths.FIGURE, "ye_abbe_fit")
comparison = paths.fill(paths.FIGURE_COMPARISON, "ye_abbe_fit")

# %%
style.setup()
spec = yaml.safe_load(open(fitted))
report = spec["fit"]
calibration = [entry["directory"] for entry in report["runs"]]
workers = report["workers"]
# the fit again, for its samples (deterministic: same runs, same seed)
refit = fit_runs(calibration, skip=report["skip"], bootstrap=20, per_worker="no")
chosen = json.load(open(recommendation))["best"]
experiment_runs = [r for r in read_runs(runs) if r.summary["workers"] == workers]
recommended_dir = str(Path(recommended).parent)
compared = sorted({str(Path(r.path).parent) for r in experiment_runs} | set(calibration))
compared.append(recommended_dir)
predictions = predict_runs(spec, compared, skip=report["skip"], trials=20_000)
injected = report["runs"][0]["injected"]
# runs on the emulated cluster's real links are measurements of kind "emulated network"
links = any(
    json.load(open(Path(d) / "summary.json"))["communication"]["mode"] == "links"
    for d in calibration
)
kind = "emulated network" if links else "emulated cluster"
unit = float(injected.get("time_unit", 1.0))
truth = injected.get("params", {}) if injected.get("model") == "master-worker" else {}

# %%
figure, axes = plt.subplots(1, 4, figsize=(19, 4.4))
for axis, component, label in (
    (axes[0], "compute", "T1 per data subset"),
    (axes[1], "communication", "T2 per full vector"),
):
    fit = refit.pooled.component(component) if component == "compute" else refit.pooled.comm
    if fit is None:
        axis.set_axis_off()
        axis.set_title(f"{label}: not observed")
        continue
    model_q, sample_q = fit.qq(given_complete=True)
    axis.plot(model_q, sample_q, ".", markersize=3, color="tab:blue")
    low, high = float(np.min(model_q)), float(np.max(model_q))
    axis.plot([low, high], [low, high], color="k", linewidth=0.8)
    axis.set_xlabel("fitted quantile (s)")
    axis.set_ylabel("observed quantile (s)")
    misfit = "\n(KS rejects it)" if component in report.get("misfit", []) else ""
    if component == "communication" and spec["model"] == "shared-links":
        misfit += "\n(not used: the fitted links carry the messages)"
    axis.set_title(
        f"QQ {label}: KS {fit.ks:.3f}, p = {report['pooled'][component]['ks_pvalue']:.3f}{misfit}"
    )

axis = axes[2]
ticks = []
for component, key, shift_key in (("compute", "lambda1", "t1"), ("communication", "lambda2", "t2")):
    entry = report["pooled"].get(component)
    if not entry or key not in truth:
        continue
    # fitted over injected (in seconds: the injected model's units times time_unit); the
    # shifts also carry what the runtime really spends (the measured compute, the transfers)
    for name, value, interval, true in (
        (key, entry["rate"], entry["rate_interval"], truth[key] / unit),
        (shift_key, entry["shift"], entry["shift_interval"], truth[shift_key] * unit),
    ):
        axis.errorbar(
            len(ticks),
            value / true,
            yerr=[[(value - interval[0]) / true], [(interval[1] - value) / true]],
            fmt="o",
            capsize=4,
            color="tab:blue",
        )
        ticks.append(name)
axis.axhline(1.0, color="tab:red", linewidth=0.8)
axis.set_xticks(range(len(ticks)), ticks)
axis.set_xlim(-0.6, max(len(ticks), 2) - 0.4)
axis.set_ylabel("fitted / injected (95% CI)")
axis.set_title("fitted parameters over the injected ones")

axis = axes[3]
for p in predictions:
    is_recommended = p.run == recommended_dir
    is_calibration = p.run in calibration
    color = "tab:red" if is_recommended else ("tab:gray" if is_calibration else "tab:blue")
    axis.errorbar(
        p.predicted,
        p.measured,
        yerr=[[p.measured - p.measured_low], [p.measured_high - p.measured]],
        fmt="o",
        color=color,
        capsize=3,
    )
    tag = "recommended " if is_recommended else ("calibration " if is_calibration else "")
    params = " ".join(f"{k}={v}" for k, v in p.params.items() if k not in ("n", "points"))
    axis.annotate(
        f"{tag}{p.scheme} {params}",
        (p.predicted, p.measured),
        fontsize=7,
        xytext=(4, 4),
        textcoords="offset points",
    )
edges = [min(p.predicted for p in predictions) * 0.85, max(p.predicted for p in predictions) * 1.15]
axis.plot(edges, edges, color="k", linewidth=0.8)
axis.fill_between(edges, [e * 0.9 for e in edges], [e * 1.1 for e in edges], alpha=0.12)
axis.set_xlabel("predicted mean iteration time (s)")
axis.set_ylabel("measured mean iteration time (s)")
axis.set_title("prediction of the fitted model (band: +-10%)")
figure.suptitle(
    f"fit study on {len(calibration)} calibration run(s), n = {workers}, model "
    f"{spec['model']}: recommended {chosen['scheme']} {chosen['params']}"
    f"{stand_in_suffix(experiment_runs)}",
    y=1.07,
)
style.save(figure, png)

# %%
rows = []
note = f"fitted to {', '.join(calibration)}; n = {workers}"
if report.get("misfit"):
    note += f"; KS rejects the shifted exponential for {', '.join(report['misfit'])}"
note += stand_in_suffix(experiment_runs)
for component, key in (("compute", "lambda1"), ("communication", "lambda2")):
    entry = report["pooled"].get(component)
    if entry and key in truth:
        low, high = entry["rate_interval"]
        rows.append(
            Comparison(
                "000 (Ye & Abbe)",
                "timing fit",
                f"{key} fitted from the logs (1/s), 95% CI [{low:.4g}, {high:.4g}]",
                truth[key] / unit,
                entry["rate"],
                kind,
                f"injected {key} / time unit; {note}",
            )
        )
by_run = {p.run: p for p in predictions}
best = by_run[recommended_dir]
rows.append(
    Comparison(
        "000 (Ye & Abbe)",
        "timing fit",
        f"recommended {best.scheme} {best.params}: measured mean iteration time (s) vs predicted",
        best.predicted,
        best.measured,
        kind,
        f"goal: within 10%; {best.iterations} iterations measured; {note}",
    )
)
uncoded = [p for p in predictions if p.scheme == "uncoded"]
if uncoded:
    base = uncoded[0]
    rows.append(
        Comparison(
            "000 (Ye & Abbe)",
            "timing fit",
            f"recommended {best.scheme} over uncoded, mean iteration time ratio",
            best.predicted / base.predicted,
            best.measured / base.measured,
            kind,
            f"predicted ratio beside the measured one; {note}",
        )
    )
write_rows(comparison, rows, row_fidelity(r.summary for r in experiment_runs))
