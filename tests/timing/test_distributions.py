"""Per-worker parameters and the shifted exponential they feed."""

import numpy as np
import pytest

from gradcode.timing.distributions import PerWorker, ShiftedExponential


def test_scalar_list_and_types_expand_per_worker():
    assert PerWorker.parse("p", 2).for_workers(3).tolist() == [2.0, 2.0, 2.0]
    assert PerWorker.parse("p", [1, 2, 3]).for_workers(3).tolist() == [1.0, 2.0, 3.0]
    typed = PerWorker.parse("p", {"counts": [2, 1], "values": [5, 7]})
    assert typed.for_workers(3).tolist() == [5.0, 5.0, 7.0]
    assert typed.workers() == 3 and not typed.uniform
    assert typed.as_param() == {"counts": [2, 1], "values": [5.0, 7.0]}


@pytest.mark.parametrize(
    "value, message",
    [
        (0, r"p: must be a finite number > 0 \(got 0.0\)"),
        ("fast", r"p: must be a number \(got 'fast'\)"),
        ([], r"p: must not be an empty list"),
        ([1, -1], r"p\[1\]: must be a finite number > 0"),
        ({"counts": [1]}, r"p: per type needs exactly the keys counts and values"),
        ({"counts": [0], "values": [1]}, r"p.counts\[0\]: must be an integer >= 1"),
        ({"counts": [1, 2], "values": [1]}, r"p: counts and values must be lists of equal length"),
        (float("inf"), r"p: must be a finite number"),
    ],
)
def test_invalid_values_name_the_key(value, message):
    with pytest.raises(ValueError, match=message):
        PerWorker.parse("p", value)


def test_shift_may_be_zero_but_rate_may_not():
    assert PerWorker.parse("shift", 0, positive=False).scalar == 0.0


def test_worker_count_mismatch_names_key_and_scheme():
    with pytest.raises(ValueError, match="lambda1: describes 2 workers but crc has 4"):
        PerWorker.parse("lambda1", [1, 2]).check(4, "crc")


def test_samples_have_the_per_worker_means():
    shift = PerWorker.parse("t", [0, 1, 2], positive=False)
    dist = ShiftedExponential(shift, PerWorker.parse("r", [1, 2, 4]))
    draws = dist.sample(np.random.default_rng(0), 200_000, 3)
    assert draws.shape == (200_000, 3)
    np.testing.assert_allclose(draws.min(axis=0), [0, 1, 2], atol=1e-3)
    np.testing.assert_allclose(draws.mean(axis=0), dist.means(3), rtol=0.01)
    np.testing.assert_allclose(dist.means(3), [1.0, 1.5, 2.25])
