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
# # Failed workers: iteration time and distance to the serial model through kill -9 or a lost node
#
# The papers count a worker that never answers as a straggler, whatever the cause (paper 003,
# Sec. I: tasks that "may never be received, due to delay or outage"; paper 001: CR is robust
# to "straggling/failure" of s of every parent's n children), and none of them measures a
# failure. Here every run is a real MPI job on Open MPI with ULFM, and workers' processes are
# killed with SIGKILL from outside at chosen iterations (`gradcode train inject`), or, on the
# emulated cluster, a worker's whole node is lost (every process on it killed, or its link
# down for good: `gradcode cluster lose`, experiment cluster-node-lost). The master
# learns of each death from MPI's own error and treats the worker as a permanent straggler by
# the code's own rule; a run whose code cannot decode without the dead workers stops, with a
# checkpoint to resume from (exit status 3, which the workflow expects of it).
#
# Left: the measured time of every iteration. Middle: the relative distance of the iterates to
# the serial uncoded run of the same configuration, `max |theta_t - theta*_t| / max |theta*_t|`
# (round-off for an exact code, the approximation's drift for Berrut). Right: for a code that
# estimates its own decoding error (Berrut), that estimate beside the measured error of the
# gradient it decoded. Triangles: the iteration in which the master saw a failure; crosses:
# where a run stopped.

# %%
import matplotlib.pyplot as plt
import numpy as np

from gradcode.figures import style
from gradcode.figures.compare import Comparison, write_rows
from gradcode.figures.failures import HOW, gradient_errors, read_failed_run
from gradcode.pipeline import paths
from gradcode.runfile.experiment import load_experiment

# %% tags=["parameters"]
runs = paths.fill(paths.RUN_SUMMARY, "failed-workers/frc")
experiment = "config/experiments/failed-workers.yaml"
png = paths.fill(paths.FIGURE, "failed_workers")
comparison = paths.fill(paths.FIGURE_COMPARISON, "failed_workers")

# %%
#: an exact zero (the uncoded run repeats the serial sum bit for bit) drawn on the log axis
FLOOR = 1e-17
KIND = "emulated failure"

spec = load_experiment(experiment)
claims = spec.paper["claims"]
records = [read_failed_run(path) for path in runs.split(",") if path]
order = list(spec.runs)
records.sort(key=lambda run: order.index(run.name))
assert sorted(run.name for run in records) == sorted(claims), "every run needs its claim"
for run in records:
    # the workflow's copy of the experiment's run (its data aside)
    assert run.config.faults == spec.config(run.name).faults, run.name
    assert run.summary["mpi"]["fault_tolerant"], f"{run.name}: not on a fault-tolerant MPI"
    lost = sorted(loss["worker"] for loss in run.losses)
    assert lost == run.summary["failed_workers"], f"{run.name}: lost {lost}, failed " + str(
        run.summary["failed_workers"]
    )

style.setup()
figure, (times_axis, distance_axis, estimate_axis) = plt.subplots(
    1, 3, figsize=(17, 5.4), layout="constrained"
)
decoding = {}  # run -> (measured relative error, estimate relative) per iteration
for index, run in enumerate(records):
    colour = f"C{index}"
    steps = np.arange(len(run.records))
    # scalar parameters only (a placement is a list of lists)
    params = ", ".join(
        f"{key}={value}"
        for key, value in run.summary["scheme_params"].items()
        if isinstance(value, int | float | str)
    )
    killed = ", ".join(f"w{loss['worker']}@{loss['iteration']}" for loss in run.losses)
    label = f"{run.name} ({params}; lost {killed})"
    times = 1e3 * run.iteration_times
    distance = np.maximum(run.distance, FLOOR)
    times_axis.plot(steps, times, marker=".", color=colour, label=label)
    distance_axis.plot(steps, distance, marker=".", color=colour)
    for failure in run.summary["failures"]:
        seen = failure["iteration"]
        if seen < len(steps):
            times_axis.plot(seen, times[seen], "v", color=colour, markersize=9)
            distance_axis.plot(seen, distance[seen], "v", color=colour, markersize=9)
    if run.stopped is not None:
        # drawn at the iteration it could not decode, at its last completed iteration's value
        stop = run.stopped["iteration"]
        times_axis.plot(stop, times[-1], "X", color=colour, markersize=12)
        distance_axis.plot(stop, distance[-1], "X", color=colour, markersize=12)
    estimates = run.error_estimates()
    if estimates is not None:
        errors, norms = gradient_errors(run)
        decoding[run.name] = (errors / norms, estimates / norms)
        estimate_axis.plot(steps, errors / norms, marker=".", color=colour, label="measured")
        estimate_axis.plot(
            steps,
            estimates / norms,
            marker="s",
            linestyle="--",
            color=colour,
            label="the decoder's estimate",
        )
        for failure in run.summary["failures"]:
            estimate_axis.axvline(failure["iteration"], color=colour, linewidth=0.8, alpha=0.5)
times_axis.set_xlabel("iteration")
times_axis.set_ylabel("iteration time (ms)")
times_axis.set_ylim(bottom=0)
distance_axis.set_yscale("log")
distance_axis.set_xlabel("iteration")
distance_axis.set_ylabel(f"max |theta - theta*| / max |theta*| (0 drawn at {FLOOR:g})")
figure.legend(
    *times_axis.get_legend_handles_labels(), loc="outside lower center", ncols=3, fontsize=8
)
estimate_axis.set_yscale("log")
estimate_axis.set_xlabel("iteration")
estimate_axis.set_ylabel("decoded gradient sum: error / |exact sum|")
estimate_axis.legend(fontsize=8, title=", ".join(decoding) or "no code estimates its error")
times_axis.set_title("iteration time (v: failure seen, X: stopped)", fontsize=10)
distance_axis.set_title("distance to the serial uncoded run", fontsize=10)
estimate_axis.set_title("approximate decoding: error and its estimate", fontsize=10)
detections = [1e3 * value for run in records for value in run.detection_seconds().values()]
data = records[0].summary["data"]
mpi = records[0].summary["mpi"]["version"].split(",")[0]
title = (
    f"{len(records)} runs, workers "
    + " or ".join(sorted({HOW[loss["how"]] for run in records for loss in run.losses}))
    + f" mid-run on {mpi} (ULFM); "
    f"{data['dataset']} {data['rows']} x {data['features']}, "
    f"{records[0].summary['iterations']} iterations; a death reached the master "
    f"{min(detections):.1f}-{max(detections):.1f} ms after the loss"
)
if any(run.summary["data"].get("stand_in") for run in records):
    title += f"\n{style.STAND_IN_NOTE}"
figure.suptitle(title, fontsize=10)
style.save(figure, png)

# %%
rows = []
for run in records:
    claim = claims[run.name]
    summary, stopped = run.summary, run.stopped
    item = f"{run.name}: {summary['scheme']} {summary['scheme_params']}"
    kills = "; ".join(
        f"worker {loss['worker']} {HOW[loss['how']]} at iteration {loss['iteration']}"
        + (f" ({loss['node']})" if "node" in loss else "")
        for loss in run.losses
    )
    seen = "; ".join(
        f"worker {failure['worker']} seen in iteration {failure['iteration']} "
        f"({failure['detected_by']})"
        for failure in summary["failures"]
    )
    if stopped is None:
        outcome = f"finished {summary['completed']}/{summary['iterations']} iterations"
    else:
        outcome = (
            f"stopped at iteration {stopped['iteration']} (exit status 3), resumable from "
            f"{stopped['completed']} iterations"
        )
    rows.append(
        Comparison(
            claim["paper"], item, "outcome", claim["claim"], outcome, KIND, f"{kills}; {seen}"
        )
    )
    distance = float(run.distance[-1])
    where = f"after iteration {len(run.records) - 1}"
    if stopped is not None:
        where += ", the last before the stop"
    approximate = run.name in decoding
    rows.append(
        Comparison(
            claim["paper"],
            item,
            "final relative distance to the serial uncoded model",
            "approximate (no number in the paper)" if approximate else "exact (0, round-off)",
            distance,
            KIND,
            where,
        )
    )
    times = run.detection_seconds()
    rows.append(
        Comparison(
            claim["paper"],
            item,
            "detection: loss to the master's record (ms, slowest)",
            "not measured (failures counted as stragglers)",
            1e3 * max(times.values()),
            KIND,
            "; ".join(f"worker {w}: {1e3 * t:.1f} ms" for w, t in sorted(times.items())),
        )
    )
    if approximate:
        measured, estimated = decoding[run.name]
        # before: the iterations before the one the failure was seen in; after: those after it
        seen = min(failure["iteration"] for failure in summary["failures"])
        before, after = slice(0, seen), slice(seen + 1, None)
        ratios = estimated / measured
        rows.append(
            Comparison(
                claim["paper"],
                item,
                "decoding error estimate / measured error, after the failure (median)",
                "no estimate in the paper (Remark 15 bounds the error)",
                float(np.median(ratios[after])),
                KIND,
                f"{np.median(ratios[before]):.3g} before it; the measured relative error of the "
                f"decoded sum (median) {np.median(measured[before]):.3g} before, "
                f"{np.median(measured[after]):.3g} after the failure in iteration {seen}",
            )
        )
write_rows(comparison, rows)
