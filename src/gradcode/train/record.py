"""The master's per-iteration record (``log.jsonl``; ``Session`` adds ``iteration``, ``time``,
``wall`` and the metrics):

- ``iteration_time``: from sending the model to the end of the update (``wait_time`` until
  decodable, ``decode_time``, ``update_time``);
- ``used``: the message keys handed to the reducer; ``adversaries``: workers caught lying;
  ``attack_time``: seconds the master spent forging an omniscient attack's messages
  (``gradcode.train.reducers``: the reducer's fields);
- ``messages``: per result of this iteration taken off the wire, its ``key``, ``worker``,
  ``received`` (bytes in memory) and ``arrival`` (after the emulated single port) in seconds
  since the iteration started, and the sender's measured ``compute`` and injected
  ``injected_compute`` / ``injected_comm`` seconds, ``sent`` (the sender's clock when it
  called ``MPI_Isend``) and ``transfer``, the measured transfer time: from ``sent`` to when
  the master's posted receive was seen complete (``null`` unless every rank reads one clock;
  ``summary.json``'s ``transfer_timing``);
- ``injected``: the delays the straggler model drew for every worker (``start``,
  ``compute`` per partition, ``comm`` per full-length vector) and ``persistent`` workers;
- ``bytes_received``, ``stale`` (late results discarded during the iteration);
- ``intake_time``: seconds the port's ``Intake`` spent checking this iteration's results, and
  ``refused`` (only when some were): the results it refused, each with its sender, kind and
  reason (``gradcode.train.intake``, ``gradcode.train.refusals``; ``summary.json``'s
  ``refused`` lists every one of the run);
- with ``runtime.collection`` pull (``gradcode.runfile.collection``): ``notices``, per notice
  of a ready message taken off the wire, its ``key``, ``worker``, ``arrival``, the sender's
  ``started``, ``compute`` and ``injected_compute``, and whether the master ``pulled`` it
  (``messages`` then holds the pulled results only; ``gradcode.train.pulling``);
- with ``faults.tolerate``: ``failed`` (every worker known dead so far) and ``failures`` (those
  detected during this iteration: ``gradcode.train.faults.failures.Failure``;
  ``gradcode.train.faults.roster``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gradcode.train.intake import MALFORMED, Refusal, non_finite
from gradcode.train.refusals import Refused
from gradcode.train.transport import Result


def times(began: float, ready: float, decoded: float, ended: float) -> dict[str, float]:
    """The iteration's ``iteration_time`` and its parts."""
    return {
        "iteration_time": ended - began,
        "wait_time": ready - began,
        "decode_time": decoded - ready,
        "update_time": ended - decoded,
    }


def describe(
    result: Result, key: Any, began: float, *, one_clock: bool, scatter: bool
) -> dict[str, Any]:
    """One result's entry in ``messages`` (module docstring); with ``scatter`` how the
    sender's model came together too: its last chunk and how long the sender had waited for
    it, and for the others."""
    entry = {
        "key": key,
        "worker": int(result.field("worker")),
        "received": result.arrived - began,
        "arrival": result.accepted - began,
        "bytes": result.nbytes,
        "compute": result.field("compute"),
        "injected_compute": result.field("injected_compute"),
        "injected_comm": result.field("injected_comm"),
        "started": result.field("started") - began,
        "sent": result.field("sent") - began,
        "transfer": result.completed - result.field("sent") if one_clock else None,
        "corrupted": bool(result.field("corrupted")),
    }
    if scatter:
        entry |= {
            "model_last": int(result.field("model_last")),
            "model_wait": result.field("model_wait"),
            "model_span": result.field("model_span"),
        }
    return entry


def injected(delays: Any, persistent: tuple[int, ...] | list[int]) -> dict[str, Any]:
    """``injected``: one iteration's drawn ``delays`` and the ``persistent`` stragglers."""
    return {
        "start": delays.start,
        "compute": delays.compute,
        "comm": delays.comm,
        "persistent": list(persistent),
    }


def sound_reports(
    reports: dict[int, np.ndarray], workers: int, refused: Refused
) -> dict[int, np.ndarray]:
    """The ``DONE`` reports the summary can take: at least ``[stale, sent]``, every value
    finite; the others are named in ``refused`` and left out (a liar's report must not crash
    the summary, nor put NaN in it)."""
    sound = {}
    for rank, report in reports.items():
        reason = "shorter than [stale, sent]" if report.size < 2 else non_finite(report)
        if reason is None:
            sound[rank] = report
            continue
        worker = rank - 1 if rank <= workers else None
        refusal = Refusal(rank, worker, refused.iteration, MALFORMED, f"DONE: {reason}")
        refused.take([refusal], lambda refusal: False)
    return sound
