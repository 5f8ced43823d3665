"""A run's fidelity record (``summary.json``'s ``fidelity``): what the machine cost it, the
time its links' model (or its injected delays) predicts against the time measured, its
undilated share, and the verdict (``rule``)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from gradcode.fidelity import tcp
from gradcode.fidelity.rule import verdict


def machine_measures(
    ranks: Sequence[Mapping[str, Any] | None],
    pressure: Mapping[str, Any] | None,
    cores: int,
) -> dict[str, Any]:
    """From every rank's ``usage.between`` of its timed part (a dead rank: ``None``) and the
    machine's ``pressure.between``: ``seconds`` (rank 0's real time), ``cores``, ``queue``
    (mean number of the run's threads waiting for a core), ``wake_delay`` (the mean real
    seconds a thread of the run waited for a core each time it became runnable: its
    run-queue delay over its time slices), ``cpu`` (share of the cores the
    run's ranks used), ``busiest_rank`` and its share of time on a core
    (``busiest_rank_cpu``), rank 0's shares on a core and waiting (``rank0_cpu``,
    ``rank0_wait``), the ranks' largest and median share waiting (``rank_wait_max``,
    ``rank_wait_median``), the run's wake-ups and involuntary context switches per second,
    the machine's ``cpu_pressure_some`` and the ranks' real computation (``work``,
    ``work_measures``). A measure the kernel did not give is ``None``."""
    alive = [(rank, spent) for rank, spent in enumerate(ranks) if spent is not None]
    seconds = float(ranks[0]["seconds"]) if ranks and ranks[0] is not None else math.nan
    found: dict[str, Any] = {"seconds": seconds, "cores": cores, "ranks": len(alive)}
    timed = [(rank, spent) for rank, spent in alive if "cpu" in spent and spent["seconds"] > 0]
    if timed and seconds > 0:
        cpu = {rank: spent["cpu"] / spent["seconds"] for rank, spent in timed}
        waits = [spent["wait"] / spent["seconds"] for _, spent in timed]
        busiest = max(cpu, key=cpu.__getitem__)
        first = dict(timed).get(0)
        slices = sum(spent.get("slices", 0) for _, spent in timed)
        found |= {
            "queue": sum(spent["wait"] for _, spent in timed) / seconds,
            "wake_delay": sum(spent["wait"] for _, spent in timed) / slices if slices else None,
            "cpu": sum(spent["cpu"] for _, spent in timed) / (seconds * cores),
            "busiest_rank": busiest,
            "busiest_rank_cpu": cpu[busiest],
            "rank0_cpu": None if first is None else first["cpu"] / first["seconds"],
            "rank0_wait": None if first is None else first["wait"] / first["seconds"],
            "rank_wait_max": max(waits),
            "rank_wait_median": float(np.median(waits)),
        }
    else:
        found |= dict.fromkeys(
            ("queue", "wake_delay", "cpu", "busiest_rank", "busiest_rank_cpu", "rank0_cpu"),
        ) | {"rank0_wait": None, "rank_wait_max": None, "rank_wait_median": None}
    if alive and seconds > 0:
        for name, key in (
            ("wakeups", "wakeups_per_second"),
            ("involuntary", "preempted_per_second"),
        ):
            found[key] = sum(spent.get(name, 0) for _, spent in alive) / seconds
    found["cpu_pressure_some"] = None if pressure is None else pressure.get("some")
    found["work"] = work_measures(alive)
    return found


def work_measures(alive: Sequence[tuple[int, Mapping[str, Any]]]) -> dict[str, Any] | None:
    """The ranks' real computation (``gradcode.fidelity.work``): its real and CPU seconds
    summed over the ranks, and per rank (``ranks``: rank, real, CPU) with its ``stretch``
    (real over CPU seconds: about 1 on a core of its own, more when it waited for one), the
    largest and the median stretch. ``None`` when no rank computed."""
    rows = [
        (rank, float(spent["work_real"]), float(spent["work_cpu"]))
        for rank, spent in alive
        if spent.get("work_real", 0) > 0 and spent.get("work_cpu", 0) > 0
    ]
    if not rows:
        return None
    stretch = [real / cpu for _, real, cpu in rows]
    return {
        "real": sum(real for _, real, _ in rows),
        "cpu": sum(cpu for _, _, cpu in rows),
        "stretch_max": max(stretch),
        "stretch_median": float(np.median(stretch)),
        "ranks": [[rank, round(real, 6), round(cpu, 6)] for rank, real, cpu in rows],
    }


def build_record(
    *,
    ranks: Sequence[Mapping[str, Any] | None],
    pressure: Mapping[str, Any] | None,
    cores: int,
    dilation: float,
    measured: Sequence[float],
    predicted: Sequence[float] | None,
    undilated: Sequence[float] | None,
    model: str,
    handoffs: int,
    prediction_note: str | None = None,
) -> dict[str, Any]:
    """The record: ``dilation``, ``machine`` (``machine_measures``), ``model`` (``kind``:
    ``links`` or ``injected delays``; with links the mean ``measured`` and ``predicted``
    iteration times, virtual seconds, and their ``ratio``; ``note`` where no prediction was
    made; both over the iterations after the session's first, which also makes the
    connections, where there are any), ``undilated`` (the mean seconds per iteration of real
    computation, which no dilation slows, and its ``share`` of the iteration),
    ``critical`` (the machine's delay on an iteration's critical path: ``handoffs`` ranks
    woken one after another, each waiting the run's ``wake_delay`` for a core, in virtual
    seconds and as a ``share`` of the iteration), ``stretched`` (how long that real
    computation waited for a core, ``stretched_wait``), ``verdict``, and ``tcp`` (what TCP
    did in the ranks' namespaces, ``tcp.section``: information, not judged)."""
    skip = 1 if len(measured) > 1 else 0
    times = np.asarray(measured[skip:], dtype=float)
    if predicted is not None:
        predicted = predicted[skip:]
    if undilated is not None:
        undilated = undilated[skip:]
    mean = float(times.mean()) if times.size else math.nan
    modelled: dict[str, Any] = {"kind": model, "measured": mean, "iterations": int(times.size)}
    if predicted is not None and len(predicted) == times.size and times.size:
        guess = float(np.mean(predicted))
        modelled |= {"predicted": guess, "ratio": mean / guess if guess > 0 else None}
    elif prediction_note is not None:
        modelled["note"] = prediction_note
    real = None
    if undilated is not None and len(undilated) == times.size and times.size:
        work = float(np.mean(undilated))
        real = {"seconds": work, "share": work / mean if mean > 0 else None}
    machine = machine_measures(ranks, pressure, cores)
    critical = None
    if machine.get("wake_delay") is not None and mean > 0:
        delay = handoffs * machine["wake_delay"] / dilation
        critical = {"handoffs": handoffs, "seconds": delay, "share": delay / mean}
    stretched = stretched_wait(real, machine.get("work"), mean)
    return {
        "dilation": dilation,
        "machine": machine,
        "model": modelled,
        "undilated": real,
        "critical": critical,
        "stretched": stretched,
        "verdict": verdict(machine, critical, model, stretched),
        "tcp": tcp.section(ranks),
    }


def stretched_wait(
    real: Mapping[str, Any] | None, work: Mapping[str, Any] | None, mean: float
) -> dict[str, Any] | None:
    """How long the iteration's real computation waited for a core: its undilated seconds
    less what they would be at the ranks' median stretch of 1 (``seconds``, a ``share`` of
    the iteration, the ``stretch``); ``None`` without both measures."""
    if real is None or work is None or not mean > 0:
        return None
    stretch = max(1.0, float(work["stretch_median"]))
    waited = real["seconds"] * (1.0 - 1.0 / stretch)
    return {"seconds": waited, "share": waited / mean, "stretch": stretch}


def one_line(record: Mapping[str, Any]) -> str | None:
    """The line a run the machine decided ends with (``None`` for one its model decided)."""
    said = record["verdict"]
    if said["decided_by"] != "machine":
        return None
    ratio = record["model"].get("ratio")
    against = f"; measured {ratio:.2f} times the {record['model']['kind']}' model" if ratio else ""
    return (
        f"fidelity: the machine, not the {record['model']['kind']}, decided this run's times "
        f"({'; '.join(said['reasons'])}{against})"
    )
