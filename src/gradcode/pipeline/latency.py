"""Runs whose run file states their links' latency (``network.links.latency``): on the emulated
cluster the workflow runs them inside ``gradcode cluster latency`` at that latency, on the
job's nodes only and for the job only (rule ``train_latency``), so one cluster serves a sweep
over latencies without coming down; ``latency.json`` in the run's folder records when the
latency held. A run that states none runs on the links as they are (rule ``train``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gradcode.pipeline.runs import TrainingRuns


def states_latency(document: Mapping[str, Any]) -> bool:
    """Whether a run document gives ``network.links.latency``."""
    network = document.get("network") or {}
    links = network.get("links") if isinstance(network, Mapping) else None
    return isinstance(links, Mapping) and links.get("latency") is not None


def latency_runs(runs: TrainingRuns) -> dict[str, str]:
    """Run id -> the latency its links state (``gradcode.duration``'s spelling), for the runs
    that state one."""
    stated = {}
    for run, (_source, document) in runs.runs.items():
        if states_latency(document):
            stated[run] = runs.plan(run).config.network.links.latency_text
    return stated
