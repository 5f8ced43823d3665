"""Where a workflow run's time went: every job's ``benchmark:`` file (``paths.benchmark``:
Snakemake's wall time, CPU time and peak memory of the job) added up by rule.

The workflow prints the table when it succeeds (the Snakefile's ``onsuccess``) and writes it
to ``results/logs/rule-times.md``; ``python -m gradcode.pipeline.rule_times [FOLDER]`` prints
it again. Jobs run side by side (``--cores 2``), so the rules' wall times add up to more
than the run's.
"""

from __future__ import annotations

import csv
import math
import sys
from dataclasses import dataclass
from pathlib import Path

from gradcode.pipeline import paths


@dataclass(frozen=True)
class RuleTime:
    """One rule's jobs: how many, their wall seconds (sum, largest), CPU seconds (sum) and
    the largest peak resident memory (MiB); ``nan`` where Snakemake measured none."""

    rule: str
    jobs: int
    wall: float
    longest: float
    cpu: float
    peak_mib: float


def _number(row: dict[str, str], field: str) -> float:
    try:
        return float(row.get(field) or "nan")
    except ValueError:  # Snakemake writes NA where it measured nothing
        return math.nan


def _total(values: list[float]) -> float:
    known = [value for value in values if not math.isnan(value)]
    return sum(known) if known else math.nan


def read(folder: Path) -> list[RuleTime]:
    """The rules under ``folder`` (one sub-folder a rule), the slowest in total first."""
    found = []
    for rule in sorted(p for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []:
        rows = []
        for table in sorted(rule.rglob("*.tsv")):
            with open(table, newline="", encoding="utf-8") as stream:
                rows += list(csv.DictReader(stream, delimiter="\t"))
        if not rows:
            continue
        walls = [_number(row, "s") for row in rows]
        peaks = [_number(row, "max_rss") for row in rows]
        known_peaks = [peak for peak in peaks if not math.isnan(peak)]
        found.append(
            RuleTime(
                rule=rule.name,
                jobs=len(rows),
                wall=_total(walls),
                longest=max((w for w in walls if not math.isnan(w)), default=math.nan),
                cpu=_total([_number(row, "cpu_time") for row in rows]),
                peak_mib=max(known_peaks) if known_peaks else math.nan,
            )
        )
    return sorted(found, key=lambda r: -r.wall if not math.isnan(r.wall) else 0.0)


def markdown(rules: list[RuleTime]) -> str:
    """The table, one line a rule, and the jobs' total."""

    def cell(value: float, digits: int = 1) -> str:
        return "n/a" if math.isnan(value) else f"{value:,.{digits}f}"

    lines = [
        "| rule | jobs | wall, sum (s) | longest job (s) | CPU, sum (s) | peak memory (MiB) |",
        "|---|---|---|---|---|---|",
    ]
    for r in rules:
        lines.append(
            f"| {r.rule} | {r.jobs} | {cell(r.wall)} | {cell(r.longest)} | {cell(r.cpu)} "
            f"| {cell(r.peak_mib, 0)} |"
        )
    jobs = sum(r.jobs for r in rules)
    total = _total([r.wall for r in rules])
    lines.append(f"| all | {jobs} | {cell(total)} | | {cell(_total([r.cpu for r in rules]))} | |")
    return "\n".join(lines)


def report(folder: str | Path = paths.BENCHMARKS, out: str | Path | None = None) -> str:
    """The table of ``folder``'s benchmark files (empty string when there are none), written
    to ``out`` too when given."""
    rules = read(Path(folder))
    if not rules:
        return ""
    text = (
        "Where the time went, by rule (Snakemake's benchmark files; jobs ran side by side, "
        "so the sum exceeds the run's wall time):\n\n" + markdown(rules) + "\n"
    )
    if out is not None:
        Path(out).parent.mkdir(parents=True, exist_ok=True)
        Path(out).write_text(text, encoding="utf-8")
    return text


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    folder = Path(args[0]) if args else Path(paths.BENCHMARKS)
    text = report(folder)
    if not text:
        print(f"rule_times: no benchmark files under {folder}", file=sys.stderr)
        return 1
    print(text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
