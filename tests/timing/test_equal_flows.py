"""``equal_flows_finish``: the fair-share schedule of flows of one size and one cap, every
trial at once, against ``fair_finish`` trial by trial; and ``collect`` taking it."""

from __future__ import annotations

import numpy as np
import pytest

from gradcode.codes import build
from gradcode.timing.links import Pulls, collect, equal_flows_finish, fair_finish
from tests.helpers.flows import ready_times


def _cases():
    rng = np.random.default_rng(7)
    for case in range(60):
        trials, flows = int(rng.integers(1, 5)), int(rng.integers(1, 30))
        ready = ready_times(rng, case, trials, flows)
        size = float(rng.choice([0.0, 0.3, 1.0, 5.0]))
        # caps below and above the link's fair share, so both bind in some cases
        yield ready, size, float(rng.uniform(0.1, 3.0)), float(rng.uniform(0.5, 5.0))


@pytest.mark.parametrize(("ready", "size", "cap", "capacity"), list(_cases()))
def test_the_same_schedule_as_fair_finish(ready, size, cap, capacity):
    got = equal_flows_finish(ready, size, cap, capacity)
    for trial, row in enumerate(ready):
        flows = len(row)
        want = fair_finish(row, np.full(flows, size), np.full(flows, cap), capacity)
        np.testing.assert_allclose(got[trial], want, rtol=1e-12, atol=1e-12)


def test_closed_forms():
    # two flows at 0 and 0.5 through a link of 1: the first alone, then both at 1/2
    np.testing.assert_allclose(equal_flows_finish([[0.0, 0.5]], 1, 1, 1.0), [[1.5, 2.0]])
    # q flows at once share the link: all end at q b / C, unless their own cap is lower
    np.testing.assert_allclose(equal_flows_finish(np.zeros((1, 4)), 2, 10, 4.0), [[2.0] * 4])
    np.testing.assert_allclose(equal_flows_finish(np.zeros((1, 4)), 2, 0.5, 4.0), [[4.0] * 4])
    assert equal_flows_finish(np.zeros((3, 0)), 1, 1, 1).shape == (3, 0)


def test_collect_pushed_and_pulled_as_trial_by_trial():
    rng = np.random.default_rng(1)
    ready = rng.exponential(1.0, (6, 8))
    sizes, caps = np.full(8, 2.0), np.full(8, 1.5)
    pushed = collect(ready, sizes, caps, 3.0, None, 0.25)
    for trial in range(6):
        want = 0.25 + fair_finish(ready[trial], sizes, caps, 3.0)
        np.testing.assert_allclose(pushed[trial], want, rtol=1e-12)
    # pulled: the first 6 notices of the cyclic code's 8 workers; the others never arrive
    pulls = Pulls.of(build("crc", n=8, s=2))
    pulled = collect(ready, sizes, caps, 3.0, None, 0.25, pulls)
    chosen = pulls.select(ready + 0.25)
    assert (np.isfinite(pulled) == chosen).all() and chosen.sum(axis=1).tolist() == [6] * 6
    for trial in range(6):
        asked = np.where(chosen[trial], ready[trial] + 0.5, np.inf)
        want = 0.25 + fair_finish(asked, sizes, caps, 3.0)
        np.testing.assert_allclose(pulled[trial][chosen[trial]], want[chosen[trial]], rtol=1e-12)
