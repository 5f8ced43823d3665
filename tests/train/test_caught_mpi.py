"""Caught liars in MPI runs (``adversaries.caught``, ``gradcode.train.faults.caught``): a liar
the decoder names leaves the run under ``drop`` and the iterates stay the honest run's; more
liars than the code corrects end the run as a recorded decoding failure, never a wrong model.

DRACO's repetition code with ``(n, a, s) = (4, 1, 1)``: one group of four replicas, decoded
from any three by a vote. Worker 3 starts every iteration 50 ms late, so the master decodes
from workers 0, 1 and 2 (the liar among them) while all four answer.
"""

from __future__ import annotations

import numpy as np
import pytest

from gradcode.runfile.config import load_config
from gradcode.runfile.reference import serial_trajectory
from gradcode.train.faults.caught import EXIT_DECODING_FAILED, LIAR_REASON
from gradcode.train.faults.failures import EXIT_CANNOT_CONTINUE
from tests.helpers.mpi import Job, base_run, relative_errors, run_config

pytestmark = pytest.mark.mpi

SCHEME = {"name": "draco-repetition", "params": {"n": 4, "a": 1, "s": 1}}
#: worker 3 answers 50 ms after the others: the first three responders hold the liar
LATE_THREE = {"model": "fixed", "params": {"start": [0.0, 0.0, 0.0, 0.05]}}
REVERSED = {"attack": "reversed", "params": {"scale": 100.0}}


def _run(data, **overrides):
    return base_run(data, iterations=7, scheme=SCHEME, stragglers=LATE_THREE, **overrides)


@pytest.fixture(scope="module")
def honest(tmp_path_factory, logistic_data) -> Job:
    """The run without liars, which the two tests below compare with bit for bit: one job per
    pytest-xdist worker instead of one per test (the two are next to each other, so the
    first half of a split file, one worker's, holds both)."""
    tmp = tmp_path_factory.mktemp("honest")
    return run_config(tmp, _run(logistic_data), ranks=5, name="honest").check()


def _failure_line(job) -> str:
    lines = [line for line in job.result.stderr.splitlines() if "gradcode.train: stopped" in line]
    assert len(lines) == 1, job.result.stderr[-3000:]
    return lines[0]


def test_a_dropped_liar_is_neither_used_nor_waited_for(tmp_path, logistic_data, honest):
    adversaries = {"workers": [1], **REVERSED, "iterations": {"start": 2}, "caught": "drop"}
    job = run_config(tmp_path, _run(logistic_data, adversaries=adversaries), ranks=5).check()
    log = job.log()
    caught = next(t for t, record in enumerate(log) if record["adversaries"])
    assert caught == 2 and log[2]["adversaries"] == [1]
    drop = {"worker": 1, "rank": 2, "iteration": 2, "reason": LIAR_REASON}
    assert log[2]["dropped"] == [drop] and job.summary()["dropped"] == [drop]
    assert [record["dropped_workers"] for record in log] == [[]] * 2 + [[1]] * 5
    assert "iteration 2: worker 1 (rank 2) dropped: named as a liar" in job.result.stderr
    for record in log[3:]:
        # no model went to worker 1: none of its messages came, the master waited for 3
        assert 1 not in {message["worker"] for message in record["messages"]}
        assert sorted(record["used"]) == [0, 2, 3] and record["adversaries"] == []
        assert record["wait_time"] >= 0.05
    assert np.array_equal(job.trajectory(), honest.trajectory())
    reference = serial_trajectory(load_config(job.run_file))
    assert relative_errors(job.trajectory(), reference).max() <= 1e-12


def test_a_spare_takes_a_dropped_liars_place_honestly(tmp_path, logistic_data, honest):
    """Open MPI with ULFM and one spare: worker 1 is dropped at iteration 2, the spare serves
    worker 1 from then on (honestly: the liar was the process) and is decoded from again."""
    adversaries = {"workers": [1], **REVERSED, "iterations": {"start": 2}, "caught": "drop"}
    run = _run(logistic_data, adversaries=adversaries, faults={"spares": 1}) | {"iterations": 10}
    job = run_config(tmp_path, run, ranks=6).check()
    summary = job.summary()
    [replacement] = summary["replacements"]
    assert replacement["reason"] == "dropped as a liar" and replacement["worker"] == 1
    assert replacement["failed_rank"] == 2 and replacement["spare_rank"] == 5
    assert summary["dropped"][0]["rank"] == 2 and summary["failed_workers"] == []
    log = job.log()
    assert log[2]["replacements"][0]["spare_rank"] == 5
    assert log[-1]["replaced"] == [{"worker": 1, "rank": 5}]
    later = [record for record in log[3:] if 1 in record["used"]]
    assert later, "the spare's messages were never decoded from"
    for record in log[3:]:
        assert record["adversaries"] == []
        assert not any(message["corrupted"] for message in record["messages"])
    reference = serial_trajectory(load_config(job.run_file))
    assert relative_errors(job.trajectory(), reference).max() <= 1e-12
    assert np.array_equal(job.trajectory()[:6], honest.trajectory()[:6])


def test_more_liars_than_the_code_corrects_stop_the_run(tmp_path, logistic_data):
    """Workers 1 and 2 add independent noise from iteration 2, the plan knowing of one: the
    three first messages have no majority, all four have two outvoted (more than a = 1)."""
    adversaries = {"workers": [1], "unforeseen": [2], "iterations": {"start": 2}}
    job = run_config(tmp_path, _run(logistic_data, adversaries=adversaries), ranks=5)
    assert job.result.returncode == EXIT_DECODING_FAILED, job.result.stderr[-3000:]
    line = _failure_line(job)
    assert "decoding failed at iteration 2" in line
    assert "refused the messages of every live worker" in line and "more than a = 1" in line
    stopped = job.summary()["stopped"]
    assert stopped["kind"] == "decoding" and stopped["iteration"] == 2
    assert stopped["completed"] == 2 and len(job.log()) == 2
    # the two iterations before the attack are the honest run's; no step was taken after
    reference = serial_trajectory(load_config(job.run_file))
    assert relative_errors(job.trajectory(), reference[:2]).max() <= 1e-12


def test_colluding_liars_that_outvote_the_honest_are_caught_by_the_emulation(
    tmp_path, logistic_data
):
    """Workers 1 and 2 send the same reversed message: two of the three first messages agree,
    the vote cannot tell, and names honest worker 0. The run knows worker 0 did not lie."""
    adversaries = {"workers": [1], "unforeseen": [2], **REVERSED, "iterations": {"start": 1}}
    job = run_config(tmp_path, _run(logistic_data, adversaries=adversaries), ranks=5)
    assert job.result.returncode == EXIT_DECODING_FAILED, job.result.stderr[-3000:]
    line = _failure_line(job)
    assert "decoding failed at iteration 1" in line
    assert "named worker 0 as a liar, which did not lie" in line
    assert job.summary()["stopped"]["completed"] == 1


def test_a_dropped_liar_and_a_death_past_the_code_stop_the_run(tmp_path, logistic_data):
    """Open MPI with ULFM: worker 1 is dropped at iteration 1, worker 3 killed at 4: two of
    four lost, more than s = 1. The run stops, saying both."""
    adversaries = {"workers": [1], **REVERSED, "iterations": {"start": 1}, "caught": "drop"}
    faults = {"kill": [{"worker": 3, "iteration": 4}]}
    slow = {"model": "fixed", "params": {"start": [0.0, 0.0, 0.0, 0.05], "compute": 0.02}}
    run = _run(logistic_data, adversaries=adversaries, faults=faults) | {"stragglers": slow}
    run["iterations"] = 10
    job = run_config(tmp_path, run, ranks=5)
    assert job.result.returncode == EXIT_CANNOT_CONTINUE, job.result.stderr[-3000:]
    line = _failure_line(job)
    assert "worker 3 (rank 4" in line and "cannot decode without workers [1, 3]" in line
    assert "workers [1] dropped, named as liars by the decoder" in line
    assert job.log()[1]["dropped"][0]["worker"] == 1
