"""Codes defined only in this test suite, of the two shapes beyond flat gradient codes (a tree,
and one that codes the data), run through the verifier, the simulator and a real MPI job with
nothing in ``gradcode`` naming them: the runtime and the simulator read their capabilities."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import yaml

from gradcode.codes import available, build
from gradcode.codes.verify import verify
from gradcode.launch.jobs import job_environment, mpiexec
from gradcode.runfile.config import load_config
from gradcode.runfile.plan import build_plan
from gradcode.runfile.reference import serial_trajectory
from gradcode.runlogs.log import read_log
from gradcode.sim.montecarlo import simulate
from gradcode.sim.spec import load_spec
from gradcode.timing import SinglePortModel

from .toy_codes import register_toy_codes, unregister_toy_codes

LAUNCHER = Path(__file__).with_name("toy_train.py")


@pytest.fixture(autouse=True)
def toys() -> Iterator[None]:
    register_toy_codes()
    yield
    unregister_toy_codes()


@pytest.mark.parametrize(
    ("scheme", "params"),
    [
        ("replica-tree", {"b": 2, "h": 3}),
        ("replica-tree", {"b": 3, "h": 2}),
        ("stacked-repetition", {"n": 6, "s": 1}),
    ],
)
def test_toy_codes_decode_exactly_in_every_pattern(scheme, params):
    assert scheme in available()
    report = verify(build(scheme, **params), exhaustive=True)
    assert report.passed(), report.failures
    assert report.patterns_checked == report.patterns_total > 1


def test_tree_toy_runs_through_the_timing_model_of_trees():
    code = build("replica-tree", b=2, h=2)  # nodes 0, 1 under the master; 2-5 below them
    model = SinglePortModel(a=0.0, mu=1.0, tc=0.0, data=2.0)
    prepared = model.prepare(code)
    rng = np.random.default_rng(0)
    draws = model.sample(rng, 300, code.n)
    outcome = prepared.run(draws)
    # with free transfers the tree's timing is the code's own decodability rule over time
    compute = draws["unit"] * (2.0 * code.loads() / code.k)
    np.testing.assert_allclose(outcome.times, code.completion_times(compute))
    # by hand: the master waits for the first complete chain node -> child
    chain = np.minimum(
        np.maximum(compute[:, 0], compute[:, [2, 3]].min(axis=1)),
        np.maximum(compute[:, 1], compute[:, [4, 5]].min(axis=1)),
    )
    np.testing.assert_allclose(outcome.times, chain)


def test_toy_codes_simulate_by_name_beside_the_built_ins():
    spec = load_spec(
        {
            "description": "toys",
            "source": "tests",
            "model": "single-port",
            "parameters": {"a": 1e-3, "mu": 1e3, "tc": 1e-3, "data": 120},
            "schemes": [
                {"scheme": "replica-tree", "params": {"b": 2, "h": 2}},
                {"scheme": "stacked-repetition", "params": {"n": 6, "s": 1}},
                {"scheme": "frc", "params": {"n": 6, "s": 1}},
            ],
        },
        origin="toys",
    )
    rows = simulate(spec, trials=2000, seed=3)
    times = {row.scheme: row.mean_time for row in rows}
    assert set(times) == {"replica-tree", "stacked-repetition", "frc"}
    assert all(np.isfinite(t) and t > 0 for t in times.values())
    # stacked repetition of the data waits exactly as FRC of the gradients does
    assert times["stacked-repetition"] == pytest.approx(times["frc"], rel=1e-12)


def _train(tmp_path: Path, data: Path, scheme: dict, ranks: int) -> tuple[Path, Path]:
    run = {
        "iterations": 4,
        "data": {"prepared": str(data)},
        "model": {"kind": "logistic"},
        "optimizer": {"kind": "gd", "step": 1.0},
        "scheme": scheme,
        "stragglers": {"model": "random-set", "params": {"count": 1, "delay": 0.05}},
        "log": {"trajectory": True},
    }
    run_file = tmp_path / "run.yaml"
    run_file.write_text(yaml.safe_dump(run))
    out = tmp_path / "out"
    command = [mpiexec(), "-n", str(ranks), sys.executable, str(LAUNCHER), str(run_file)]
    result = subprocess.run(
        [*command, "--out", str(out)],
        env=job_environment(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return run_file, out


@pytest.mark.mpi
@pytest.mark.parametrize(
    ("scheme", "topology"),
    [
        ({"name": "replica-tree", "params": {"b": 2, "h": 2}}, "tree"),
        ({"name": "stacked-repetition", "params": {"n": 4, "s": 1}}, "flat"),
    ],
)
def test_toy_codes_train_as_real_mpi_jobs(tmp_path, logistic_data, scheme, topology):
    config_plan = build_plan(load_config_from(scheme, logistic_data, tmp_path))
    assert config_plan.topology.name == topology
    run_file, out = _train(tmp_path, logistic_data, scheme, config_plan.world_size)
    reference = serial_trajectory(load_config(run_file))
    np.testing.assert_allclose(np.load(out / "trajectory.npy"), reference, rtol=1e-9, atol=0)
    log = read_log(out)
    assert len(log) == 4
    if topology == "flat":
        # one worker of each group is enough: the master never waits for all four
        for record in log:
            assert {w // 2 for w in record["used"]} == {0, 1} and len(record["used"]) <= 3


def load_config_from(scheme: dict, data: Path, tmp_path: Path):
    path = tmp_path / "probe.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "iterations": 1,
                "data": {"prepared": str(data)},
                "model": {"kind": "logistic"},
                "optimizer": {"kind": "gd", "step": 1.0},
                "scheme": scheme,
            }
        )
    )
    return load_config(path)
