"""What a training job asks SLURM for: memory per CPU and minutes, computed from its run."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from gradcode.pipeline import resources
from gradcode.pipeline.resources import (
    DataShape,
    iteration_seconds,
    mem_mb_per_cpu,
    rank_peaks_mib,
    runtime_minutes,
    worker_share_bytes,
)
from gradcode.pipeline.runs import collect_runs
from gradcode.runfile.config import parse_config
from gradcode.runfile.plan import build_plan

ROOT = Path(__file__).resolve().parents[2]

#: the prepared data sets of the measured runs (their meta.json shapes)
GISETTE_STANDIN = DataShape(6552, 5001, 448, 4_263_783, 291_151, dense=False)
SYNTHETIC_LINEAR = DataShape(7644, 6500, 0, 49_686_000, 0, dense=True)
SYNTHETIC_LOGISTIC = DataShape(2000, 50, 500, 100_000, 25_000, dense=True)
AMAZON = DataShape(26215, 241_915, 6554, 1_153_460, 288_376, dense=False)

#: peak RSS per rank (MiB) measured with `peak_rss_mib` of summary.json (README, "On a SLURM
#: cluster"): (experiment file, run, data, rank 0, largest worker)
MEASURED = [
    ("config/experiments/smoke/ye-abbe-amazon.yaml", "n10-d10-s9-m1", AMAZON, 237.1, 130.2),
    ("config/experiments/ye-abbe-amazon.yaml", "n20-uncoded", AMAZON, 287.7, 95.5),
    ("config/experiments/paper/coded-reduce-fig8.yaml", "GC", GISETTE_STANDIN, 284.3, 125.3),
    ("config/experiments/paper/coded-reduce-fig9.yaml", "a3-GC", GISETTE_STANDIN, 303.3, 129.0),
    ("config/experiments/coded-reduce-fig10.yaml", "GC", SYNTHETIC_LINEAR, 900.1, 518.9),
]


def plan_of(experiment: str, run: str):
    runs = collect_runs([], [experiment], ROOT)
    (name,) = runs.experiments
    return runs.plan(f"{name}/{run}")


def smoke_plan(**changes):
    document = {
        "iterations": 20,
        "data": {"dataset": "synthetic-logistic", "variant": "small"},
        "model": {"kind": "logistic"},
        "scheme": {"name": "frc", "params": {"n": 4, "s": 1}},
        "optimizer": {"kind": "gd", "step": 1.0},
    } | changes
    return build_plan(parse_config(document))


def test_the_shape_comes_from_meta_json():
    meta = {
        "shapes": {"X_train": [2000, 50], "X_test": [500, 50]},
        "nnz": {"X_train": 100_000, "X_test": 25_000},
        "storage": "dense",
    }
    assert DataShape.from_meta(meta) == SYNTHETIC_LOGISTIC
    assert SYNTHETIC_LINEAR.train_bytes == 7644 * 6501 * 8
    assert SYNTHETIC_LINEAR.test_bytes == 0
    # CSR: values, indices and row pointers of the rows' share of the non-zeros
    assert GISETTE_STANDIN.matrix_bytes(6552) == 4_263_783 * 16 + 6552 * 16


@pytest.mark.parametrize(("experiment", "run", "shape", "rank0", "worker"), MEASURED)
def test_the_estimate_covers_every_measured_rank_with_the_margin(
    experiment, run, shape, rank0, worker
):
    plan = plan_of(experiment, run)
    peaks = rank_peaks_mib(plan, shape)
    assert len(peaks) == plan.world_size
    # the model alone is above the measured peaks, and the request adds MEMORY_MARGIN
    assert peaks[0] >= rank0 and max(peaks[1:]) >= worker
    request = mem_mb_per_cpu(plan, shape)
    assert request >= resources.MEMORY_MARGIN * max(rank0, worker)
    assert request % resources.MEMORY_STEP_MIB == 0


def test_a_worker_holds_its_partitions_and_a_silent_one_nothing():
    plan = plan_of("config/experiments/paper/coded-reduce-fig10.yaml", "GC")  # crc, S = 21
    share = worker_share_bytes(plan, SYNTHETIC_LINEAR, 0)
    assert share == SYNTHETIC_LINEAR.matrix_bytes(22 * math.ceil(7644 / 84))
    uncoded = plan_of("config/experiments/paper/coded-reduce-fig10.yaml", "UMW")
    assert worker_share_bytes(uncoded, SYNTHETIC_LINEAR, 0) == pytest.approx(share / 22)
    silent = smoke_plan(stragglers={"model": "none", "persistent": [1]})
    assert worker_share_bytes(silent, SYNTHETIC_LOGISTIC, 1) == 0
    assert worker_share_bytes(silent, SYNTHETIC_LOGISTIC, 0) > 0


def test_more_load_more_memory_and_a_retry_asks_for_more():
    experiment = "config/experiments/paper/coded-reduce-fig11.yaml"
    light = plan_of(experiment, "a1-GC")  # S = 13
    heavy = plan_of(experiment, "a3-GC")  # S = 39
    assert mem_mb_per_cpu(heavy, SYNTHETIC_LINEAR) > mem_mb_per_cpu(light, SYNTHETIC_LINEAR)
    first = mem_mb_per_cpu(heavy, SYNTHETIC_LINEAR, attempt=1)
    # 1.5 and 2 times the estimate, each rounded up to the step (as `first` was)
    step = resources.MEMORY_STEP_MIB
    assert mem_mb_per_cpu(heavy, SYNTHETIC_LINEAR, attempt=2) >= 1.5 * first - step
    assert mem_mb_per_cpu(heavy, SYNTHETIC_LINEAR, attempt=3) >= 2 * first - step


def test_the_iterates_of_a_trajectory_are_counted_on_rank_0():
    plain = rank_peaks_mib(smoke_plan(), SYNTHETIC_LOGISTIC)
    kept = rank_peaks_mib(smoke_plan(log={"trajectory": True}), SYNTHETIC_LOGISTIC)
    assert kept[0] - plain[0] == pytest.approx(2 * 20 * 50 * 8 / resources.MIB)
    assert kept[1:] == plain[1:]


def test_one_iteration_is_bounded_by_the_slowest_worker_and_the_port():
    # fixed delays: 0.2 s to start and 0.1 s per partition (FRC n = 4, s = 1: two each)
    fixed = smoke_plan(stragglers={"model": "fixed", "params": {"start": 0.2, "compute": 0.1}})
    none = smoke_plan()
    assert iteration_seconds(fixed, SYNTHETIC_LOGISTIC) - iteration_seconds(
        none, SYNTHETIC_LOGISTIC
    ) == pytest.approx(0.2 + 2 * 0.1)
    # a single port of 1 s per full-length vector: every worker's message through it
    port = smoke_plan(bandwidth={"vector_seconds": 1.0})
    assert iteration_seconds(port, SYNTHETIC_LOGISTIC) - iteration_seconds(
        none, SYNTHETIC_LOGISTIC
    ) == pytest.approx(4 * 1.0)


def test_the_runtime_covers_the_iterations_and_has_a_floor():
    assert runtime_minutes(smoke_plan(), SYNTHETIC_LOGISTIC) == resources.RUNTIME_FLOOR_MIN
    smoke = rank_peaks_mib(smoke_plan(), SYNTHETIC_LOGISTIC)  # measured: 171.6 and 85.9 MiB
    assert smoke[0] >= 171.6 and max(smoke[1:]) >= 85.9
    # paper 001 Fig. 9, UMW at N = 156: 156 messages of tc = 0.05 s a round, 300 rounds
    umw = plan_of("config/experiments/paper/coded-reduce-fig9.yaml", "UMW")
    minutes = runtime_minutes(umw, GISETTE_STANDIN)
    assert minutes >= resources.RUNTIME_MARGIN * 300 * 156 * 0.05 / 60
    longer = smoke_plan(iterations=4000, stragglers={"model": "fixed", "params": {"compute": 0.1}})
    assert runtime_minutes(longer, SYNTHETIC_LOGISTIC) >= math.ceil(
        resources.RUNTIME_MARGIN * 4000 * 2 * 0.1 / 60
    )


def test_a_run_on_links_is_given_its_links_time_dilated():
    # paper 001 at N = 84 on 100 Mbit/s links, K = 32: UMW moves 84 models of 200 kB out and
    # 84 results back an iteration (2.8 s at TCP's payload rate, 90 s dilated), after 67 MB of
    # rows (172 s dilated); the measured CR job ran past the 10-minute floor it was given
    plan = plan_of("config/experiments/cluster/coded-reduce-n84-dilated.yaml", "UMW")
    shape = DataShape(336, 25000, 0, 336 * 25000, 0, dense=True)
    vector = 25001 * 8.0
    payload = 12.5e6 * resources.PAYLOAD_FRACTION
    assert resources.links_seconds(plan, shape) == pytest.approx(2 * 84 * vector / payload, 1e-3)
    iterations = 8 * 32 * 2 * 84 * vector / payload
    minutes = runtime_minutes(plan, shape)
    assert minutes >= resources.RUNTIME_MARGIN * iterations / 60
    undilated = smoke_plan(network={"links": {"rate": "100mbit"}})
    assert resources.links_seconds(undilated, SYNTHETIC_LOGISTIC) > 0
    assert resources.links_seconds(smoke_plan(), SYNTHETIC_LOGISTIC) == 0.0
