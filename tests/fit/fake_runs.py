"""Run directories written from paper 000's model, as the runtime logs them (no MPI).

Every iteration draws ``X1``, ``X2`` per worker, the message of worker ``i`` arrives at
``start + p X1 + q X2`` (``start``: when the worker had the model), the master decodes at the
code's completion time and takes ``overhead`` more; messages after that are not logged (their
senders are censored), exactly as ``gradcode.train.master`` does.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from gradcode.codes import build
from gradcode.rate import Rate
from gradcode.train.protocol import H

FEATURES = 1000
BYTES = 8 * FEATURES + 8 * H
#: a link run's results: their bytes over this rate, bytes per second
RATE = 4.0e6


def write_run(
    directory: Path,
    scheme: str,
    params: dict,
    *,
    t1: float,
    lambda1: float,
    t2: float,
    lambda2: float,
    iterations: int,
    seed: int,
    overhead: float = 0.002,
    start: float = 0.001,
    one_clock: bool = True,
    links: tuple[float, ...] | None = None,
    latency: float | tuple[float, ...] = 0.0,
    queueing: float = 0.0,
    bucket: int = 0,
) -> Path:
    """``links``: the run went over real links, worker ``i`` got the model at ``links[j]``
    for a random ``j`` each iteration, and its results (``8 H`` bytes of header and the
    code's message length in float64s) took ``latency`` (or worker ``i``'s, ``latency[i]``:
    links that are not one latency for all) plus their bytes over ``RATE`` plus an
    exponential wait of mean ``queueing`` (the master's port, polling); ``bucket``: the
    emulated cluster's token bucket (bytes) on every worker's link, recorded in the summary as
    a cluster run records it, which lets that much of each result leave at once."""
    code = build(scheme, **params)
    rng = np.random.default_rng(seed)
    latencies = np.broadcast_to(np.asarray(latency, dtype=np.float64), (code.n,))
    directory.mkdir(parents=True)
    summary = {
        "scheme": scheme,
        "scheme_params": params,
        "topology": "flat",
        "workers": code.n,
        "transfer_timing": {"comparable": one_clock},
        "communication": {"mode": "links" if links else "none"},
        "data": {"features": FEATURES},
        "config": {"stragglers": {"model": "master-worker", "params": {}, "time_unit": 1.0}},
    }
    if bucket:
        egress = str(Rate.from_bits(8 * RATE))
        summary["communication"]["cluster"] = {
            "nodes": [
                {"name": f"node{i}", "egress": egress, "egress_bucket": bucket}
                for i in range(code.n + 1)
            ]
        }
        summary["ranks"] = [{"rank": i, "host": f"node{i}"} for i in range(code.n + 1)]
    (directory / "summary.json").write_text(json.dumps(summary))
    keys = code.all_message_keys()
    nbytes = 8 * code.message_length(FEATURES) + 8 * H
    lines = []
    for t in range(iterations):
        x1 = t1 + rng.exponential(1 / lambda1, code.n)
        x2 = t2 + rng.exponential(1 / lambda2, code.n)
        subsets = np.array([code.data_fraction(key) * code.n for key in keys])
        workers = np.array([code.worker_of(key) for key in keys])
        y = subsets * x1[workers] + x2[workers] / code.m
        starts = np.full(code.n, start) if links is None else rng.permutation(links)
        y_at = y + starts[workers]  # arrival at the master, since the iteration began
        done = float(code.completion_times(y_at[None, :])[0])
        messages = []
        for q, key in enumerate(keys):
            if y_at[q] > done:
                continue
            w = int(workers[q])
            work = float(subsets[q] * x1[w])
            messages.append(
                {
                    "key": key,
                    "worker": w,
                    "compute": 0.25 * work,
                    "injected_compute": 0.75 * work,
                    "injected_comm": 0.0 if one_clock else float(x2[w] / code.m),
                    "started": float(starts[w]),
                    "arrival": float(y_at[q]),
                    "transfer": (
                        (
                            latencies[w] + (nbytes - bucket) / RATE + _wait(rng, queueing)
                            if links
                            else 0.001
                        )
                        if one_clock
                        else None
                    ),
                    "bytes": nbytes,
                }
            )
        lines.append(
            {
                "iteration": t,
                "iteration_time": done + overhead,
                "wait_time": done,
                "messages": messages,
            }
        )
    (directory / "log.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return directory


def _wait(rng: np.random.Generator, mean: float) -> float:
    """An exponential wait of ``mean`` seconds (none, and no draw, for 0)."""
    return float(rng.exponential(mean)) if mean else 0.0


def write_tree_run(
    directory: Path,
    params: dict,
    *,
    t1: float,
    lambda1: float,
    t2: float,
    lambda2: float,
    iterations: int,
    seed: int,
    overhead: float = 0.002,
    lognormal: bool = False,
) -> Path:
    """A CodedReduce run as the runtime logs it: ``log.jsonl`` (the master's view) and
    ``nodes.jsonl`` (every node's own work and link delay). The next model reaches the nodes
    ``overhead`` after the master decoded: a node whose work takes longer is cut short then.
    ``lognormal``: the computation's excess over ``t1`` is lognormal (same mean), not the
    model's exponential."""
    from gradcode.timing.tree import tree_outcome

    code = build("coded-reduce", **params)
    rng = np.random.default_rng(seed)
    directory.mkdir(parents=True)
    summary = {
        "scheme": "coded-reduce",
        "scheme_params": params,
        "topology": "tree",
        "workers": code.n,
        "transfer_timing": {"comparable": True},
        "communication": {"mode": "none"},
        "data": {"features": FEATURES},
        "config": {"stragglers": {"model": "master-worker", "params": {}, "time_unit": 1.0}},
    }
    (directory / "summary.json").write_text(json.dumps(summary))
    subsets = np.array([code.data_fraction(node) * code.n for node in range(code.n)])
    log, nodes = [], []
    for t in range(iterations):
        if lognormal:
            excess = rng.lognormal(np.log(1 / lambda1) - 0.125, 0.5, code.n)
        else:
            excess = rng.exponential(1 / lambda1, code.n)
        work = subsets * (t1 + excess)
        link = (t2 + rng.exponential(1 / lambda2, code.n)) / code.m
        done = float(tree_outcome(code, (work + link)[None, :], 0.0).times[0])
        cut = done + overhead
        rows = [
            {
                "worker": v,
                "complete": bool(work[v] <= cut),
                "work": float(work[v]) if work[v] <= cut else 0.0,
                "elapsed": float(min(work[v], cut)),
                "budget": cut,
                "injected_comm": float(link[v]),
                "width": FEATURES // code.m,
            }
            for v in range(code.n)
        ]
        log.append({"iteration": t, "iteration_time": cut, "wait_time": done, "messages": []})
        nodes.append({"iteration": t, "nodes": rows})
    for name, lines in (("log.jsonl", log), ("nodes.jsonl", nodes)):
        (directory / name).write_text("".join(json.dumps(line) + "\n" for line in lines))
    return directory
