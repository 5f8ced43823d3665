"""``fair_finish_trials``: the fair-share schedule of every trial at once, against
``fair_finish`` trial by trial, with chained messages, caps of several sizes, zero-byte flows
and flows never sent; and ``collect`` taking it, pushed and pulled."""

from __future__ import annotations

import numpy as np
import pytest

from gradcode.codes import build
from gradcode.timing.collection import Pulls, collect
from gradcode.timing.fair_share import fair_finish, fair_finish_trials
from tests.helpers.flows import ready_times


def _cases():
    rng = np.random.default_rng(11)
    for case in range(80):
        trials, flows = int(rng.integers(1, 6)), int(rng.integers(1, 25))
        ready = ready_times(rng, case, trials, flows)
        sizes = rng.choice([0.0, 0.3, 1.0, 5.0], flows)
        # one cap for all in some cases, caps below and above the fair share in others
        caps = np.full(flows, rng.uniform(0.1, 3.0)) if case % 2 else rng.uniform(0.1, 3.0, flows)
        # a sender's messages one after another: flow q after q - 1 within runs of m
        m = int(rng.integers(1, 4))
        after = np.array([q - 1 if q % m else -1 for q in range(flows)])
        if case % 5 == 0:
            after = np.stack([after] * trials)  # one chain per trial
        yield ready, sizes, caps, float(rng.uniform(0.5, 5.0)), after


@pytest.mark.parametrize(("ready", "sizes", "caps", "capacity", "after"), list(_cases()))
def test_the_same_schedule_as_fair_finish(ready, sizes, caps, capacity, after):
    got = fair_finish_trials(ready, sizes, caps, capacity, after)
    for trial, row in enumerate(ready):
        chain = after[trial] if after.ndim == 2 else after
        want = fair_finish(row, sizes, caps, capacity, chain)
        np.testing.assert_allclose(got[trial], want, rtol=1e-10, atol=1e-12)


def test_closed_forms():
    # two flows of 1 at once through a link of 2, one capped at 0.5: it ends at 2, the other
    # takes the 1.5 left and ends at 2/3
    np.testing.assert_allclose(
        fair_finish_trials(np.zeros((1, 2)), [1.0, 1.0], [0.5, 5.0], 2.0), [[2.0, 2 / 3]]
    )
    # a sender's second message starts when its first ends
    np.testing.assert_allclose(
        fair_finish_trials([[0.0, 0.0]], [1.0, 1.0], [1.0, 1.0], 1.0, [-1, 0]), [[1.0, 2.0]]
    )
    assert fair_finish_trials(np.zeros((3, 0)), [], [], 1.0).shape == (3, 0)


def test_collect_of_chained_messages_pushed_and_pulled_as_trial_by_trial():
    rng = np.random.default_rng(3)
    ready = rng.exponential(1.0, (7, 8))
    sizes, caps = np.full(8, 2.0), np.full(8, 1.5)
    after = np.array([-1, 0, -1, 2, -1, 4, -1, 6])  # four senders, two messages each
    pushed = collect(ready, sizes, caps, 3.0, after, 0.25)
    for trial in range(7):
        want = 0.25 + fair_finish(ready[trial], sizes, caps, 3.0, after)
        np.testing.assert_allclose(pushed[trial], want, rtol=1e-10)
    pulls = Pulls.of(build("crc", n=8, s=2))
    pulled = collect(ready, sizes, caps, 3.0, after, 0.25, pulls)
    chosen = pulls.select(ready + 0.25)
    assert (np.isfinite(pulled) == chosen).all()
    for trial in range(7):
        mine = chosen[trial]
        # the chain through a message not pulled goes to the one before it
        chain = [after[q] if after[q] < 0 or mine[after[q]] else -1 for q in range(8)]
        asked = np.where(mine, ready[trial] + 0.5, np.inf)
        want = 0.25 + fair_finish(asked, sizes, caps, 3.0, chain)
        np.testing.assert_allclose(pulled[trial][mine], want[mine], rtol=1e-10)
