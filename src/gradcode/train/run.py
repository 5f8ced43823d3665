"""``python -m gradcode.train RUN.yaml``: one training run as an MPI job.

Phases, every rank taking part:

1. rank 0 validates the run file, builds the plan, checks the number of ranks, loads (or
   prepares) and partitions the data and looks for a checkpoint; any problem is one line on
   rank 0's stderr and every rank exits with status 2, before any computation;
2. the config is broadcast (every rank rebuilds the same plan), each worker receives the rows
   of its partitions only, rank 0 records every rank's pid, node and MPI transport
   (``gradcode.train.node``) in ``ranks.json`` (and ``summary.json``);
3. the roles run: master or ring coordinator on rank 0, workers (tree nodes) elsewhere;
   rank 0 writes ``log.jsonl``, checkpoints, ``model.npy`` and ``summary.json``;
4. the shutdown protocol ends every rank with status 0. An exception on any rank prints one
   line and aborts the whole job with status 1 (``MPI_Abort``), so no rank is left hanging.

With ``faults.tolerate`` (``gradcode.train.faults.failures``) the job must run on a
fault-tolerant MPI (``python -m gradcode.launch.ulfm``; checked in phase 1): workers that die
during phase 3 are permanent stragglers, the end of the job involves only the survivors (the
last collective runs on ``MPI_Comm_shrink``'s communicator), and a run whose code cannot go
on stops with one line and status ``EXIT_CANNOT_CONTINUE`` (3) after writing its checkpoint.

Resuming: rerunning the same command with the same output directory continues from the newest
checkpoint (``--fresh`` discards the previous outputs instead).

What only rank 0 or a rare run needs (the data sets, the node log's name, the cluster's links)
is imported where it is used: every rank of every job pays its module-level imports before
its first message (``tests/train/test_rank_imports.py``).
"""

from __future__ import annotations

import argparse
import faulthandler
import os
import shutil
import signal
import sys
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mpi4py import MPI

from gradcode import dilation, mpilibrary
from gradcode.blas import load_daxpy, single_threaded_blas
from gradcode.codes.base import GradientCode
from gradcode.codes.ring import RingCode
from gradcode.codes.tree import TreeCode
from gradcode.errors import UserError
from gradcode.fidelity import pressure, tcp, usage
from gradcode.runfile.config import ConfigError, RunConfig, load_config
from gradcode.runfile.plan import Plan, build_plan, check_world
from gradcode.runlogs.log import (
    LOG_FILE,
    MODEL_FILE,
    RANKS_FILE,
    SUMMARY_FILE,
    TRAJECTORY_FILE,
    write_json,
)
from gradcode.topology import TopologyVisitor
from gradcode.train import checkpoint as checkpoints
from gradcode.train.faults.failures import Failures, is_failure
from gradcode.train.node import describe_rank, summarize_ranks
from gradcode.train.runtime import RankContext, flat_links
from gradcode.train.session import CHECKPOINT_DIR, Session, peak_rss_mib
from gradcode.train.shares import IDLE_POLL, receive_share, worker_share
from gradcode.train.transport import quiet_barrier

if TYPE_CHECKING:
    from gradcode.runfile.dataset import TrainingData

PROGRAM = "gradcode.train"
#: seconds a ring worker that saw a neighbour die waits for rank 0 to end the job
RING_FAILURE_GRACE = 30.0


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog=f"mpiexec -n N python -m {PROGRAM}",
        description="Train one configuration (see gradcode.runfile.config for the YAML schema).",
        allow_abbrev=False,
    )
    parser.add_argument("run_file", help="run configuration (YAML)")
    parser.add_argument("--out", help="output directory (default: the file's output key)")
    parser.add_argument(
        "--fresh", action="store_true", help="discard previous outputs instead of resuming"
    )
    return parser.parse_args(argv)


@dataclass
class Setup:
    """What rank 0 prepared in phase 1."""

    config: RunConfig
    plan: Plan
    data: TrainingData
    out: Path
    resume: checkpoints.Checkpoint | None


def output_dir(config: RunConfig, override: str | None) -> Path:
    if override is not None:
        return Path(override)
    if config.output is not None:
        return Path(config.output)
    return Path("runs") / config.name


def prepare(args: argparse.Namespace, world_size: int) -> Setup:
    """Phase 1 on rank 0; ``ConfigError`` (or a data ``ValueError``) on any problem."""
    from gradcode.runfile.dataset import load_training_data

    config = load_config(args.run_file)
    plan = build_plan(config)
    check_world(plan, world_size)
    check_mpi(config)
    warn_links(config, args.run_file)
    check_dilation(config)
    data = load_training_data(config.data, plan.partitions, config.model.kind)
    plan.check_features(parameter_count(config, data))
    out = output_dir(config, args.out)
    if args.fresh:
        discard_outputs(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ConfigError(f"output: cannot create {out} ({error.strerror})") from None
    resume = checkpoints.load_latest(out / CHECKPOINT_DIR, config.fingerprint())
    return Setup(config, plan, data, out, resume)


def check_mpi(config: RunConfig) -> None:
    """``ConfigError`` when the run tolerates failures but its MPI does not."""
    if config.faults is None or not config.faults.tolerate or mpilibrary.fault_tolerant():
        return
    library = mpilibrary.describe()["version"]
    raise ConfigError(
        f"faults.tolerate: this job runs on {library} without fault tolerance, where a dead "
        "rank ends the job; start it with python -m gradcode.launch.ulfm -n N ... "
        "(gradcode train command prints the line)"
    )


def warn_links(config: RunConfig, run_file: str) -> None:
    """One line on stderr when the emulated cluster that is up has other links than the run
    file states. A warning, not an error: the stated links change nothing the runtime does
    but its ``auto`` choices and the predictions beside the run, and a run may rightly differ
    (inside ``gradcode cluster rate``, which changes the links but not the state file, or on
    a cluster with heterogeneous nodes that the run file states as one rate)."""
    links = config.network.links if config.network is not None else None
    if links is None:
        return
    # only rank 0 reads the cluster's state: the other ranks never import it (nor the rates)
    from gradcode.livecluster.links import stated_links_mismatch
    from gradcode.rate import Rate

    mismatch = stated_links_mismatch(Rate(links.rate), Rate(links.master_rate), links.latency)
    if mismatch is not None:
        print(f"{PROGRAM}: warning: {run_file}: {mismatch}", file=sys.stderr, flush=True)


def check_dilation(config: RunConfig) -> None:
    """``ConfigError`` when the run is on the emulated cluster's links (``network``) and its
    ``runtime.dilation`` is not the cluster's: its clock would measure the links K times off."""
    if config.network is None:
        return
    from gradcode.livecluster.links import dilation_mismatch

    mismatch = dilation_mismatch(config.runtime.dilation)
    if mismatch is not None:
        raise ConfigError(mismatch)


def discard_outputs(out: Path) -> None:
    """Remove what a previous run wrote into ``out`` (and nothing else)."""
    from gradcode.runlogs.nodelog import NODES_FILE

    for name in (LOG_FILE, SUMMARY_FILE, MODEL_FILE, TRAJECTORY_FILE, RANKS_FILE, NODES_FILE):
        (out / name).unlink(missing_ok=True)
    shutil.rmtree(out / CHECKPOINT_DIR, ignore_errors=True)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    # `kill -USR1 <pid>` prints where a rank is (diagnosing a hung job costs nothing otherwise)
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    world = MPI.COMM_WORLD
    rank = world.Get_rank()
    setup: Setup | None = None
    failure: tuple[str, int] | None = None
    if rank == 0:
        try:
            setup = prepare(args, world.Get_size())
        except UserError as exc:  # ConfigError, DataError, OptionError: the user's to fix
            failure = (" ".join(str(exc).split()), 2)
        except Exception as exc:  # a bug: still end every rank, with the traceback shown
            traceback.print_exc()
            failure = (f"{type(exc).__name__}: {' '.join(str(exc).split())}", 1)
    quiet_barrier(world, IDLE_POLL)
    failure = world.bcast(failure, root=0)
    if failure is not None:
        if rank == 0:
            print(f"{PROGRAM}: error: {failure[0]}", file=sys.stderr, flush=True)
        return failure[1]
    try:
        with single_threaded_blas(openmp=True):
            return train(world, setup)
    except Exception as exc:
        message = " ".join(str(exc).split()) or type(exc).__name__
        if rank != 0 and is_failure(exc) and mpilibrary.fault_tolerant():
            # a ring worker whose neighbour died: rank 0 sees it too, and ends the job with
            # the one line that names the failure and the checkpoint; wait for it
            dilation.sleep(RING_FAILURE_GRACE)
        print(f"{PROGRAM}: error on rank {rank}: {message}", file=sys.stderr, flush=True)
        if os.environ.get("GRADCODE_TRACEBACK"):
            traceback.print_exc()
        world.Abort(1)
    return 0


def train(world: MPI.Comm, setup: Setup | None) -> int:
    """Phases 2-4 (every rank); this rank's exit status."""
    rank = world.Get_rank()
    config: RunConfig = world.bcast(setup.config if setup is not None else None, root=0)
    # before anything is timed: every rank reads the same virtual clock from here on
    dilation.dilate(config.runtime.dilation)
    plan = setup.plan if setup is not None else build_plan(config)
    shape = world.bcast(_shape(setup) if setup is not None else None, root=0)
    parts, delivery = receive_share(world, plan, setup.data if setup is not None else None)
    ranks = world.gather(describe_rank(rank), root=0)
    placement = summarize_ranks(ranks) if rank == 0 else None
    one_clock = world.bcast(placement["one_clock"] if placement is not None else None, root=0)
    tolerant = config.faults is not None and config.faults.tolerate
    hosts = [r["host"] for r in placement["ranks"]] if placement is not None else None
    failures = Failures(world, enabled=tolerant, workers=plan.workers, hosts=hosts)
    ctx = RankContext(
        world=world,
        plan=plan,
        model=config.model.build(),
        features=shape["features"],
        rows=shape["rows"],
        l2=shape["l2"],
        parts=parts,
        poll=config.runtime.poll_interval,
        one_clock=bool(one_clock),
        failures=failures,
    )
    session = None
    if setup is not None:
        assert placement is not None
        session = Session(ctx, setup.data, setup.out, setup.resume)
        session.placement = placement
        session.data_delivery = delivery
        failures.began = session.wall_start
        # after the session: `start` is where this session resumes (``gradcode train inject``
        # fires only the kills still ahead)
        ranks = {"world_size": world.Get_size(), "start": session.start} | placement
        write_json(setup.out / RANKS_FILE, ranks)
    return plan.topology.accept(_PROGRAMS, plan.code)(world, ctx, session)


def parameter_count(config: RunConfig, data: TrainingData) -> int:
    """The length of the model's parameter vector on ``data`` (what every message carries);
    ``ConfigError`` when the model cannot take the data's rows."""
    try:
        return config.model.build().parameter_count(data.features)
    except ValueError as error:
        raise ConfigError(f"model.params: {error}") from None


def _shape(setup: Setup) -> dict[str, Any]:
    rows = setup.data.rows
    return {
        "features": parameter_count(setup.config, setup.data),
        "rows": rows,
        "l2": setup.config.model.l2_value(rows),
    }


def _warm_up(ctx: RankContext) -> None:
    """A worker's model pays its one-time costs (a network's compilation) on its partitions
    before the links are made, so that they land in no timed iteration."""
    if 0 < ctx.rank <= ctx.plan.workers:
        ctx.model.warm_up(ctx.parts.values())


def _run_master_worker(world: MPI.Comm, ctx: RankContext, session: Session | None) -> int:
    # each rank imports its own role only, before the links are made (a worker never loads
    # the master's decoders and reducers)
    if session is not None:
        from gradcode.train.master import Master
    elif ctx.rank > ctx.plan.workers:
        from gradcode.train.faults.spares import run_spare
    else:
        from gradcode.train.worker import Worker
    from gradcode.train.tree import tree_links

    code, topology = ctx.plan.code, ctx.plan.topology
    tree = topology.tree(code)
    if ctx.rank == 0 or (ctx.rank <= ctx.plan.workers and topology.combines(code, ctx.worker)):
        # this rank decodes or reduces its children's messages: the BLAS that combines them
        # loads before the links are made (collective), so that no rank starts iterating
        # while another is still loading it
        load_daxpy()
    _warm_up(ctx)
    # the others wait asleep: inside MPICH's collective they would spin and take the cores
    # from the loading ranks (n = 20 on two cores: the first iteration ended 2.9-3.1 s after
    # the session began, 0.7 s without the spinning)
    quiet_barrier(world, IDLE_POLL)
    if tree is not None:
        links = tree_links(world, tree)
    else:
        links = flat_links(world, ctx.plan.workers)
    began = _began(session)
    if session is None:
        if ctx.rank > ctx.plan.workers:
            run_spare(ctx, links)
        else:
            Worker(ctx, links).run()
        _rank_end(world, ctx, began)
        return 0
    data, plan = session.data, ctx.plan
    master = Master(ctx, links, session, share=lambda worker: worker_share(plan, data, worker))
    extra = master.run()
    stopped = master.stopped
    if stopped is not None:
        extra["stopped"] = session.stop(stopped)
    session.finalize(extra | _faults(ctx), *_rank_end(world, ctx, began))
    if stopped is None:
        return 0
    print(f"{PROGRAM}: stopped: {extra['stopped']['message']}", file=sys.stderr, flush=True)
    return stopped.exit_status


def _faults(ctx: RankContext) -> dict[str, Any]:
    """``summary.json``'s ``mpi`` and, with ``faults``, what was planned and what failed."""
    fields: dict[str, Any] = {"mpi": mpilibrary.describe()}
    if ctx.failures is not None and ctx.tolerant:
        fields["failures"] = ctx.failures.records()
        fields["failed_workers"] = ctx.failures.workers()
    return fields


def _began(session: Session | None) -> dict[str, Any]:
    """What this rank (and on rank 0 the machine's CPU pressure) had cost when its timed part
    began, and its network namespace's TCP counters (``gradcode.fidelity``)."""
    if session is not None:
        session.pressure_began = pressure.sample()
    return usage.sample() | {"tcp": tcp.sample()}


Ended = tuple[list[float | None] | None, list[dict[str, Any] | None] | None]


def _rank_end(world: MPI.Comm, ctx: RankContext, began: dict[str, Any]) -> Ended:
    """Every rank's peak RSS and what its part cost the machine since ``began``
    (``gradcode.fidelity.usage``, with what TCP did in its namespace: ``tcp``) on rank 0
    (``None`` elsewhere); with failures, the survivors gather on ``MPI_Comm_shrink``'s
    communicator and dead ranks are ``None``."""
    spent = usage.between(began, usage.sample())
    spent["tcp"] = tcp.between(began["tcp"], tcp.sample())
    mine = (world.Get_rank(), peak_rss_mib(), spent)
    if not ctx.tolerant:
        pairs = world.gather(mine, root=0)
    else:
        alive = world.Shrink()
        try:
            pairs = alive.gather(mine, root=0)
        finally:
            alive.Free()
    if pairs is None:
        return None, None
    peaks: list[float | None] = [None] * world.Get_size()
    spent: list[dict[str, Any] | None] = [None] * world.Get_size()
    for rank, value, cost in pairs:
        peaks[rank], spent[rank] = value, cost
    return peaks, spent


def _run_ring(world: MPI.Comm, ctx: RankContext, session: Session | None) -> int:
    from gradcode.train.ring import RingCoordinator, RingWorker, ring_comm

    _warm_up(ctx)
    comm = ring_comm(world)
    start, state = world.bcast(
        (session.start, session.state) if session is not None else None, root=0
    )
    began = _began(session)
    if session is None:
        RingWorker(ctx, comm, start, state).run()
        _rank_end(world, ctx, began)
        return 0
    coordinator = RingCoordinator(ctx, session)
    extra = coordinator.run()
    if coordinator.stopped is not None:
        # the ring's workers wait on their dead neighbour: nothing ends them but an abort
        stopped = session.stop(coordinator.stopped)
        print(f"{PROGRAM}: stopped: {stopped['message']}", file=sys.stderr, flush=True)
        world.Abort(coordinator.stopped.exit_status)
    session.finalize(extra | _faults(ctx), *_rank_end(world, ctx, began))
    return 0


#: a rank's program: every rank of a job runs the same one
Program = Callable[[MPI.Comm, RankContext, "Session | None"], int]


class _Programs(TopologyVisitor[Program]):
    """The rank program of each topology: a master (a tree's root) with workers, or a ring."""

    def flat(self, code: GradientCode) -> Program:
        return _run_master_worker

    def tree(self, code: TreeCode) -> Program:
        return _run_master_worker

    def ring(self, code: RingCode) -> Program:
        return _run_ring


_PROGRAMS = _Programs()
