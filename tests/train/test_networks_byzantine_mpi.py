"""Networks under attack in MPI runs: every attack of ``gradcode.attacks`` against DRACO's
repetition code leaves the iterates of the serial run (the run that drops the liar it caught
also has a late worker, the liar among the first responders), and every aggregator of
``gradcode.aggregators`` trains a network past a liar and logs its time (one of them behind the
emulated single port of the master).

Each job is one small perceptron (64-8-10, 610 parameters; one attack's the Table II CNN) on
scikit-learn's digits for three iterations: a network job's cost is its ranks' JAX import
and compilation (about a second of CPU per rank), so one job per attack and per aggregator,
each checking all it can.
"""

from __future__ import annotations

import numpy as np
import pytest

from gradcode.aggregators.registry import available as available_aggregators
from gradcode.attacks.registry import available as available_attacks
from gradcode.runfile.config import load_config
from gradcode.runfile.reference import serial_trajectory
from tests.helpers.mpi import base_run, relative_errors, run_config

pytestmark = pytest.mark.mpi

MLP = {"kind": "mlp", "params": {"hidden": [8]}}
#: the attack run that trains paper 001's Table II CNN instead (on 8 x 8 images, pooled by 2)
CNN_RUN = ("noise", {"kind": "coded-reduce-cnn", "params": {"image": [1, 8, 8]}})
#: one group of three replicas decoded by a vote: the liar is in every decoding
DRACO = {"name": "draco-repetition", "params": {"n": 3, "a": 1}}
#: the dropping run's: four replicas decoded from any three, so the run goes on without one
DROPPING_DRACO = {"name": "draco-repetition", "params": {"n": 4, "a": 1, "s": 1}}
#: worker 3 answers 150 ms after the others: the first three responders hold the liar
LATE_THREE = {"model": "fixed", "params": {"start": [0.0, 0.0, 0.0, 0.15]}}
#: an attack strong enough to wreck the model if it got through (``ATTACK_PARAMS[name]``)
ATTACK_PARAMS = {
    "noise": {"scale": 10.0},
    "reversed": {"scale": 100.0},
    "constant": {"value": 50.0},
    "alie": {"z": 3.0},
    "ipm": {"epsilon": 5.0},
}
#: the run that drops the liar it caught (``adversaries.caught: drop``)
DROPPING = "reversed"
#: aggregator -> (its parameters, the fewest workers it takes one liar among): krum needs
#: n >= 2f + 3, bulyan n >= 4f + 3
AGGREGATORS = {
    "median": ({}, 3),
    "trimmed-mean": ({"beta": 0.34}, 3),
    "multi-krum": ({"f": 1, "m": 2}, 5),
    "geometric-median": ({}, 3),
    "bulyan": ({"f": 1}, 7),
}
#: the aggregator whose run also emulates the master's single port: 10 ms per full message
PORT = ("geometric-median", 0.01)
#: the attack each aggregator faces (every attack once, the omniscient ones forged at the master)
AGAINST = dict(zip(AGGREGATORS, ["reversed", "noise", "ipm", "constant", "alie"], strict=True))


def _network_run(data, model=MLP, **overrides):
    return base_run(
        data, model=model, iterations=3, optimizer={"kind": "gd", "step": 0.5}, **overrides
    )


def test_every_attack_and_aggregator_is_covered():
    assert set(ATTACK_PARAMS) == set(available_attacks())
    assert set(AGGREGATORS) == set(available_aggregators())
    assert set(AGAINST.values()) == set(available_attacks())


@pytest.mark.parametrize("attack", sorted(ATTACK_PARAMS))
def test_a_corrected_attack_leaves_a_network_on_the_serial_run(tmp_path, digits_data, attack):
    caught = "drop" if attack == DROPPING else "keep"
    adversaries = {
        "workers": [1],
        "attack": attack,
        "params": ATTACK_PARAMS[attack],
        "caught": caught,
    }
    if caught == "drop":
        more = {"scheme": DROPPING_DRACO, "stragglers": LATE_THREE}
    else:
        more = {"scheme": DRACO}
    model = CNN_RUN[1] if attack == CNN_RUN[0] else MLP
    run = _network_run(digits_data, model, adversaries=adversaries, **more)
    job = run_config(tmp_path, run, ranks=more["scheme"]["params"]["n"] + 1, timeout=180).check()
    log = job.log()
    # the workers compiled their gradient before the first iteration (Model.warm_up): it
    # computes as fast as the others (0.4 to 3 s of compilation in it before)
    assert max(m["compute"] for m in log[0]["messages"]) < 0.5
    corrupted = {m["worker"] for r in log for m in r["messages"] if m["corrupted"]}
    assert corrupted == {1}
    for r in log:
        if attack == "alie":  # forged from identical honest copies: their mean, to round-off
            assert set(r["adversaries"]) <= {1}
        else:
            assert r["adversaries"] == ([1] if 1 in r["used"] else [])
    if caught == "drop":
        named = next(t for t, r in enumerate(log) if r["adversaries"])
        assert [r["dropped_workers"] for r in log] == [[]] * named + [[1]] * (3 - named)
        assert all(1 not in r["used"] for r in log[named + 1 :])
    elif attack != "alie":
        caught_at = sum(1 in r["used"] for r in log)
        assert caught_at and job.summary()["adversaries_caught"] == {"1": caught_at}
    reference = serial_trajectory(load_config(job.run_file))
    errors = relative_errors(job.trajectory(), reference)
    assert errors.max() <= 1e-12, errors
    assert log[-1]["loss"] < log[0]["loss"]


@pytest.mark.parametrize("aggregator", sorted(AGGREGATORS))
def test_an_aggregator_trains_a_network_past_a_liar(tmp_path, digits_data, aggregator):
    params, n = AGGREGATORS[aggregator]
    attack = AGAINST[aggregator]
    port = {"bandwidth": {"vector_seconds": PORT[1]}} if aggregator == PORT[0] else {}
    run = _network_run(
        digits_data,
        scheme={"name": "uncoded", "params": {"n": n}},
        aggregator={"name": aggregator, "params": params},
        adversaries={"workers": [1], "attack": attack, "params": ATTACK_PARAMS[attack]},
        **port,
    )
    job = run_config(tmp_path, run, ranks=n + 1, timeout=180).check()
    log = job.log()
    assert all(0 < r["aggregate_time"] <= r["decode_time"] for r in log)
    assert all(("attack_time" in r) == (attack in ("alie", "ipm")) for r in log)
    if port:  # the full-length messages reach the master one after the other
        for r in log:
            arrivals = sorted(m["arrival"] for m in r["messages"])
            assert np.diff(arrivals).min() >= PORT[1] - 1e-9
    # not exact (a robust estimate of the mean), but it descends and keeps its accuracy
    losses = [r["loss"] for r in log]
    assert losses == sorted(losses, reverse=True), losses
    assert log[-1]["accuracy"] >= log[0]["accuracy"] and log[-1]["accuracy"] > 0.2
