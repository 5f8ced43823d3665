"""ALIE against its published rule, computed here independently (Baruch, Baruch & Goldberg, "A
Little Is Enough", NeurIPS 2019, Algorithm 1): ``s = floor(n / 2 + 1) - f`` workers are needed
for a majority, ``z_max`` is the largest ``z`` with ``Phi(z) < (n - s) / n``, and every liar
sends ``mean - z_max * std`` of the honest messages, per coordinate. ``gradcode.attacks.alie``
takes ``z`` signed (``mean + z * std``, population standard deviation), so the paper's rule is
its ``z = -z_max``; nothing of the module but ``forge`` is called here."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest

from gradcode import attacks


def _z_max(n: int, f: int) -> float:
    s = math.floor(n / 2 + 1) - f
    return statistics.NormalDist().inv_cdf((n - s) / n)


def test_z_max_from_a_normal_table():
    # n = 5, f = 1: s = 2, Phi^-1(0.6); n = 50, f = 12 (the paper's 24 %): s = 14, Phi^-1(0.72)
    assert _z_max(5, 1) == pytest.approx(0.2533, abs=1e-4)
    assert _z_max(50, 12) == pytest.approx(0.5828, abs=1e-4)


@pytest.mark.parametrize(("n", "f"), [(5, 1), (11, 3), (50, 12)])
def test_alie_forges_the_published_rule(n, f):
    rng = np.random.default_rng([n, f])
    messages = rng.standard_normal((n, 9)) * rng.uniform(0.1, 10.0, 9) + 3.0
    liars = list(range(1, f + 1))
    z_max = _z_max(n, f)
    forged = attacks.build("alie", {"z": -z_max}).apply(dict(enumerate(messages)), liars, rng)
    honest = [messages[w].tolist() for w in range(n) if w not in liars]
    expected = []
    for column in zip(*honest, strict=True):
        mean = math.fsum(column) / len(column)
        std = math.sqrt(math.fsum((x - mean) ** 2 for x in column) / len(column))
        expected.append(mean - z_max * std)
    for liar in liars:
        np.testing.assert_allclose(forged[liar], expected, rtol=1e-13, atol=1e-13)
    for worker in range(n):
        if worker not in liars:
            assert np.array_equal(forged[worker], messages[worker])
