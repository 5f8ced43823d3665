"""The links model's fair-share schedule, every trial at once against trial by trial.

``gradcode.timing.collection.collect`` simulates the master's link for every trial of a Monte
Carlo estimate. Where the flows differ (a ``ye-abbe`` worker's ``m`` messages one after
another, senders of different rates) it ran ``fair_finish`` per trial in Python; it now runs
``fair_finish_trials``, the same events for all trials at once. Prints, for each case, both
times measured in this run, their ratio and the largest difference of the finish times (the
two must agree: ``tests/timing/test_fair_trials.py``).

    python benchmarks/fair_share_trials.py [--trials 5000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from gradcode.timing.fair_share import fair_finish, fair_finish_trials

#: (workers, messages a worker, caps differ): the recommend grid's ye-abbe at n = 8 and 20,
#: and senders of two rates
CASES = ((8, 3, False), (20, 3, False), (20, 1, True))


def _case(trials: int, workers: int, m: int, mixed: bool, seed: int):
    rng = np.random.default_rng(seed)
    flows = workers * m
    ready = np.repeat(rng.exponential(1.0, (trials, workers)), m, axis=1)
    sizes = np.full(flows, 1.0 / m)
    caps = np.where(np.arange(flows) % 2, 0.5, 2.0) if mixed else np.ones(flows)
    after = np.array([q - 1 if q % m else -1 for q in range(flows)])
    return ready, sizes, caps, 4.0, after


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    for workers, m, mixed in CASES:
        ready, sizes, caps, capacity, after = _case(args.trials, workers, m, mixed, workers)
        looped, together = [], []
        for _ in range(args.rounds):
            began = time.perf_counter()
            want = np.stack([fair_finish(row, sizes, caps, capacity, after) for row in ready])
            looped.append(time.perf_counter() - began)
            began = time.perf_counter()
            got = fair_finish_trials(ready, sizes, caps, capacity, after)
            together.append(time.perf_counter() - began)
        gap = float(np.max(np.abs(got - want)))
        print(
            f"n = {workers:2d}, m = {m}, caps {'mixed' if mixed else 'equal'}: "
            f"per trial {min(looped):.3f} s, all trials {min(together):.3f} s, "
            f"ratio {min(looped) / min(together):.1f}, largest difference {gap:.1e}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
