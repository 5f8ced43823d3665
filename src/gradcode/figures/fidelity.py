"""What decided a figure's runs, shown where their numbers are (``gradcode.fidelity``): the
rows made from runs carry the runs' dilation and verdict (``row_fidelity``), and a figure marks
every bar or point of a run the machine decided (``mark_machine``), a mark, not a footnote."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from typing import Any

from gradcode.figures.compare import Comparison

#: how a figure marks the machine's numbers, and says so in its legend
MACHINE_LABEL = "machine-decided (fidelity record)"
MACHINE_STYLE = {"marker": "X", "color": "crimson", "ms": 9, "ls": "none", "zorder": 5}


def run_fidelity(summary: Mapping[str, Any]) -> tuple[float | str, str]:
    """A run's dilation and verdict from its ``summary.json`` (empty strings for a run
    written before runs recorded them)."""
    record = summary.get("fidelity")
    if not record:
        return summary.get("dilation", ""), ""
    return record.get("dilation", ""), record["verdict"]["decided_by"]


def machine_decided(summary: Mapping[str, Any]) -> bool:
    """Whether the machine, not the run's links or injected delays, decided its times."""
    return run_fidelity(summary)[1] == "machine"


def row_fidelity(summaries: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """``Comparison``'s ``dilation`` and ``fidelity`` for a row made from these runs: the
    machine's when it decided any of them; the runs' dilation (several: joined by ``/``)."""
    found = [run_fidelity(summary) for summary in summaries]
    if not found:
        return {"dilation": "", "fidelity": ""}
    factors = sorted({factor for factor, _ in found if factor != ""}, key=float)
    verdicts = {verdict for _, verdict in found}
    if "machine" in verdicts:
        verdict = "machine"
    elif "" in verdicts:
        verdict = ""
    else:
        verdict = "/".join(sorted(verdicts))
    dilation: float | str = (
        float(factors[0]) if len(factors) == 1 else "/".join(f"{float(f):g}" for f in factors)
    )
    return {"dilation": dilation, "fidelity": verdict}


def with_fidelity(row: Comparison, summaries: Iterable[Mapping[str, Any]]) -> Comparison:
    """``row`` carrying the dilation and verdict of the runs it was made from."""
    return replace(row, **row_fidelity(summaries))


def mark_machine(
    axis: Any, xs: Sequence[float], ys: Sequence[float], decided: Sequence[bool]
) -> None:
    """An X on every point or bar top ``(x, y)`` of a run the machine decided, labelled once
    for the legend."""
    chosen = [(x, y) for x, y, machine in zip(xs, ys, decided, strict=True) if machine]
    if chosen:
        axis.plot(*zip(*chosen, strict=True), label=MACHINE_LABEL, **MACHINE_STYLE)
