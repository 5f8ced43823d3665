"""The search over parallel classes (``worst_distortions``, ``class_search``) finds the true
maximum: on every case small enough to try every placement it equals brute force, with the
rotation shortcut (ByzShield's three placements, DETOX) and without it (random placements
whose classes rotate onto nothing), and its worst placements attain what it reports."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from gradcode.codes import build
from gradcode.codes.distortion import class_search, worst_distortion, worst_distortions
from gradcode.errors import ParameterError


def brute_force(holds: np.ndarray, quorum: int, q: int) -> int:
    """The most columns of ``holds`` with ``quorum`` chosen rows, over every ``q`` rows."""
    best = 0
    for rows in itertools.combinations(range(holds.shape[0]), q):
        best = max(best, int((holds[list(rows)].sum(axis=0) >= quorum).sum()))
    return best


@pytest.mark.parametrize(
    ("params", "q_max"),
    [
        ({"l": 5, "r": 3}, 15),
        ({"l": 5, "r": 3, "placement": "ramanujan-1"}, 15),
        ({"l": 3, "r": 3, "placement": "ramanujan-2"}, 9),
        ({"l": 6, "r": 3, "placement": "ramanujan-2"}, 9),
        ({"l": 7, "r": 3}, 6),
        ({"l": 5, "r": 5, "placement": "ramanujan-2"}, 5),
        ({"l": 2, "r": 1}, 2),
    ],
)
def test_byzshield_equals_every_placement_tried(params, q_max):
    code = build("byzshield", **params)
    found = worst_distortions(code, q_max)
    for q, ours in enumerate(found):
        tried = worst_distortion(code, q)
        assert (ours.distorted, ours.placements) == (tried.distorted, tried.placements), q
        assert len(ours.worst) == q and code.aggregation_corrupted(ours.worst) == ours.distorted


@pytest.mark.parametrize(("n", "r"), [(15, 3), (9, 1), (20, 5)])
def test_detox_equals_every_placement_tried(n, r):
    code = build("detox", n=n, r=r)
    for q, ours in enumerate(worst_distortions(code, 6)):
        assert ours.distorted == worst_distortion(code, q).distorted, q


@pytest.mark.parametrize("seed", range(10))
def test_random_placements_without_a_symmetry_equal_brute_force(seed):
    """Classes of unequal sizes, each a random partition of the files among its workers (some
    workers hold none): no rotation maps such a placement onto itself."""
    rng = np.random.default_rng(seed)
    files = int(rng.integers(6, 14))
    sizes = rng.integers(2, 5, size=int(rng.integers(2, 5)))
    quorum = int(rng.integers(1, len(sizes) + 1))
    holds = np.zeros((int(sizes.sum()), files), dtype=bool)
    classes, start = [], 0
    for size in sizes:
        holds[start + rng.integers(0, size, size=files), np.arange(files)] = True
        classes.append(tuple(range(start, start + int(size))))
        start += int(size)
    found = class_search(holds, classes, quorum, len(holds))
    for q, (distorted, worst) in enumerate(found):
        assert distorted == brute_force(holds, quorum, q), (seed, q)
        assert len(worst) == q
        assert int((holds[list(worst)].sum(axis=0) >= quorum).sum()) == distorted


@pytest.mark.slow
def test_k35_finishes_every_q_of_the_paper_and_agrees_with_brute_force_where_it_can():
    code = build("byzshield", l=7, r=5)
    found = worst_distortions(code, 13)
    assert [d.placements for d in found] == [math.comb(35, q) for q in range(14)]
    for q in range(4):
        assert found[q].distorted == worst_distortion(code, q).distorted


def test_refusals_are_one_line():
    with pytest.raises(ParameterError, match="frc does not describe its votes"):
        worst_distortions(build("frc", n=4, s=1), 1)
    with pytest.raises(ParameterError, match=r"has n=15 workers \(got q=16\)"):
        worst_distortions(build("byzshield", l=5, r=3), 16)
    holds = np.array([[1, 0], [1, 1]], dtype=bool)
    with pytest.raises(ParameterError, match="exactly one holder in each parallel class"):
        class_search(holds, [(0, 1)], 1, 1)
