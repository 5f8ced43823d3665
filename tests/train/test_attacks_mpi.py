"""Attacks in MPI runs: an omniscient attack emulated by the master, on DRACO's repetition
code, leaves the trajectory of the honest run bit for bit and is logged where it struck."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers.mpi import base_run, run_config

pytestmark = pytest.mark.mpi

SCHEME = {"name": "draco-repetition", "params": {"n": 6, "a": 1}}


def test_an_emulated_omniscient_attack_is_outvoted_and_logged(tmp_path, logistic_data):
    honest = run_config(tmp_path, base_run(logistic_data, scheme=SCHEME), ranks=7, name="honest")
    adversaries = {
        "workers": [1],
        "attack": "ipm",
        "params": {"epsilon": 2.0},
        "iterations": {"start": 1, "every": 2},
    }
    attacked = run_config(
        tmp_path,
        base_run(logistic_data, scheme=SCHEME, adversaries=adversaries),
        ranks=7,
        name="attacked",
    )
    honest.check()
    attacked.check()
    log = attacked.log()
    assert [record["adversaries"] for record in log] == [[], [1], [], [1], [], [1]]
    assert [("attack_time" in record) for record in log] == [False, True] * 3
    assert np.array_equal(attacked.trajectory(), honest.trajectory())
    assert attacked.summary()["adversaries_caught"] == {"1": 3}
