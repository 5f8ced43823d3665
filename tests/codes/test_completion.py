"""Vectorised completion times agree with the generic rule built on ``is_decodable``."""

import numpy as np
import pytest

from gradcode.codes import GradientCode, available, build, scheme_class


def _overrides(name):
    return scheme_class(name).completion_times is not GradientCode.completion_times


@pytest.mark.parametrize("name", [name for name in available() if _overrides(name)])
def test_vectorised_completion_matches_is_decodable(name):
    rng = np.random.default_rng(7)
    checked = 0
    for params in scheme_class(name).parameter_grid(9):
        code = build(name, **params)
        keys = len(code.all_message_keys())
        arrivals = rng.exponential(size=(60, keys))
        arrivals[rng.random(arrivals.shape) < 0.15] = np.inf  # workers that never answer
        arrivals[:5] = np.round(arrivals[:5], 1)  # ties
        fast = code.completion_times(arrivals)
        exact = GradientCode.completion_times(code, arrivals)
        np.testing.assert_array_equal(fast, exact, err_msg=repr(code))
        checked += 1
    assert checked


def test_arrivals_shape_is_checked():
    with pytest.raises(ValueError, match=r"arrivals must have shape \(trials, 4\), got \(2, 3\)"):
        build("crc", n=4, s=1).completion_times(np.zeros((2, 3)))
