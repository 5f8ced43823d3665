"""Runs that lose workers on purpose: which the workflow starts on ULFM, and which exits pass."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest
import yaml

from gradcode.pipeline.faults import (
    EXIT_STOPPED,
    expected_stop,
    judge,
    lose_arguments,
    main,
    node_loss_runs,
    runs_pattern,
    tolerant_runs,
)
from gradcode.pipeline.runs import collect_runs
from gradcode.runfile.config import parse_config
from gradcode.train.faults.failures import EXIT_CANNOT_CONTINUE

ROOT = Path(__file__).resolve().parents[2]
EXPERIMENT = "config/experiments/failed-workers.yaml"

BASE = {
    "iterations": 12,
    "data": {"dataset": "synthetic-logistic", "variant": "small"},
    "model": {"kind": "logistic"},
    "optimizer": {"kind": "gd", "step": 1.0},
}


def _config(scheme: dict, faults: dict | None, **extra):
    run = copy.deepcopy(BASE) | {"name": "x/run", "scheme": scheme, **extra}
    if faults is not None:
        run["faults"] = faults
    return parse_config(run)


FRC = {"name": "frc", "params": {"n": 4, "s": 1}}
KILL_ONE = {"kill": [{"worker": 1, "iteration": 4}]}
# FRC (4, 1) groups {0, 1} and {2, 3}: both of the first group is beyond s = 1
KILL_GROUP = {"kill": [{"worker": 1, "iteration": 4}, {"worker": 0, "iteration": 8}]}


def _stopped(failed: list[int]) -> dict:
    return {
        "stopped": {
            "message": "worker ... failed",
            "iteration": 8,
            "failed_workers": failed,
            "checkpoint": "ckpt-00000008.npz",
            "completed": 8,
        },
        "failed_workers": failed,
    }


def test_the_exit_status_of_a_stop_matches_the_runtime():
    assert EXIT_STOPPED == EXIT_CANNOT_CONTINUE


def test_the_default_and_paper_configs_run_the_failure_experiment_on_ulfm():
    for name in ("config.yaml", "paper.yaml"):
        train = yaml.safe_load((ROOT / "config" / name).read_text())["train"]
        assert EXPERIMENT in train["experiments"], name
        runs = collect_runs(train["runs"], train["experiments"], ROOT)
        tolerant = tolerant_runs(runs)
        # exactly the experiment's runs, each small (the default main job has 15 minutes)
        assert tolerant == sorted(runs.experiments["failed-workers"]), name
        assert max(runs.ranks[run] for run in tolerant) <= 7
        stops = {run for run in tolerant if expected_stop(runs.plan(run).config) is not None}
        assert stops == {"failed-workers/uncoded", "failed-workers/frc"}
        pattern = re.compile(f"(?:{runs_pattern(tolerant)})")
        assert all(pattern.fullmatch(run) for run in tolerant)
        assert not any(pattern.fullmatch(run) for run in set(runs.runs) - set(tolerant))


def test_runs_pattern_needs_runs():
    with pytest.raises(ValueError, match="no run ids"):
        runs_pattern([])
    assert re.fullmatch(runs_pattern(["a.b/c"]), "a.b/c")
    assert not re.fullmatch(runs_pattern(["a.b/c"]), "axb/c")


def test_a_run_stops_when_its_faults_take_more_than_the_code_tolerates():
    assert expected_stop(_config(FRC, KILL_ONE)) is None
    assert expected_stop(_config(FRC, KILL_GROUP)) == [0, 1]
    assert expected_stop(_config({"name": "uncoded", "params": {"n": 4}}, KILL_ONE)) == [1]
    assert expected_stop(_config({"name": "uncoded", "params": {"n": 4}}, None)) is None
    # a spare takes the first dead worker's place: the second death is then tolerated
    assert expected_stop(_config(FRC, KILL_GROUP | {"spares": 1})) is None
    assert _config(FRC, KILL_GROUP | {"spares": 1}).lost_workers() == [0]
    # a persistent straggler counts with the killed workers
    slow = {"model": "none", "persistent": [0]}
    assert _config(FRC, KILL_ONE, stragglers=slow).lost_workers() == [0, 1]
    assert expected_stop(_config(FRC, KILL_ONE, stragglers=slow)) == [0, 1]


def test_judge_passes_a_finished_run_and_an_expected_stop_only():
    survives, stops = _config(FRC, KILL_ONE), _config(FRC, KILL_GROUP)
    assert judge(0, survives, {"failed_workers": [1]})[0] == 0
    status, line = judge(EXIT_STOPPED, stops, _stopped([0, 1]))
    assert status == 0 and "stopped as its faults say" in line and "ckpt-00000008" in line
    # a stop the faults do not explain, a stop without its record, a crash, a missed stop
    status, line = judge(EXIT_STOPPED, survives, _stopped([1]))
    assert status == EXIT_STOPPED and "leave the code decodable" in line
    assert judge(EXIT_STOPPED, stops, {"failed_workers": []})[0] == EXIT_STOPPED
    assert judge(EXIT_STOPPED, stops, _stopped([0, 2]))[0] == EXIT_STOPPED
    assert judge(EXIT_STOPPED, stops, None)[0] == EXIT_STOPPED
    assert judge(1, stops, _stopped([0, 1])) == (1, "x/run: the job failed with exit status 1")
    status, line = judge(0, stops, {"failed_workers": [1]})
    assert status == 1 and "did the kills land" in line


def test_main_reads_the_run_and_summary_and_says_one_line(tmp_path, capsys):
    run = tmp_path / "run.yaml"
    run.write_text(yaml.safe_dump(BASE | {"name": "x/run", "scheme": FRC, "faults": KILL_GROUP}))
    summary = tmp_path / "summary.json"
    summary.write_text(json.dumps(_stopped([0, 1])))
    assert main([str(run), str(summary), str(EXIT_STOPPED)]) == 0
    assert capsys.readouterr().out.startswith("gradcode: x/run: stopped as its faults say")
    assert main([str(run), str(tmp_path / "absent.json"), "3"]) == EXIT_STOPPED
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "without a stop in its summary.json" in err
    assert main([str(run), str(summary)]) == 2
    assert "usage:" in capsys.readouterr().err
    (tmp_path / "bad.yaml").write_text("iterations: [\n")
    assert main([str(tmp_path / "bad.yaml"), str(summary), "0"]) == 2
    assert len(capsys.readouterr().err.splitlines()) == 1


def test_the_cluster_config_loses_a_node_in_its_own_rule_and_judges_it_alike():
    train = yaml.safe_load((ROOT / "config" / "cluster.yaml").read_text())["train"]
    runs = collect_runs(train["runs"], train["experiments"], ROOT)
    lost = node_loss_runs(runs)
    assert lost == sorted(runs.experiments["cluster-node-lost"])
    assert not set(lost) & set(tolerant_runs(runs))  # train_lost, never train_faults
    frc = runs.plan("cluster-node-lost/frc-link").config
    assert lose_arguments(frc) == ["--rank", "3", "--link", "--at-iteration", "15"]
    assert expected_stop(frc) is None
    uncoded = runs.plan("cluster-node-lost/uncoded-kill").config
    assert expected_stop(uncoded) == [2]
    # the lost node's worker explains the uncoded stop; FRC finishing is its result
    assert judge(EXIT_STOPPED, uncoded, _stopped([2]))[0] == 0
    assert judge(EXIT_STOPPED, uncoded, _stopped([1, 2]))[0] == EXIT_STOPPED
    assert judge(0, frc, {"failed_workers": [2]})[0] == 0
