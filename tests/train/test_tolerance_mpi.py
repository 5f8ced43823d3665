"""An aggregation below its tolerance at run time, as real MPI jobs (``gradcode.train.tolerance``).

Uncoded with ``n = 5`` under the trimmed mean (``beta = 0.2``: one value trimmed at each end of
five, one liar tolerated) with worker 1 lying (reversed, scaled by 100). Worker 3 is killed
at iteration 2 (Open MPI with ULFM, ``gradcode train inject``): from then on the aggregator
gets the four live workers' values, trims ``floor(0.8) = 0`` and tolerates no liar. Under
``aggregator.below_tolerance: stop`` the run stops there (exit 4, one line, ``summary.json``'s
``stopped``); under ``continue`` it goes on and every such iteration's record says why.
"""

from __future__ import annotations

import pytest

from gradcode.train.faults.caught import EXIT_DECODING_FAILED
from tests.helpers.mpi import base_run, run_config

pytestmark = pytest.mark.mpi

#: every worker sleeps 20 ms per partition, so a kill lands inside the iteration it aims at
SLOW = {"model": "fixed", "params": {"compute": 0.02}}
LIAR = {"workers": [1], "attack": "reversed", "params": {"scale": 100.0}}


def _run(data, policy: str) -> dict:
    return base_run(
        data,
        scheme={"name": "uncoded", "params": {"n": 5}},
        aggregator={"name": "trimmed-mean", "params": {"beta": 0.2}, "below_tolerance": policy},
        adversaries=LIAR,
        stragglers=SLOW,
        faults={"kill": [{"worker": 3, "iteration": 2}]},
    )


def test_below_tolerance_stops_the_run_by_default(tmp_path, logistic_data):
    job = run_config(tmp_path, _run(logistic_data, "stop"), ranks=6)
    assert job.result.returncode == EXIT_DECODING_FAILED, job.result.stderr[-3000:]
    lines = [x for x in job.result.stderr.splitlines() if "gradcode.train: stopped" in x]
    assert len(lines) == 1, job.result.stderr[-3000:]
    assert "below tolerance: aggregator trimmed-mean tolerates 0 Byzantine" in lines[0]
    stopped = job.summary()["stopped"]
    assert stopped["kind"] == "decoding" and stopped["iteration"] >= 2
    assert "handed it 4 of 5 values, 1 of them from workers [1]" in stopped["reason"]
    log = job.log()
    assert len(log) == stopped["iteration"] and all("below_tolerance" not in r for r in log)


def test_below_tolerance_continue_goes_on_and_logs_every_such_iteration(tmp_path, logistic_data):
    job = run_config(tmp_path, _run(logistic_data, "continue"), ranks=6).check()
    log = job.log()
    assert len(log) == 6 and job.summary()["failed_workers"] == [3]
    below = [t for t, record in enumerate(log) if "below_tolerance" in record]
    assert below and below == list(range(below[0], 6)) and below[0] >= 2
    assert "tolerates 0 Byzantine inputs among n=4" in log[below[0]]["below_tolerance"]
    for record in log[below[0] :]:
        assert 3 not in {m["worker"] for m in record["messages"]}
        assert sorted(record["used"]) == [0, 1, 2, 4]
