"""Robust aggregators in MPI runs: uncoded with a liar, aggregated by the median (a worker's
own reversed gradient) and by Krum (an omniscient inner-product attack the master emulates
before aggregating); every iteration logs ``aggregate_time`` and the model stays near the
honest run's."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.mpi import base_run, run_config

pytestmark = pytest.mark.mpi

SCHEME = {"name": "uncoded", "params": {"n": 5}}


def test_aggregators_keep_a_liar_from_destroying_the_model(tmp_path, logistic_data):
    honest = run_config(tmp_path, base_run(logistic_data, scheme=SCHEME), ranks=6, name="honest")
    median = run_config(
        tmp_path,
        base_run(
            logistic_data,
            scheme=SCHEME,
            aggregator={"name": "median"},
            adversaries={"workers": [1], "attack": "reversed", "params": {"scale": 100.0}},
        ),
        ranks=6,
        name="median",
    )
    krum = run_config(
        tmp_path,
        base_run(
            logistic_data,
            scheme=SCHEME,
            aggregator={"name": "multi-krum", "params": {"f": 1, "m": 1}},
            adversaries={"workers": [3], "attack": "ipm", "params": {"epsilon": 5.0}},
        ),
        ranks=6,
        name="krum",
    )
    reference = honest.check().model()
    for job in (median.check(), krum.check()):
        log = job.log()
        assert all(record["aggregate_time"] > 0 for record in log)
        assert all(record["aggregate_time"] <= record["decode_time"] for record in log)
        distance = np.linalg.norm(job.model() - reference) / np.linalg.norm(reference)
        # the aggregators' estimates differ from the honest mean by a fraction of the
        # partial gradients' spread; 6 steps keep the model within a fraction of its norm
        assert distance < 0.5, distance
        losses = [record["loss"] for record in log]
        assert losses == sorted(losses, reverse=True) and losses[-1] < 0.55  # log 2 at zero
    krum_log = krum.log()
    assert all("attack_time" in record for record in krum_log)  # forged at the master
    assert all(3 not in record["aggregate_selected"] for record in krum_log)
    messages = [m for record in median.log() for m in record["messages"]]
    assert {m["worker"] for m in messages if m["corrupted"]} == {1}
