"""A sweep over the links' latency (an experiment with ``sweep: {key: network.links.latency}``,
rule ``train_latency``): every run's mean time per iteration, measured and by the
``shared-links`` model for its own logged computation at its stated latency, grouped by scheme;
and the latency at which one scheme overtakes another (``crossover``), measured and predicted.

The delayer's cost. On the emulated cluster the delayer that holds the packets is a process on
the same two cores as the nodes (40-55 us of CPU a packet, docs/measurements/link-latency.md):
a run at a latency also pays that CPU, which a real network's switches pay instead.
``latency.json`` records how much it used during the job, so the figure can show its share of
a core (``delayer_share``) beside the times; the model has no such cost.

Crossover. Between two swept latencies the times are taken as linear in the latency (the model
is: a ring pays ``2 (N - 1)`` latencies an iteration, a tree a few per level), so where the
difference ``slower - faster`` changes sign the crossover is interpolated there. When it never
changes sign in the sweep the crossover is only bounded: ``<=`` the smallest latency (already
ahead there) or ``>`` the largest (not yet ahead); ``crossover`` says which.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from gradcode.codes import build
from gradcode.duration import Duration, DurationError
from gradcode.figures.runs import Run
from gradcode.pipeline.paths import LATENCY_FILE
from gradcode.runfile.config import load_config
from gradcode.runlogs.log import read_log
from gradcode.runlogs.timings import predicted_links_time


@dataclass(frozen=True)
class LatencyPoint:
    """One run of a latency sweep: its scheme's name in the experiment (the run's name
    without ``-<latency>``), the stated one-way latency (s, and as written), mean seconds
    per iteration measured and predicted over the iterations after the first ``skip``, how
    many, and the latency the run's ``summary.json`` found in force on a worker's link
    (``None`` off the emulated cluster) with the delayer's state."""

    scheme: str
    latency: float
    latency_text: str
    measured: float
    predicted: float
    iterations: int
    in_force: str | None
    delayer: str | None
    run: Run
    #: the delayer's share of a core while the job ran (its CPU seconds over the job's, the
    #: start-up included), from the run's ``latency.json`` (``None`` without one, or without
    #: a delayer)
    delayer_share: float | None = None


def latency_point(run: Run, skip: int = 1) -> LatencyPoint:
    """``run``'s point (``skip``: the first iterations also set up the connections)."""
    folder = Path(run.path).parent
    links = load_config(folder / "run.yaml").network.links
    scheme = scheme_of(run.short_name, links.latency_text)
    code = build(run.summary["scheme"], **run.params)
    features = run.summary["data"]["features"]
    way = run.summary.get("distribution", {}).get("way", "isend")
    got = run.summary.get("collection", {}).get("way", "push")
    log = read_log(folder)[skip:]
    if not log:
        raise ValueError(f"{folder}: no iteration after the first {skip}")
    measured = np.array([float(record["iteration_time"]) for record in log])
    predicted = np.array(
        [
            predicted_links_time(code, record, links, features, distribution=way, collection=got)
            for record in log
        ]
    )
    share = delayer_share(folder / LATENCY_FILE)
    cluster = run.summary.get("communication", {}).get("cluster") or {}
    nodes = cluster.get("nodes") or []
    return LatencyPoint(
        scheme=scheme,
        latency=links.latency,
        latency_text=links.latency_text,
        measured=float(measured.mean()),
        predicted=float(predicted.mean()),
        iterations=int(measured.size),
        in_force=nodes[1]["latency"] if len(nodes) > 1 else None,
        delayer=cluster.get("delayer"),
        run=run,
        delayer_share=share,
    )


def delayer_share(record: Path) -> float | None:
    """The delayer's CPU seconds per second while ``gradcode cluster latency`` held a command's
    latency (its ``--record``), ``None`` without the record or a delayer."""
    if not record.is_file():
        return None
    found = json.loads(record.read_text())
    used = found.get("delayer_cpu_seconds")
    held, back = found.get("latency_set"), found.get("latency_restored")
    if used is None or not held or not back or back["clock"] <= held["clock"]:
        return None
    return float(used) / (back["clock"] - held["clock"])


def scheme_of(name: str, latency: str) -> str:
    """A swept run's scheme: ``name`` without the ``-<latency>`` a sweep added, however the
    value was spelt (``CR-0.5ms`` at ``500us``: ``CR``); ``name`` when it has none."""
    head, _, tail = name.rpartition("-")
    try:
        same = bool(head) and Duration.parse(tail, "run name") == Duration.parse(latency, "")
    except DurationError:
        same = False
    return head if same else name


def by_scheme(points: Sequence[LatencyPoint]) -> dict[str, list[LatencyPoint]]:
    """The points of each scheme, by latency, schemes in the order first seen."""
    grouped: dict[str, list[LatencyPoint]] = {}
    for point in points:
        grouped.setdefault(point.scheme, []).append(point)
    return {scheme: sorted(found, key=lambda p: p.latency) for scheme, found in grouped.items()}


@dataclass(frozen=True)
class Crossover:
    """Where ``faster`` becomes faster than ``slower``: ``latency`` seconds, ``relation``
    ``"="`` (interpolated), ``"<="`` (ahead at the sweep's smallest latency already) or
    ``">"`` (not ahead at its largest)."""

    latency: float
    relation: str

    def describe(self) -> str:
        ms = f"{self.latency * 1e3:.3g} ms"
        return {"=": ms, "<=": f"<= {ms}", ">": f"> {ms}"}[self.relation]


def crossover(
    latencies: Sequence[float], faster: Sequence[float], slower: Sequence[float]
) -> Crossover:
    """The least latency from which ``faster``'s times (per latency, ascending) stay at or
    below ``slower``'s, interpolated linearly where the difference changes sign last."""
    x = np.asarray(latencies, dtype=np.float64)
    gap = np.asarray(slower, dtype=np.float64) - np.asarray(faster, dtype=np.float64)
    if x.size == 0 or x.shape != gap.shape or np.any(np.diff(x) <= 0):
        raise ValueError("crossover: needs ascending latencies with one time of each per latency")
    if gap[-1] < 0:
        return Crossover(float(x[-1]), ">")
    behind = np.flatnonzero(gap < 0)
    if behind.size == 0:
        return Crossover(float(x[0]), "<=")
    i = int(behind[-1])  # last latency still behind; ahead from i + 1 on
    share = -gap[i] / (gap[i + 1] - gap[i])
    return Crossover(float(x[i] + share * (x[i + 1] - x[i])), "=")


def crossovers(
    grouped: Mapping[str, Sequence[LatencyPoint]], faster: str, slower: str
) -> dict[str, Any]:
    """``faster`` against ``slower`` over the latencies both ran at: ``latencies`` and the
    ``measured`` and ``predicted`` crossovers (``Crossover``)."""
    mine = {p.latency: p for p in grouped[faster]}
    theirs = {p.latency: p for p in grouped[slower]}
    common = sorted(set(mine) & set(theirs))
    result: dict[str, Any] = {"latencies": common}
    for what in ("measured", "predicted"):
        result[what] = crossover(
            common,
            [getattr(mine[x], what) for x in common],
            [getattr(theirs[x], what) for x in common],
        )
    return result
