"""Rank 0's bookkeeping: optimizer state, metrics, the log, checkpoints and final outputs.

The master (or the ring's coordinator) hands each decoded gradient sum to ``step`` and each
finished iteration's record to ``finish_iteration``; metrics, logging and checkpoints happen
there, outside the timed part of the iteration (the workers are idle meanwhile, and ``time``
in the log counts training time only, as the papers' time axes do).
"""

from __future__ import annotations

import os
import resource
import sys
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from gradcode import dilation
from gradcode.fidelity import pressure
from gradcode.fidelity.record import build_record, one_line
from gradcode.runlogs.log import (
    MODEL_FILE,
    SUMMARY_FILE,
    TRAJECTORY_FILE,
    RunLog,
    write_array,
    write_json,
)
from gradcode.train import checkpoint as checkpoints
from gradcode.train.faults.caught import DecodingFailed
from gradcode.train.faults.failures import CannotContinue, describe_workers
from gradcode.train.protocol import clock
from gradcode.train.runtime import RankContext

if TYPE_CHECKING:
    from gradcode.runfile.dataset import TrainingData

CHECKPOINT_DIR = "checkpoints"

#: how ``transfer`` of a message in ``log.jsonl`` is measured (``summary.json``)
TRANSFER_METHOD = (
    "receiver's clock just after MPI reported its posted receive complete minus the "
    "sender's clock when it called MPI_Isend (sent, in the message header); valid when both "
    "ranks read one monotonic clock (one kernel: same boot_id, as network namespaces on one "
    "host do), else null. Includes the receiver's polling delay (at most "
    "runtime.poll_interval)."
)


def peak_rss_mib() -> float:
    """This process's peak resident set size so far, in MiB (Linux's ru_maxrss is in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def describe_peak_rss(per_rank: Sequence[float | None]) -> dict[str, object]:
    """``summary.json``'s ``peak_rss_mib``: every rank's peak resident set size (MiB, this
    session), rank 0's, the largest and median of the other ranks', and their total (what
    the whole job held at most, were every rank at its peak together). A rank that died is
    ``None`` and counts in none of them."""
    ranks = [None if value is None else round(float(value), 1) for value in per_rank]
    others = [value for value in ranks[1:] if value is not None] or [0.0]
    return {
        "rank0": ranks[0],
        "worker_max": max(others),
        "worker_median": float(np.median(others)),
        "total": round(sum(value for value in ranks if value is not None), 1),
        "per_rank": ranks,
    }


class Session:
    """Training state and outputs of one run on rank 0."""

    def __init__(
        self,
        ctx: RankContext,
        data: TrainingData,
        out: Path,
        resume: checkpoints.Checkpoint | None,
    ) -> None:
        self.ctx, self.data, self.out = ctx, data, out
        self.config = ctx.plan.config
        self.optimizer = ctx.plan.optimizer()
        self.fingerprint = self.config.fingerprint()
        if resume is None:
            start = ctx.model.initial_parameters(data.features, self.config.seed)
            self.state = self.optimizer.init(start)
            self.start, self.previous, self.train_time = 0, None, 0.0
            self.trajectory: list[np.ndarray] = []
        else:
            self.state, self.start = resume.state, resume.completed
            self.previous, self.train_time = resume.previous, resume.train_time
            self.trajectory = list(resume.trajectory) if resume.trajectory is not None else []
        self.resumed_from = self.start if resume is not None else None
        self.completed = self.start
        self.log = RunLog(
            out, keep_below=self.start, restored=resume.log if resume is not None else None
        )
        self.wall_start = clock()
        self.iteration_times: list[float] = []
        self.stale = 0
        self.caught: dict[int, int] = {}
        self.last_metrics: dict[str, float] = {}
        #: ``gradcode.train.node.summarize_ranks`` of the job (set by ``run.train``)
        self.placement: dict[str, Any] | None = None
        #: how many workers got their rows each way (``gradcode.train.shares``)
        self.data_delivery: dict[str, int] = {}
        #: the machine's CPU pressure when the timed part began (``gradcode.fidelity``)
        self.pressure_began: dict[str, Any] | None = None
        #: this session's iteration records, for the links' prediction (``_fidelity``)
        self.records: list[dict[str, Any]] = []
        self.undilated: list[float] = []

    # -- optimisation -----------------------------------------------------------------------
    def point(self) -> np.ndarray:
        return self.optimizer.point(self.state)

    def model(self) -> np.ndarray:
        return self.optimizer.model(self.state)

    def step(self, t: int, data_sum: np.ndarray, point: np.ndarray) -> None:
        """Apply the optimizer to the decoded sum of per-example gradients at ``point``."""
        self.previous = self.model().copy()
        gradient = self.ctx.model.full_gradient(data_sum, point, self.ctx.rows, self.ctx.l2)
        self.optimizer.step(self.state, t, gradient)

    # -- per iteration ----------------------------------------------------------------------
    def finish_iteration(self, t: int, record: dict[str, Any]) -> None:
        """Log iteration ``t`` (its ``iteration_time`` is in ``record``), evaluate, checkpoint."""
        self.train_time += record["iteration_time"]
        self.iteration_times.append(record["iteration_time"])
        self.completed = t + 1
        if self.config.log.trajectory:
            self.trajectory.append(self.model().copy())
        head = {"iteration": t, "time": self.train_time, "wall": clock() - self.wall_start}
        if dilation.factor() != 1:
            head["dilation"] = dilation.factor()
        record = head | record
        self.undilated.append(undilated_seconds(record))
        if self.config.network is not None and self.config.network.links is not None:
            self.records.append(record)
        if self._metrics_due(t):
            began = clock()
            self.last_metrics = self.metrics()
            record.update(self.last_metrics)
            record["metric_time"] = clock() - began
            self._progress(t, record)
        self.log.write(record)
        every = self.config.checkpoint.every
        if every and self.completed % every == 0 and self.completed < self.config.iterations:
            self.checkpoint()

    def _progress(self, t: int, record: dict[str, Any]) -> None:
        # one line per metric point on stderr, so long runs show progress in workflow logs
        metrics = " ".join(
            f"{key} {record[key]:.6g}"
            for key in ("loss", "auc", "accuracy", "relative_error", "normalized_error")
            if key in record
        )
        print(
            f"{self.config.name}: iteration {t + 1}/{self.config.iterations}, "
            f"training time {self.train_time:.3f} s, {metrics}",
            file=sys.stderr,
            flush=True,
        )

    def _metrics_due(self, t: int) -> bool:
        every = self.config.log.metrics_every
        last = t == self.config.iterations - 1
        return last or (every > 0 and (t + 1) % every == 0)

    def metrics(self) -> dict[str, float]:
        """Training objective and the paper's metrics of the current iterate."""
        theta, data, model = self.model(), self.data, self.ctx.model
        values = {"loss": model.loss(data.X_train, data.y_train, theta, self.ctx.l2)}
        values.update(
            model.metrics(theta, self.previous, data.X_test, data.y_test, data.theta_star)
        )
        return values

    def checkpoint(self) -> Path:
        """Write a checkpoint of the iterations completed so far; its path."""
        trajectory = np.array(self.trajectory) if self.config.log.trajectory else None
        return checkpoints.save(
            self.out / CHECKPOINT_DIR,
            checkpoints.Checkpoint(
                completed=self.completed,
                state=self.state,
                previous=self.previous,
                train_time=self.train_time,
                fingerprint=self.fingerprint,
                trajectory=trajectory,
                log=self.log.text(),
            ),
            self.config.checkpoint.keep,
        )

    def stop(self, stopped: CannotContinue | DecodingFailed) -> dict[str, Any]:
        """Failures left the code unable to decode, or a decoding failed: checkpoint what was
        completed and say so in one line (``summary.json``'s ``stopped``; ``message`` is the
        line, ``kind`` "failures" or "decoding")."""
        path = self.checkpoint()
        if isinstance(stopped, DecodingFailed):
            message = (
                f"decoding failed at iteration {stopped.iteration}: {stopped.reason}; no step "
                f"was taken along it; last checkpoint {path} ({self.completed} iterations "
                "done, each decoded within the code's bound)"
            )
            return {
                "kind": "decoding",
                "message": message,
                "iteration": stopped.iteration,
                "reason": stopped.reason,
                "refusals": stopped.refusals,
                "checkpoint": str(path),
                "completed": self.completed,
            }
        failed = f"{describe_workers(stopped.failed)} failed; " if stopped.failed else ""
        message = (
            f"{failed}at iteration {stopped.iteration} "
            f"{stopped.reason}; last checkpoint {path} ({self.completed} iterations done): "
            "rerun the same command with every worker to resume from it"
        )
        return {
            "kind": "failures",
            "message": message,
            "iteration": stopped.iteration,
            "failed_workers": [failure.worker for failure in stopped.failed],
            "checkpoint": str(path),
            "completed": self.completed,
        }

    def _network(self) -> dict[str, Any]:
        """``communication`` (emulated or real links), ``ranks``/``nodes`` (where each rank
        ran, its transport) and ``transfer_timing`` (how ``transfer`` in the log is measured)."""
        plan, placement = self.ctx.plan, self.placement or {}
        network = self.config.network
        if network is not None:
            communication: dict[str, Any] = {"mode": "links", "injected": False}
            if network.links is not None:
                communication["links"] = asdict(network.links)
            # the emulated cluster's links as they are now (a delayer that died: no latency)
            from gradcode.livecluster.links import links_record

            cluster = links_record()
            if cluster is not None:
                communication["cluster"] = cluster
        elif plan.bandwidth is not None:
            communication = {"mode": "single-port-emulation", "injected": True}
        else:
            communication = {"mode": "none", "injected": False}
        one_clock = bool(placement.get("one_clock", False))
        return {
            "communication": communication,
            "ranks": placement.get("ranks", []),
            "nodes": placement.get("nodes", []),
            "shm_across_namespaces": placement.get("shm_across_namespaces", False),
            # how the workers got their rows before the timed part (gradcode.train.shares)
            "data_delivery": self.data_delivery,
            "transfer_timing": {
                "method": "sender-timestamp",
                "description": TRANSFER_METHOD,
                "clock": "time.perf_counter (CLOCK_MONOTONIC)",
                "comparable": one_clock,
            },
        }

    def _fidelity(
        self, summary: dict[str, Any], spent: Sequence[dict[str, Any] | None] | None
    ) -> dict[str, Any]:
        """``summary.json``'s ``fidelity`` (``gradcode.fidelity.record``): what the machine
        cost the run (``spent``: every rank's ``usage.between`` of its timed part), the
        links' model against the measured times, the undilated share, the verdict."""
        links = self.config.network.links if self.config.network is not None else None
        predicted, note = None, None
        if links is not None:
            # here, not at the top: the links' model (gradcode.timing) costs every MPI rank's
            # start-up, and only a run over real links predicts with it
            from gradcode.runlogs.timings import predicted_links_time

            way = summary.get("distribution", {}).get("way", "isend")
            got = summary.get("collection", {}).get("way", "push")
            try:
                predicted = [
                    predicted_links_time(
                        self.ctx.plan.code,
                        record,
                        links,
                        self.ctx.features,
                        distribution=way,
                        collection=got,
                    )
                    for record in self.records
                ]
            except (ValueError, KeyError) as error:
                note = f"no prediction: {' '.join(str(error).split())}"
        return build_record(
            ranks=list(spent) if spent is not None else [],
            pressure=pressure.between(self.pressure_began, pressure.sample()),
            cores=len(os.sched_getaffinity(0)),
            dilation=dilation.factor(),
            measured=self.iteration_times,
            predicted=predicted,
            undilated=self.undilated,
            model="links" if self.config.network is not None else "injected delays",
            handoffs=self.ctx.plan.topology.handoffs(self.ctx.plan.code),
            prediction_note=note,
        )

    # -- the end ----------------------------------------------------------------------------
    def finalize(
        self,
        summary: dict[str, Any],
        peak_rss: Sequence[float | None] | None = None,
        spent: Sequence[dict[str, Any] | None] | None = None,
    ) -> None:
        """Final checkpoint, ``model.npy``, ``trajectory.npy`` and ``summary.json``;
        ``peak_rss``: every rank's peak RSS in MiB (rank 0's is taken again at the end);
        ``spent``: what each rank's timed part cost the machine (``gradcode.fidelity``). A
        run the machine decided ends with a line saying so."""
        fidelity = self._fidelity(summary, spent)
        self.log.close()
        self.checkpoint()
        write_array(self.out / MODEL_FILE, self.model())
        if self.config.log.trajectory:
            shape = (0, self.ctx.features)
            trajectory = np.array(self.trajectory) if self.trajectory else np.empty(shape)
            write_array(self.out / TRAJECTORY_FILE, trajectory)
        if not self.last_metrics:
            self.last_metrics = self.metrics()
        plan = self.ctx.plan
        peaks = list(peak_rss) if peak_rss is not None else [0.0]
        peaks[0] = max(peaks[0] or 0.0, peak_rss_mib())
        times = np.array(self.iteration_times) if self.iteration_times else np.array([np.nan])
        payload = (
            {
                "name": self.config.name,
                "scheme": self.config.scheme.name,
                "scheme_params": plan.scheme_params(),
                "topology": plan.topology.name,
                "world_size": self.ctx.world.Get_size(),
                "workers": plan.workers,
                "partitions": plan.partitions,
                "iterations": self.config.iterations,
                "completed": self.completed,
                "resumed_from": self.resumed_from,
                "data": self.data.describe(),
                "model": {"kind": self.config.model.kind, "l2": self.ctx.l2}
                | ({"params": self.config.model.params} if self.config.model.params else {}),
                "optimizer": self.config.optimizer.__dict__,
                "final": self.last_metrics,
                "train_time": self.train_time,
                "wall_time": clock() - self.wall_start,
                "iteration_time": {
                    "mean": float(np.mean(times)),
                    "median": float(np.median(times)),
                    "this_session": len(self.iteration_times),
                },
                "stale_discarded": self.stale,
                "peak_rss_mib": describe_peak_rss(peaks),
                "adversaries_caught": {str(k): v for k, v in sorted(self.caught.items())},
                "fingerprint": self.fingerprint,
                # every time here and in log.jsonl is in virtual seconds: real ones / dilation
                "dilation": dilation.factor(),
                "fidelity": fidelity,
                "config": self.config.as_dict(),
            }
            | self._network()
            | summary
        )
        write_json(self.out / SUMMARY_FILE, payload)
        line = one_line(fidelity)
        if line is not None:
            print(f"{self.config.name}: {line}", file=sys.stderr, flush=True)


def undilated_seconds(record: dict[str, Any]) -> float:
    """The seconds of real computation in a logged iteration, which no dilation slows: the
    master's own (decoding, which includes an aggregation and an attack's emulation, and the
    update) and the longest measured computation behind a message it used."""
    own = sum(float(record.get(key) or 0.0) for key in ("decode_time", "update_time"))
    used = set(map(str, record.get("used") or ()))
    messages = [m for m in record.get("messages") or () if isinstance(m, dict)]
    behind = [m for m in messages if str(m.get("key")) in used] or messages
    return own + max((float(m.get("compute") or 0.0) for m in behind), default=0.0)
