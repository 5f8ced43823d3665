"""``runtime.data: load``: every worker reads the prepared data itself instead of receiving
its partitions from rank 0; the runs take the very steps of ``send`` (the same partitions),
on a flat code with redundancy and on a tree, and a persistent straggler still gets none."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.mpi import base_run, run_config

pytestmark = pytest.mark.mpi

SCHEMES = {
    "frc": ({"name": "frc", "params": {"n": 4, "s": 1}}, 5),
    "coded-reduce": ({"name": "coded-reduce", "params": {"n": 2, "L": 2, "s": 1}}, 7),
}


@pytest.mark.parametrize("name", list(SCHEMES))
def test_loaded_partitions_take_the_steps_of_sent_ones(tmp_path, logistic_data, name):
    scheme, ranks = SCHEMES[name]
    jobs = {}
    for way in ("send", "load"):
        run = base_run(logistic_data, scheme=scheme, runtime={"data": way})
        jobs[way] = run_config(tmp_path, run, ranks=ranks, name=f"{name}-{way}").check()
    assert np.array_equal(jobs["send"].model(), jobs["load"].model())
    assert np.array_equal(jobs["send"].trajectory(), jobs["load"].trajectory())


def test_a_bad_way_is_one_line_naming_the_key(tmp_path, logistic_data):
    run = base_run(logistic_data, scheme=SCHEMES["frc"][0], runtime={"data": "mail"})
    job = run_config(tmp_path, run, ranks=5, name="bad")
    assert job.result.returncode != 0
    assert "runtime.data" in job.result.stderr and "send" in job.result.stderr
