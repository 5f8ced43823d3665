"""A ``Recommendation`` as text (the command's output), CSV (``--out``) and JSON (``--json``).

The text has, in order: what was simulated (model, workers, trials of both stages, seed,
level); the exact codes ranked (the first ``top`` rows, the reference always shown; the
``exact`` column: the exact expected time per iteration where the model and the code give a
closed form, ``gradcode.recommend.exact``, beside the Monte Carlo mean and interval), with
what ordered them and the leader-versus-runner-up verdict; the approximate codes, unranked;
with a target loss, the codes ranked by time to target (``gradcode.recommend.target``: what
was simulated, how long it took, what could not be and why); every skipped scheme with its
reason and every limit with what it excluded; the run-file lines of the best code (and of the
fastest to the target loss).

The CSV has one row per simulated code (all of them, both sections and the reference when it
is outside the limits; ``section`` tells which), columns as ``Row.record`` plus ``section``;
``params`` is compact JSON. With a target loss, the rows of section ``to target`` follow, with
the ``TARGET_COLUMNS`` after the others (empty in the other sections). It is written atomically
(``gradcode.atomic``) and, but for the time-to-target section's run file path, holds nothing
that varies between runs of the same inputs.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import math
import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gradcode.atomic import write_atomic
from gradcode.jsonable import to_jsonable
from gradcode.recommend.rank import REFERENCE_SCHEME
from gradcode.recommend.recommendation import (
    EXACT,
    RECORD_COLUMNS,
    TARGET_COLUMNS,
    Recommendation,
    Row,
    TargetRow,
    TargetSection,
)
from gradcode.recommend.runfile import run_file_lines
from gradcode.sim.table import format_value

#: a parameter value longer than this is shortened in the text table (the CSV has it whole)
_SHORT = 28


def describe_params(params: dict[str, Any]) -> str:
    """``n=8 d=4 s=1 m=3``; long values (placements) as ``placement=<8 items #3fa2>``, the
    hash telling equal-looking rows apart."""
    parts = []
    for key, value in params.items():
        text = json.dumps(to_jsonable(value), separators=(",", ":"))
        if isinstance(value, str):
            text = value
        elif len(text) > _SHORT:
            digest = hashlib.sha1(text.encode()).hexdigest()[:4]
            size = len(value) if isinstance(value, list | tuple) else "?"
            text = f"<{size} items #{digest}>"
        parts.append(f"{key}={text}")
    return " ".join(parts)


def _number(value: float | None, digits: int = 5) -> str:
    return "-" if value is None else f"{value:.{digits}g}"


def _table(rows: Sequence[Row], confidence: float, *, ranked: bool = True) -> list[str]:
    header = [
        "rank",
        "scheme",
        "params",
        "trials",
        "mean",
        f"{confidence:.0%} CI",
        "exact",
        "vs ref",
        "load",
        "msg",
        "messages",
        "vectors",
        "notes",
    ]
    cells = [header]
    for row in rows:
        result = row.result
        cells.append(
            [
                "" if row.rank is None else str(row.rank),
                row.scheme,
                describe_params(row.params),
                f"{result.trials}",
                _number(result.mean_time),
                f"[{_number(result.ci_low)}, {_number(result.ci_high)}]",
                _number(row.exact_time, 6),
                _number(row.ratio, 3),
                _number(row.load, 3),
                _number(row.message, 3),
                _number(result.messages, 4),
                _number(result.vectors, 4),
                ", ".join(row.notes()),
            ]
        )
    right = {0, 3, 4, 6, 7, 8, 9, 10, 11}
    if not ranked:
        cells = [line[1:] for line in cells]
        right = {c - 1 for c in right if c}
    return _aligned(cells, right)


def _aligned(cells: list[list[str]], right: set[int]) -> list[str]:
    """The rows of ``cells`` in columns, those in ``right`` right-aligned, indented by two."""
    widths = [max(len(line[c]) for line in cells) for c in range(len(cells[0]))]
    lines = []
    for line in cells:
        padded = [
            cell.rjust(width) if c in right else cell.ljust(width)
            for c, (cell, width) in enumerate(zip(line, widths, strict=True))
        ]
        lines.append("  " + "  ".join(padded).rstrip())
    return lines


def _target_table(rows: Sequence[TargetRow], confidence: float) -> list[str]:
    header = [
        "rank",
        "scheme",
        "params",
        "method",
        "iterations",
        "reached",
        "mean time",
        f"{confidence:.0%} CI",
        "per iteration",
        "vs best exact",
        "notes",
    ]
    cells = [header]
    for row in rows:
        reached = (
            ("yes" if row.reached else "no")
            if row.method == EXACT
            else f"{row.reached}/{row.replicates}"
        )
        interval = "-"  # also with one replicate that reached it: no interval
        if row.ci_low is not None and row.ci_high is not None and math.isfinite(row.ci_low):
            interval = f"[{_number(row.ci_low)}, {_number(row.ci_high)}]"
        cells.append(
            [
                "" if row.rank is None else str(row.rank),
                row.row.scheme,
                describe_params(row.row.params),
                "I x per iteration" if row.method == EXACT else f"{row.replicates} replicates",
                _number(row.iterations, 4),
                reached,
                _number(row.mean_time),
                interval,
                _number(row.time_per_iteration),
                _number(row.ratio, 3),
                ", ".join(row.notes()),
            ]
        )
    return _aligned(cells, {0, 4, 5, 6, 8, 9})


def format_target(section: TargetSection, confidence: float) -> list[str]:
    """The time-to-target section's lines (``gradcode.recommend.target``)."""
    lines = [
        f"time to target loss {section.loss:g}: run {section.source} ({section.problem}); at "
        f"most {section.max_iterations} iterations, {section.replicates} replicates per "
        "approximate code"
    ]
    for trace in section.exact:
        if trace.iterations is None:
            lines.append(
                f"  exact gradient descent ({trace.rows} training rows): not reached in "
                f"{trace.max_iterations} iterations (loss then {trace.loss:.6g})"
            )
        else:
            lines.append(
                f"  exact gradient descent ({trace.rows} training rows): {trace.iterations} "
                f"iterations (loss {trace.loss:.6g})"
            )
    if section.rows:
        lines += _target_table(section.rows, confidence)
    else:
        lines.append("  nothing to rank")
    lines += [
        "  exact codes: the --finalists fastest by time per iteration (equal times count "
        "once) and the reference, I x mean time per iteration, the interval times I",
        f"  approximate codes: {section.simulated} simulated (per scheme, --finalists of them at "
        f"evenly spaced places by time per iteration), {section.not_simulated} others not "
        f"simulated; their per iteration: the simulated runs' mean; took {section.seconds:.1f} s",
    ]
    if section.best is None:
        lines.append(
            f"  no code reached loss {section.loss:g} in every replicate within "
            f"{section.max_iterations} iterations"
        )
    lines += [
        f"  left out: {skip.scheme} ({skip.count} configuration{'s' * (skip.count != 1)}): "
        f"{skip.reason}"
        for skip in section.skipped
    ]
    return lines


def format_text(rec: Recommendation, *, top: int = 15) -> str:
    """The command's output (module docstring); ``top`` ranked rows at most, the reference
    always."""
    lines = _header_lines(rec)
    lines += ["", *_ranked_lines(rec, top)]
    lines += ["", *_approximate_lines(rec, top)]
    if rec.to_target is not None:
        lines += ["", *format_target(rec.to_target, rec.confidence)]
    lines += ["", *_skipped_lines(rec)]
    lines += ["", *_best_lines(rec)]
    return "\n".join(lines) + "\n"


def _header_lines(rec: Recommendation) -> list[str]:
    """What was simulated: model, workers, limits, worker times, trials, seed."""
    params = json.dumps(to_jsonable(rec.model_params), separators=(", ", ": "))
    finalists = rec.finalists
    lines = [
        f"recommend: n = {rec.n} workers, model {rec.model_name} {params}",
        f"limits: {' '.join(rec.limits.describe()) or 'none'}",
    ]
    if rec.worker_times is not None and rec.worker_times.times is not None:
        times = ", ".join(f"{t:g}" for t in rec.worker_times.times)
        lines.append(f"worker times per data subset (fastest = 1, Monte Carlo): {times}")
    if rec.screen_trials < rec.trials:
        lines.append(
            f"trials: {rec.screen_trials} per configuration to screen all {rec.simulated}, "
            f"then {rec.trials} for the {finalists} finalists (the fastest per section and "
            f"all whose interval reaches the leader's); seed {rec.seed}, common random numbers"
        )
    else:
        lines.append(f"trials: {rec.trials} per configuration; seed {rec.seed}")
    if rec.duplicates:
        lines.append(f"{rec.duplicates} configurations with equal parameters merged")
    return lines


def _ranked_lines(rec: Recommendation, top: int) -> list[str]:
    """The exact codes' table (the reference always in it), what its columns mean, the
    best's equivalents and the best against the runner-up."""
    shown = rec.ranked[:top]
    lines = [f"exact codes, ranked by expected time per iteration ({len(rec.ranked)})"]
    reference = rec.reference
    extra = [reference] if reference is not None and reference not in shown else []
    if shown or extra:
        lines += _table([*shown, *extra], rec.confidence)
    else:
        lines.append("  none within the limits")
    if len(rec.ranked) > len(shown):
        lines.append(f"  ... {len(rec.ranked) - len(shown)} more (--top, or all in --out)")
    lines += _exact_lines(rec)
    if reference is not None:
        lines.append(f"  vs ref: mean time over {REFERENCE_SCHEME}'s (same stage, same draws)")
    best = rec.best
    if best is not None and rec.equivalents:
        names = "; ".join(f"{r.scheme} {describe_params(r.params)}" for r in rec.equivalents[:4])
        if len(rec.equivalents) > 4:
            names += f"; and {len(rec.equivalents) - 4} more"
        lines.append(f"  equal times in every trial (the same code under this model): {names}")
    second = rec.runner_up
    if best is not None and second is not None:
        exact = best.exact_time is not None and second.exact_time is not None
        if exact:
            verdict = (
                "equal exact expected times"
                if rec.tie
                else f"best ahead by the exact expected times ({_number(best.exact_time, 6)} "
                f"vs {_number(second.exact_time, 6)})"
            )
        else:
            verdict = "tie within CI" if rec.tie else "best ahead (the intervals are disjoint)"
        lines.append(
            f"  best vs runner-up: {verdict} ({best.scheme} {describe_params(best.params)}"
            f" vs {second.scheme} {describe_params(second.params)})"
        )
    return lines


def _approximate_lines(rec: Recommendation, top: int) -> list[str]:
    """The approximate codes' table (unranked), and where their time to target is."""
    later = (
        "ranked below"
        if rec.to_target is not None
        else "not ranked here (--run RUN.yaml --target-loss L ranks it)"
    )
    lines = [
        f"approximate codes ({len(rec.approximate)}): they decode an estimate of the gradient, "
        f"so their time per iteration is not comparable alone; their time to a target loss is "
        f"{later}",
    ]
    if rec.approximate:
        lines += _table(rec.approximate[:top], rec.confidence, ranked=False)
        if len(rec.approximate) > top:
            lines.append(f"  ... {len(rec.approximate) - top} more (all in --out)")
    return lines


def _skipped_lines(rec: Recommendation) -> list[str]:
    """Every skipped scheme with its reason, and what each limit excluded."""
    lines = ["skipped"]
    lines += [
        f"  {skip.scheme} ({skip.count} configuration{'s' * (skip.count != 1)}): {skip.reason}"
        for skip in rec.skipped
    ] or ["  nothing"]
    if rec.excluded:
        lines += ["", "excluded by the limits"]
        for exclusion in rec.excluded:
            counts = ", ".join(f"{name} {count}" for name, count in exclusion.counts.items())
            lines.append(f"  {exclusion.limit}: {exclusion.total} ({counts})")
    return lines


def _best_lines(rec: Recommendation) -> list[str]:
    """The run-file lines of the best code, and of the fastest to the target loss when it is
    another."""
    lines = []
    best, second = rec.best, rec.runner_up
    if best is None:
        lines.append("no exact code within the limits: nothing to recommend")
    else:
        tie = (
            "equal expected times: see the runner-up"
            if second is not None and best.exact_time is not None and second.exact_time is not None
            else "a tie within CI: see the runner-up"
        )
        caveats = best.notes() + ([tie] if rec.tie else [])
        caveat = f" ({'; '.join(caveats)})" if caveats else ""
        lines += [f"best: {best.scheme}{caveat}; run-file lines:", run_file_lines(best.code)]
    fastest = rec.to_target.best if rec.to_target is not None else None
    if fastest is not None and (best is None or fastest.code is not best.code):
        what = "" if fastest.code.exact else " (approximate)"
        lines += [
            f"fastest to loss {rec.to_target.loss:g}: {fastest.row.scheme}{what}; run-file lines:",
            run_file_lines(fastest.code),
        ]
    return lines


def _exact_lines(rec: Recommendation) -> list[str]:
    """What the ``exact`` column holds and what ordered the rows (``rank``, step 4)."""
    rows = [*rec.ranked, *rec.approximate]
    if rec.exact_unavailable is not None:
        return [f"  exact: none ({rec.exact_unavailable}); ordered by Monte Carlo mean"]
    known = sum(row.exact_time is not None for row in rows)
    by = Counter(row.ranked_by for row in rec.ranked)
    order = ", ".join(f"{count} by {how}" for how, count in by.items())
    return [
        f"  exact: expected time from the closed form (identical master-worker workers, codes "
        f"that declare a completion rule, one message per worker), {known} of {len(rows)} "
        "codes; '-': Monte Carlo only",
        f"  ordered by the exact time where known, else by Monte Carlo mean ({order or 'none'})",
    ]


def _sections(rec: Recommendation) -> list[tuple[str, Row]]:
    rows = [("exact", row) for row in rec.ranked] + [("approximate", r) for r in rec.approximate]
    if rec.reference is not None and not rec.reference.within_limits:
        rows.append(("reference", rec.reference))
    return rows


def render_csv(rec: Recommendation) -> str:
    """Every simulated row as CSV (module docstring)."""
    rows = _sections(rec)
    target = rec.to_target
    names = ["section", *RECORD_COLUMNS, *(TARGET_COLUMNS if target is not None else ())]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(names)
    for section, row in rows:
        record = {"section": section, **row.record()}
        writer.writerow([format_value(record.get(name)) for name in names])
    for target_row in target.rows if target is not None else []:
        record = {"section": "to target", **_target_record(target_row, target.loss)}
        writer.writerow([format_value(record.get(name)) for name in names])
    return buffer.getvalue()


def _target_record(row: TargetRow, loss: float) -> dict[str, Any]:
    return {**row.row.record(), **row.record(loss)}


def write_csv(path: str | os.PathLike[str], rec: Recommendation) -> Path:
    """``render_csv`` written atomically to ``path``."""
    return write_atomic(path, render_csv(rec))


def as_json(rec: Recommendation) -> dict[str, Any]:
    """The recommendation as JSON-ready data (``--json``)."""
    best = rec.best
    return to_jsonable(
        {
            "n": rec.n,
            "model": rec.model_name,
            "parameters": rec.model_params,
            "limits": rec.limits.describe(),
            "trials": rec.trials,
            "screen_trials": rec.screen_trials,
            "seed": rec.seed,
            "confidence": rec.confidence,
            "worker_times": None if rec.worker_times is None else rec.worker_times.times,
            "best": None if best is None else best.record(),
            "run_file": None if best is None else run_file_lines(best.code),
            "tie_within_ci": rec.tie,
            "ranked": [row.record() for row in rec.ranked],
            "approximate": [row.record() for row in rec.approximate],
            "reference": None if rec.reference is None else rec.reference.record(),
            "skipped": [vars(skip) for skip in rec.skipped],
            "excluded": [vars(exclusion) for exclusion in rec.excluded],
            "duplicates": rec.duplicates,
            "to_target": None if rec.to_target is None else _target_json(rec.to_target),
        },
        finite_only=True,
    )


def _target_json(section: TargetSection) -> dict[str, Any]:
    best = section.best
    return {
        **section.as_json(),
        "best": None if best is None else _target_record(best, section.loss),
        "run_file": None if best is None else run_file_lines(best.code),
        "rows": [_target_record(row, section.loss) for row in section.rows],
    }
