"""``a + 1`` colluding liars under MPI (issue 49, point 3): on DRACO's cyclic code and on paper
004's code they move the responders' word onto another gradient's codeword with ``a`` errors,
which no decoder can tell from an honest word with ``a`` liars: the decoder returns that
gradient and names honest workers. The run's emulation knows who lies
(``gradcode.train.faults.caught``): the run stops at the first attacked iteration, exit 4,
the reason in ``summary.json``'s ``stopped``, no step taken along the impostor gradient.

The forgery needs the code's encoding, which no attack of ``gradcode.attacks`` reads (attacks
work on messages, not codes); so a test plug-in does it: ``test-shift`` adds ``weights[key]``
times one shared seeded vector to each liar's message (omniscient, so the master forges it
with every message in hand). It comes in as an installed distribution (an entry point of
``gradcode.attacks`` on the ranks' ``PYTHONPATH``), the way a user's plug-in does.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

from gradcode.attacks import registry as attack_registry
from gradcode.codes import build
from gradcode.codes.placements import cyclic_placement
from gradcode.runfile.config import load_config
from gradcode.runfile.reference import serial_trajectory
from gradcode.train.faults.caught import EXIT_DECODING_FAILED
from tests.codes.harness import independent_sum
from tests.helpers.mpi import base_run, relative_errors, run_config

pytestmark = pytest.mark.mpi

SHIFT = '''"""A colluding shift (test plug-in)."""

import numpy as np

from gradcode.attacks import Attack


class Shift(Attack):
    """Each liar's message plus ``weights[key]`` times one vector drawn from ``seed``."""

    name = "test-shift"
    omniscient = True

    def __init__(self, weights=(), seed=0, scale=1.0):
        self.weights, self.seed, self.scale = [float(w) for w in weights], int(seed), scale

    def params(self):
        return {"weights": self.weights, "seed": self.seed, "scale": self.scale}

    def forge(self, own, honest, rng):
        raise NotImplementedError("test-shift forges in apply: it needs the message keys")

    def apply(self, messages, liars, rng):
        out = dict(messages)
        width = next(iter(messages.values())).size
        delta = self.scale * np.random.default_rng(self.seed).standard_normal(width)
        for key in liars:
            if key in messages:
                out[key] = np.asarray(messages[key], dtype=np.float64) + self.weights[key] * delta
        return out
'''


@pytest.fixture
def shift_plugin(tmp_path, monkeypatch):
    """The ``test-shift`` attack installed for the MPI ranks (their ``PYTHONPATH``)."""
    site = tmp_path / "site"
    (site / "colluders").mkdir(parents=True)
    (site / "colluders" / "__init__.py").write_text("")
    (site / "colluders" / "shift.py").write_text(SHIFT)
    info = site / "colluders-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: colluders\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[gradcode.attacks]\ntest-shift = colluders.shift:Shift\n"
    )
    path = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
    monkeypatch.setenv("PYTHONPATH", path)
    monkeypatch.syspath_prepend(str(site))  # this process reads the run file too
    attack_registry.PLUGINS.reset()
    yield site
    monkeypatch.undo()
    attack_registry.PLUGINS.reset()


def _stopped_by_the_emulation(job, framed: list[int]) -> None:
    assert job.result.returncode == EXIT_DECODING_FAILED, job.result.stderr[-3000:]
    lines = [x for x in job.result.stderr.splitlines() if "gradcode.train: stopped" in x]
    assert len(lines) == 1 and "decoding failed at iteration 1" in lines[0], lines
    stopped = job.summary()["stopped"]
    assert stopped["kind"] == "decoding" and stopped["iteration"] == 1
    assert stopped["completed"] == 1 and len(job.log()) == 1
    assert f"named worker {framed[0]} as a liar, which did not lie" in stopped["reason"]
    # iteration 0 (before the attack) is the honest run's; no step along the impostor
    reference = serial_trajectory(load_config(job.run_file))
    assert relative_errors(job.trajectory(), reference[:1]).max() <= 1e-12


def test_two_liars_on_one_partition_of_the_cyclic_code_stop_the_run(
    tmp_path, logistic_data, shift_plugin
):
    """n = 9, a = 1: workers 0 and 1 shift partition 2 (held by 0, 1, 2) by one vector each
    weighted by their encoding coefficient: the decoder names honest worker 2."""
    code = build("draco-cyclic", n=9, a=1)
    weights = code.encoding_matrix()[:, 2, 0].tolist()
    adversaries = {
        "workers": [0],
        "unforeseen": [1],
        "attack": "test-shift",
        "params": {"weights": weights, "seed": 3, "scale": 1.0},
        "iterations": {"start": 1},
    }
    scheme = {"name": "draco-cyclic", "params": {"n": 9, "a": 1}}
    run = base_run(logistic_data, scheme=scheme, adversaries=adversaries, iterations=3)
    _stopped_by_the_emulation(run_config(tmp_path, run, ranks=10), framed=[2])


def test_a_plus_one_liars_impersonating_another_gradient_on_paper_004s_code_stop_the_run(
    tmp_path, logistic_data, shift_plugin
):
    """Cyclic placement n = 7, r = 3, a = 1 (D = 4, all 7 responders): liars 4 and 5 add
    h(alpha_w) times one vector, h vanishing at workers 0-3: the word is the codeword of
    another gradient wrong at worker 6 only. First in the library (what the decoder returns),
    then under MPI."""
    code = build("heterogeneous", placement=cyclic_placement(7, 3), a=1)
    assert code.degree == 4 and code.min_responders() == 7
    alpha, beta = code.evaluation_points()
    weights = [float(np.prod([x - alpha[z] for z in range(4)])) for x in alpha]
    rng = np.random.default_rng(0)
    partials = rng.standard_normal((code.k, 5))
    honest = {w: code.encode(w, partials[list(code.partitions(w))]) for w in range(7)}
    delta = rng.standard_normal(5)
    lied = dict(honest) | {w: honest[w] + weights[w] * delta for w in (4, 5)}
    result = code.decode_result(lied, 5)
    assert result.adversaries == (6,)
    h_beta = float(np.prod([beta[0] - alpha[z] for z in range(4)]))
    impostor = independent_sum(partials) + h_beta * delta
    np.testing.assert_allclose(result.gradient, impostor, rtol=1e-9, atol=1e-9)
    adversaries = {
        "workers": [4],
        "unforeseen": [5],
        "attack": "test-shift",
        "params": {"weights": weights, "seed": 3, "scale": 1.0},
        "iterations": {"start": 1},
    }
    scheme = {"name": "heterogeneous", "params": {"placement": cyclic_placement(7, 3), "a": 1}}
    run = base_run(logistic_data, scheme=scheme, adversaries=adversaries, iterations=3)
    _stopped_by_the_emulation(run_config(tmp_path, run, ranks=8), framed=[6])
