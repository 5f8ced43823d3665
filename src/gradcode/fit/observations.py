"""From runs' logs to observations of paper 000's times: what every worker took, or how long it
was at least taking when the iteration ended without it.

Paper 000's model (``gradcode.timing.master_worker``): worker ``i`` computes each data subset
(``1 / n`` of the data) in ``X1`` and sends a message of ``q`` full-length vectors in ``q X2``.
A run's ``log.jsonl`` gives, for every message the master took off the wire, its sender's
measured ``compute`` and injected ``injected_compute`` (both cumulative, seconds), and when it
``arrival``-ed. So for the *first* message of worker ``i`` in iteration ``t`` (key ``key``,
``p = data_fraction(key) n`` subsets, ``q = 1 / m``)::

    x1 = (compute + injected_compute) / p
    y  = arrival - started            (one clock: the worker's receipt of the model to arrival)
    x2 = (y - p x1) / q               (everything after the computation: links, queues, polls)

Without one clock for all ranks (``transfer`` is ``null``: nodes of a real cluster) ``started``
and ``arrival`` do not compare, and the communication is what was injected
(``injected_comm``) or, with nothing injected, not observed at all (``comm`` is ``None``).

A result's ``transfer`` on the emulated cluster's links is lengthened by its link's head
start (``head_starts``): after an idle spell the sender's ``tbf`` lets its bucket (0.5 ms of
the rate, at least four frames: 1.2 ms at 40 Mbit/s) leave at once, which a real link does not,
and the envelope ``latency + bytes / rate`` (``gradcode.fit.latency``) would lose that much of
the latency (docs/measurements/fit-loop.md, "What a transfer measures").

A worker whose first message had not arrived when the iteration became decodable is
*censored*: its ``y`` exceeds ``c = wait_time - start``. Its ``start`` is unknown (it never
reported); the latest ``started`` of the iteration's messages stands in for it, which keeps
``c`` a lower bound as long as the models left the master in about the same time (they do: one
``Isend`` each, at once). Workers known not to answer (failed, persistent stragglers, silent)
are not observations at all.
A run whose results were pulled (``runtime.collection: pull``) is refused: the workers the
master did not pull sent a notice (their computation) but no message, which is neither a
complete nor a censored ``y``.

The runtime's own cost per iteration (``overhead``) is the measured ``iteration_time`` minus
the completion time the code's rule gives on the messages' ``y`` (the model's download, the
polling, decoding and the update); it is what a prediction must add to the model's times.

Tree and ring runs
------------------
A tree's master hears only its children, so a tree run is read from ``nodes.jsonl``
(``gradcode.runlogs.nodelog``), where every node logged its own work in every iteration it began,
whether or not its parent used it: ``x1 = work / p`` (``p = data_fraction(v) n``) and, when
links were emulated, ``x2`` the link delay drawn for its message over the message's length in
vectors. Its computation was observed until the next model came (``budget``, the threshold):
complete when done by then, else censored (``p X1 > budget``). The link delay was drawn either
way, so ``x2`` is always complete: the two times are observed apart, not through their sum, and
``gradcode.fit.runs`` fits them apart (``separable``). A ring's workers report every iteration
to rank 0, so every one is complete (``c = inf``): ``x1`` from its compute, ``x2`` the link
delay of its ring steps over the ``2 (n - 1) / n`` vectors they carried. The runtime's own transfers
are not in these ``x2`` (they go into the overhead), and the links of tree and ring runs are
not fitted (the shared-links model reads flat runs). Overhead: the measured iteration time
minus the model's completion on the nodes' ``work + link delay`` (a tree: the tree's rule,
``gradcode.timing.tree`` with instant forwarding; a ring: its last worker).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from gradcode.codes import GradientCode, build
from gradcode.codes.ring import RingCode
from gradcode.codes.tree import TreeCode
from gradcode.errors import UserError
from gradcode.fit.replay import TreeIterations
from gradcode.fit.run_observations import RunObservations, WorkerObservations
from gradcode.rate import Rate, RateError
from gradcode.runlogs.log import LOG_FILE, SUMMARY_FILE
from gradcode.runlogs.nodelog import NODES_FILE, read_nodes
from gradcode.runlogs.timings import implied_iteration_time, logged_key, message_index
from gradcode.timing.tree import tree_outcome
from gradcode.topology import TopologyVisitor, topology_of

#: a communication time below this (seconds) is a clock's granularity, not a negative time
CLOCK_SLACK = 1e-4
#: bytes of one number of the model the master sends (float64)
MODEL_FLOAT_BYTES = 8


class ObservationError(UserError):
    """Runs that cannot be read as observations of the model (one line naming the file)."""


def read_run(directory: str | Path, *, skip: int = 1) -> RunObservations:
    """Observations of the run in ``directory`` (its ``summary.json`` and ``log.jsonl``),
    leaving out its first ``skip`` iterations (start-up: imports, first allocations)."""
    path = Path(directory)
    summary = _read_json(path / SUMMARY_FILE)
    records = _read_log(path / LOG_FILE)
    where = str(path)
    try:
        code = build(summary["scheme"], **summary["scheme_params"])
    except (KeyError, ValueError) as error:
        raise ObservationError(
            f"{where}/{SUMMARY_FILE}: cannot rebuild the code ({error})"
        ) from None
    kept = [r for r in records if r.get("iteration", 0) >= skip]
    if not kept:
        raise ObservationError(
            f"{where}/{LOG_FILE}: no iteration after the first {skip} (it has {len(records)})"
        )
    if summary.get("collection", {}).get("way") == "pull":
        # a notice gives an unpulled worker's computation but its message never travelled:
        # neither complete nor censored at the decode, which is all the estimators know
        raise ObservationError(
            f"{where}: its results were pulled (runtime.collection: pull), so the workers the "
            "master did not need sent no message to time; fit runs with runtime.collection: push"
        )
    return topology_of(code).accept(_Readers(where, summary, kept), code)


class _Readers(TopologyVisitor[RunObservations]):
    """How the logs of each topology's runs are read (see the module docstring)."""

    def __init__(self, where: str, summary: dict[str, Any], kept: list[dict[str, Any]]) -> None:
        self.where, self.summary, self.kept = where, summary, kept
        self.injected = dict(summary.get("config", {}).get("stragglers") or {})

    def flat(self, code: GradientCode) -> RunObservations:
        return _flat_run(self.where, self.summary, code, self.kept, self.injected)

    def tree(self, code: TreeCode) -> RunObservations:
        return _tree_run(self.where, self.summary, code, self.kept, self.injected)

    def ring(self, code: RingCode) -> RunObservations:
        assert isinstance(code, GradientCode)
        return _ring_run(self.where, self.summary, code, self.kept, self.injected)


@dataclass
class _FlatReading:
    """What ``_flat_run`` gathers over the iterations of a flat run."""

    per_worker: tuple[WorkerObservations, ...]
    #: every worker's first message key and its data in partitions' worth (``subsets``)
    firsts: list[Any]
    subsets: list[float]
    overhead: list[float] = field(default_factory=list)
    measured: list[float] = field(default_factory=list)
    rates: list[list[float]] = field(default_factory=list)
    transfers: list[list[tuple[float, float]]] = field(default_factory=list)
    received: list[list[float]] = field(default_factory=list)
    downloads: list[tuple[float, float]] = field(default_factory=list)
    orders: list[list[float]] = field(default_factory=list)
    finish: list[float] = field(default_factory=list)
    head_starts: tuple[float, ...] = ()


def head_starts(summary: dict[str, Any], workers: int) -> tuple[float, ...]:
    """Per worker, the head start its link's token bucket gave each message it sent after an
    idle spell: the emulated cluster's ``egress_bucket`` bytes of the worker's node over its
    egress rate (``summary.json``'s ``communication.cluster`` and ``ranks``: worker ``i`` is
    rank ``i + 1``); 0 where the run recorded none (other links, runs before it was recorded,
    unlimited links)."""
    nodes = {
        node.get("name"): node
        for node in ((summary.get("communication") or {}).get("cluster") or {}).get("nodes", [])
    }
    hosts = {rank.get("rank"): rank.get("host") for rank in summary.get("ranks") or []}
    starts = []
    for worker in range(workers):
        node = nodes.get(hosts.get(worker + 1), {})
        bucket, egress = node.get("egress_bucket"), node.get("egress")
        try:
            rate = Rate.parse(egress, "egress") if bucket and egress else None
        except RateError:
            rate = None
        starts.append(float(bucket) / rate.bytes_per_second if rate else 0.0)
    return tuple(starts)


def _flat_run(
    where: str,
    summary: dict[str, Any],
    code: GradientCode,
    kept: list[dict[str, Any]],
    injected: dict[str, Any],
) -> RunObservations:
    """A flat run's observations: every worker's first message, per iteration."""
    config = summary.get("config", {})
    one_clock = bool(summary.get("transfer_timing", {}).get("comparable", False))
    silent = [(e["worker"], e["iteration"]) for e in (config.get("faults") or {}).get("silent", [])]
    injected_any = any(m.get("injected_comm", 0.0) > 0 for r in kept for m in r.get("messages", []))
    firsts = [code.message_keys(i)[0] for i in range(code.n)]
    reading = _FlatReading(
        per_worker=tuple(WorkerObservations() for _ in range(code.n)),
        firsts=firsts,
        subsets=[code.data_fraction(key) * code.n for key in firsts],
        rates=[[] for _ in range(code.n)],
        transfers=[[] for _ in range(code.n)],
        received=[[] for _ in range(code.n)],
        head_starts=head_starts(summary, code.n),
    )
    model_bytes = MODEL_FLOAT_BYTES * (int(summary.get("data", {}).get("features", 0)) + 1)
    for record in kept:
        _read_flat_iteration(reading, record, code, silent, one_clock, model_bytes, where)
    return RunObservations(
        directory=where,
        scheme=summary["scheme"],
        params=dict(summary["scheme_params"]),
        workers=code.n,
        one_clock=one_clock,
        comm_observed=one_clock or injected_any,
        iterations=len(kept),
        per_worker=reading.per_worker,
        overhead=tuple(reading.overhead),
        measured=tuple(reading.measured),
        upload_rate=tuple(float(max(r)) if r else None for r in reading.rates),
        download_rate=(
            float(np.median([b / t for b, t in reading.downloads])) if reading.downloads else None
        ),
        upload_transfers=tuple(tuple(pairs) for pairs in reading.transfers),
        head_starts=reading.head_starts,
        downloads=tuple(reading.downloads),
        distribution=str(summary.get("distribution", {}).get("way", "isend")),
        model_received=tuple(float(np.median(r)) if r else None for r in reading.received),
        injected=injected,
        start_order=tuple(np.median(reading.orders, axis=0).tolist()) if reading.orders else None,
        finish=tuple(reading.finish),
        features=int(summary.get("data", {}).get("features", 0)),
        links=summary.get("communication", {}).get("mode") == "links",
    )


def _read_flat_iteration(
    reading: _FlatReading,
    record: dict[str, Any],
    code: GradientCode,
    silent: list[tuple[int, int]],
    one_clock: bool,
    model_bytes: int,
    where: str,
) -> None:
    """One logged iteration of a flat run into ``reading``."""
    t = int(record["iteration"])
    firsts, subsets, fraction = reading.firsts, reading.subsets, 1.0 / code.m
    messages = {logged_key(m["key"]): m for m in record.get("messages", [])}
    lost = set(record.get("failed", [])) | set((record.get("injected") or {}).get("persistent", []))
    lost |= {worker for worker, since in silent if since <= t}
    starts = [m["started"] for m in messages.values()] if one_clock else []
    latest_start = max(starts, default=0.0)
    if latest_start > 0:
        copies = code.n - len(lost)
        reading.downloads.append((float(copies * model_bytes), latest_start))
        by_worker = {m["worker"]: m["started"] for m in messages.values()}
        if len(by_worker) == code.n:
            reading.orders.append(sorted(by_worker.values()))
    wait = float(record["wait_time"])
    reading.finish.append(float(record["iteration_time"]) - wait)
    for worker in range(code.n):
        if worker in lost:
            continue
        message = messages.get(firsts[worker])
        obs = reading.per_worker[worker]
        obs.iteration.append(t)
        obs.subsets.append(subsets[worker])
        obs.fraction.append(fraction)
        if message is None:
            obs.threshold.append(max(wait - latest_start, 0.0))
            obs.observed.append(False)
            obs.compute.append(math.nan)
            obs.comm.append(math.nan)
            continue
        start = message["started"] if one_clock else 0.0
        obs.threshold.append(max(wait - start, 0.0))
        obs.observed.append(True)
        work = message["compute"] + message["injected_compute"]
        obs.compute.append(work / subsets[worker])
        obs.comm.append(_comm(message, work, one_clock, where, t) / fraction)
        if one_clock:
            reading.received[worker].append(float(message["started"]))
            if message.get("transfer"):
                reading.rates[worker].append(message["bytes"] / message["transfer"])
                lengthened = message["transfer"] + reading.head_starts[worker]
                reading.transfers[worker].append((message["bytes"], lengthened))
    completion = _completion(code, record, one_clock)
    reading.measured.append(float(record["iteration_time"]))
    reading.overhead.append(float(record["iteration_time"]) - completion)


def _tree_run(
    where: str,
    summary: dict[str, Any],
    tree: TreeCode,
    kept: list[dict[str, Any]],
    injected: dict[str, Any],
) -> RunObservations:
    """A tree run's observations from its ``nodes.jsonl`` (see the module docstring)."""
    code = tree
    nodes = read_nodes(where)
    if not nodes:
        raise ObservationError(
            f"{where}/{NODES_FILE}: not found; a tree run's nodes are observed only there "
            "(runs of gradcode before it was written: run again)"
        )
    features = int(summary.get("data", {}).get("features", 0))
    subsets = [code.data_fraction(node) * code.n for node in range(code.n)]
    rows = {t: {row["worker"]: row for row in entries} for t, entries in nodes.items()}
    comm_observed = any(
        row["injected_comm"] > 0 for r in kept for row in rows.get(int(r["iteration"]), {}).values()
    )
    per_worker = tuple(WorkerObservations() for _ in range(code.n))
    overhead, measured, finish = [], [], []
    shape = (len(kept), code.n)
    link, x, budget = np.zeros(shape), np.full(shape, np.nan), np.full(shape, np.inf)
    present, offset = np.zeros(shape, dtype=bool), np.zeros(shape)
    for i, record in enumerate(kept):
        t = int(record["iteration"])
        if t not in rows or not rows[t]:
            raise ObservationError(f"{where}/{NODES_FILE}: no nodes of iteration {t}")
        ready = np.full((1, code.n), np.inf)
        for node, row in sorted(rows[t].items()):
            present[i, node] = True
            link[i, node] = row["injected_comm"]
            budget[i, node] = row["budget"]
            if row["complete"]:
                x[i, node] = row["work"] / subsets[node]
            fraction = row["width"] / features if features else 1.0
            _add(
                per_worker[node],
                t,
                subsets[node],
                fraction,
                row,
                comm_observed,
            )
            if row["complete"]:
                ready[0, node] = row["work"] + row["injected_comm"]
        completion = float(tree_outcome(tree, ready, 0.0).times[0])
        offset[i] = budget[i] - completion
        measured.append(float(record["iteration_time"]))
        overhead.append(measured[-1] - completion)
        finish.append(measured[-1] - float(record["wait_time"]))
    iterations = TreeIterations(
        tree, np.array(subsets), link, np.where(present, offset, 0.0), x, budget, present
    )
    return replace(
        _without_links(
            where,
            summary,
            code,
            kept,
            injected,
            comm_observed,
            per_worker,
            overhead,
            measured,
            finish,
        ),
        tree=iterations,
    )


def _ring_run(
    where: str,
    summary: dict[str, Any],
    code: GradientCode,
    kept: list[dict[str, Any]],
    injected: dict[str, Any],
) -> RunObservations:
    """A ring run's observations: every worker reports every iteration (see the module
    docstring)."""
    features = int(summary.get("data", {}).get("features", 0))
    comm_observed = any(m.get("injected_comm", 0.0) > 0 for r in kept for m in r["messages"])
    per_worker = tuple(WorkerObservations() for _ in range(code.n))
    overhead, measured, finish = [], [], []
    for record in kept:
        t = int(record["iteration"])
        last = 0.0
        for message in record["messages"]:
            worker = int(message["worker"])
            # the explicit ring's link delay is T2 times the chunks it sent, 2 (n - 1) / n
            # vectors: the bytes it received over the steps, as many as it sent
            fraction = message.get("step_bytes", 0) / (MODEL_FLOAT_BYTES * features)
            work = message["compute"] + message["injected_compute"]
            row = {
                "complete": True,
                "work": work,
                "budget": math.inf,  # a ring waits for every worker: nothing is cut short
                "injected_comm": message.get("injected_comm", 0.0),
            }
            _add(per_worker[worker], t, 1.0, fraction, row, comm_observed and fraction > 0)
            last = max(last, work + row["injected_comm"])
        measured.append(float(record["iteration_time"]))
        overhead.append(measured[-1] - last)  # a ring is done when its last worker is
        finish.append(0.0)
    return _without_links(
        where, summary, code, kept, injected, comm_observed, per_worker, overhead, measured, finish
    )


def _add(
    obs: WorkerObservations,
    t: int,
    subsets: float,
    fraction: float,
    row: dict[str, Any],
    comm: bool,
) -> None:
    """One node's iteration: its computation complete within its ``budget`` (the threshold,
    on the computation alone) or censored at it; ``x2`` its link delay, drawn either way."""
    obs.iteration.append(t)
    obs.subsets.append(subsets)
    obs.fraction.append(fraction)
    obs.threshold.append(max(row["budget"], 0.0))
    obs.observed.append(bool(row["complete"]))
    obs.compute.append(row["work"] / subsets if row["complete"] else math.nan)
    obs.comm.append(row["injected_comm"] / fraction if comm and fraction > 0 else math.nan)


def _without_links(
    where: str,
    summary: dict[str, Any],
    code: GradientCode,
    kept: list[dict[str, Any]],
    injected: dict[str, Any],
    comm_observed: bool,
    per_worker: tuple[WorkerObservations, ...],
    overhead: list[float],
    measured: list[float],
    finish: list[float],
) -> RunObservations:
    """A tree or ring run's ``RunObservations``: its links are not fitted (a flat run's are)."""
    return RunObservations(
        directory=where,
        scheme=summary["scheme"],
        params=dict(summary["scheme_params"]),
        workers=code.n,
        one_clock=bool(summary.get("transfer_timing", {}).get("comparable", False)),
        comm_observed=comm_observed,
        iterations=len(kept),
        per_worker=per_worker,
        overhead=tuple(overhead),
        measured=tuple(measured),
        upload_rate=(None,) * code.n,
        download_rate=None,
        model_received=(None,) * code.n,
        injected=injected,
        start_order=None,
        finish=tuple(finish),
        features=int(summary.get("data", {}).get("features", 0)),
        links=summary.get("communication", {}).get("mode") == "links",
        topology=summary.get("topology", "flat"),
    )


def read_runs(directories: Sequence[str | Path], *, skip: int = 1) -> list[RunObservations]:
    """``read_run`` of every directory; they must have the same number of workers (the fit
    is of those workers)."""
    if not directories:
        raise ObservationError("no run directories given")
    runs = [read_run(d, skip=skip) for d in directories]
    sizes = sorted({run.workers for run in runs})
    if len(sizes) > 1:
        first = next(run for run in runs if run.workers == sizes[0])
        other = next(run for run in runs if run.workers != sizes[0])
        raise ObservationError(
            f"{other.directory}: has {other.workers} workers but {first.directory} has "
            f"{first.workers}; fit runs of one cluster size together"
        )
    return runs


def pooled(runs: Iterable[RunObservations], workers: Iterable[int] | None = None) -> dict:
    """The observations of ``workers`` (default: all) over ``runs``, as ``arrays()``."""
    runs = list(runs)
    chosen = range(runs[0].workers) if workers is None else workers
    total = WorkerObservations()
    offset = 0
    for run in runs:
        for worker in chosen:
            part = run.per_worker[worker]
            total.extend(part)
            # iterations of different runs are different iterations
            total.iteration[-len(part.iteration) :] = [t + offset for t in part.iteration]
        offset += 1 + max((t for w in run.per_worker for t in w.iteration), default=0)
    return total.arrays()


def _comm(message: dict[str, Any], work: float, one_clock: bool, where: str, t: int) -> float:
    """The message's time after its computation (see the module docstring), seconds."""
    if not one_clock:
        return float(message.get("injected_comm", 0.0))
    after = float(message["arrival"]) - float(message["started"]) - work
    if after < -CLOCK_SLACK:
        raise ObservationError(
            f"{where}/{LOG_FILE}: iteration {t}, key {message['key']}: arrived {-after:.4f} s "
            "before its sender finished computing; the ranks do not share one clock"
        )
    return max(after, 0.0)


def _completion(code: GradientCode, record: dict[str, Any], one_clock: bool) -> float:
    """The code's completion time on the messages' ``y`` (not received: never), seconds;
    without one clock, what the logged compute and injected delays imply."""
    if not one_clock:
        return implied_iteration_time(code, record)
    index = message_index(code)
    arrivals = np.full((1, len(index)), np.inf)
    for message in record.get("messages", []):
        arrivals[0, index[logged_key(message["key"])]] = message["arrival"] - message["started"]
    return float(code.completion_times(arrivals)[0])


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise ObservationError(f"{path}: not found (is this a run directory?)") from None
    except json.JSONDecodeError as error:
        raise ObservationError(f"{path}: not JSON ({error.msg}, line {error.lineno})") from None
    if not isinstance(data, dict) or "scheme" not in data:
        raise ObservationError(f"{path}: not a run summary (no scheme)")
    return data


def _read_log(path: Path) -> list[dict[str, Any]]:
    try:
        lines = path.read_text().splitlines()
    except FileNotFoundError:
        raise ObservationError(f"{path}: not found (is this a run directory?)") from None
    records = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as error:
            raise ObservationError(f"{path}:{number}: not JSON ({error.msg})") from None
    return records
