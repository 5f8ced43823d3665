"""A ``Recommendation`` as text (the command's output), CSV (``--out``) and JSON (``--json``).

The text has, in order: what was simulated (model, workers, trials of both stages, seed,
level); the exact codes ranked (the first ``top`` rows, the reference always shown), with the
leader-versus-runner-up verdict; the approximate codes, unranked; every skipped scheme with
its reason and every limit with what it excluded; the run-file lines of the best code.

The CSV has one row per simulated code (all of them, both sections and the reference when it
is outside the limits; ``section`` tells which), columns as ``Row.record`` plus ``section``;
``params`` is compact JSON. It is written atomically (``gradcode.atomic``) and holds nothing
that varies between runs of the same inputs.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gradcode.atomic import write_atomic
from gradcode.jsonable import to_jsonable
from gradcode.recommend.rank import RECORD_COLUMNS, REFERENCE_SCHEME, Recommendation, Row
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
                _number(row.ratio, 3),
                _number(row.load, 3),
                _number(row.message, 3),
                _number(result.messages, 4),
                _number(result.vectors, 4),
                ", ".join(row.notes()),
            ]
        )
    right = {0, 3, 4, 6, 7, 8, 9, 10}
    if not ranked:
        cells = [line[1:] for line in cells]
        right = {c - 1 for c in right if c}
    widths = [max(len(line[c]) for line in cells) for c in range(len(cells[0]))]
    lines = []
    for line in cells:
        padded = [
            cell.rjust(width) if c in right else cell.ljust(width)
            for c, (cell, width) in enumerate(zip(line, widths, strict=True))
        ]
        lines.append("  " + "  ".join(padded).rstrip())
    return lines


def format_text(rec: Recommendation, *, top: int = 15) -> str:
    """The command's output (module docstring); ``top`` ranked rows at most, the reference
    always."""
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

    shown = rec.ranked[:top]
    lines += ["", f"exact codes, ranked by expected time per iteration ({len(rec.ranked)})"]
    reference = rec.reference
    extra = [reference] if reference is not None and reference not in shown else []
    if shown or extra:
        lines += _table([*shown, *extra], rec.confidence)
    else:
        lines.append("  none within the limits")
    if len(rec.ranked) > len(shown):
        lines.append(f"  ... {len(rec.ranked) - len(shown)} more (--top, or all in --out)")
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
        verdict = "tie within CI" if rec.tie else "best ahead (the intervals are disjoint)"
        lines.append(
            f"  best vs runner-up: {verdict} ({best.scheme} {describe_params(best.params)}"
            f" vs {second.scheme} {describe_params(second.params)})"
        )

    lines += [
        "",
        f"approximate codes ({len(rec.approximate)}): they decode an estimate of the gradient, "
        "so their time per iteration is not comparable alone; their time to a target loss is "
        "not ranked here",
    ]
    if rec.approximate:
        lines += _table(rec.approximate[:top], rec.confidence, ranked=False)
        if len(rec.approximate) > top:
            lines.append(f"  ... {len(rec.approximate) - top} more (all in --out)")

    lines += ["", "skipped"]
    lines += [
        f"  {skip.scheme} ({skip.count} configuration{'s' * (skip.count != 1)}): {skip.reason}"
        for skip in rec.skipped
    ] or ["  nothing"]
    if rec.excluded:
        lines += ["", "excluded by the limits"]
        for exclusion in rec.excluded:
            counts = ", ".join(f"{name} {count}" for name, count in exclusion.counts.items())
            lines.append(f"  {exclusion.limit}: {exclusion.total} ({counts})")

    lines.append("")
    if best is None:
        lines.append("no exact code within the limits: nothing to recommend")
    else:
        caveats = best.notes() + (["a tie within CI: see the runner-up"] if rec.tie else [])
        caveat = f" ({'; '.join(caveats)})" if caveats else ""
        lines += [f"best: {best.scheme}{caveat}; run-file lines:", run_file_lines(best.code)]
    return "\n".join(lines) + "\n"


def _sections(rec: Recommendation) -> list[tuple[str, Row]]:
    rows = [("exact", row) for row in rec.ranked] + [("approximate", r) for r in rec.approximate]
    if rec.reference is not None and not rec.reference.within_limits:
        rows.append(("reference", rec.reference))
    return rows


def render_csv(rec: Recommendation) -> str:
    """Every simulated row as CSV (module docstring)."""
    rows = _sections(rec)
    names = ["section", *RECORD_COLUMNS]
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(names)
    for section, row in rows:
        record = {"section": section, **row.record()}
        writer.writerow([format_value(record.get(name)) for name in names])
    return buffer.getvalue()


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
        },
        finite_only=True,
    )
