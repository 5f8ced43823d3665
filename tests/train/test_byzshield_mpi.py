"""ByzShield in MPI runs (15 workers, 25 files, each worker sending its 5 files' gradients as
separate messages): one liar is outvoted in every file it holds and the trajectory is the
honest run's bit for bit; three liars placed to distort the most files (3 of 25) are
withstood by the median of the file votes."""

from __future__ import annotations

import numpy as np
import pytest

from gradcode.data import prepare
from tests.helpers.mpi import base_run, run_config

pytestmark = pytest.mark.mpi

SCHEME = {"name": "byzshield", "params": {"l": 5, "r": 3}}
RANKS = 16  # the master and K = 15 workers


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """500 rows: 20 per file."""
    out = tmp_path_factory.mktemp("data") / "logistic"
    prepare("synthetic-logistic", out, variant="custom", rows=500, features=16, test_rows=0)
    return out


def test_one_liar_is_outvoted_and_three_are_withstood_by_the_median(tmp_path, data):
    honest = run_config(tmp_path, base_run(data, scheme=SCHEME), ranks=RANKS, name="honest")
    one = {"workers": [4], "attack": "reversed", "params": {"scale": 100.0}}
    outvoted = run_config(
        tmp_path, base_run(data, scheme=SCHEME, adversaries=one), ranks=RANKS, name="one"
    )
    three = {"workers": [0, 5, 11], "attack": "reversed", "params": {"scale": 100.0}}
    median = run_config(
        tmp_path,
        base_run(data, scheme=SCHEME, adversaries=three, aggregator={"name": "median"}),
        ranks=RANKS,
        name="median",
    )
    honest.check()
    assert np.array_equal(outvoted.check().trajectory(), honest.trajectory())
    assert [record["adversaries"] for record in outvoted.log()] == [[4]] * 6
    assert all(
        sum(m["corrupted"] for m in record["messages"]) == 5 for record in outvoted.log()
    )  # all five of its files' messages lied
    log = median.check().log()
    assert all(sum(m["corrupted"] for m in record["messages"]) == 15 for record in log)
    assert all(record["aggregate_time"] > 0 for record in log)
    reference = honest.model()
    distance = np.linalg.norm(median.model() - reference) / np.linalg.norm(reference)
    assert distance < 0.5, distance
    losses = [record["loss"] for record in log]
    assert losses == sorted(losses, reverse=True)
