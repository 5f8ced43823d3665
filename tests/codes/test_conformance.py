"""The conformance kit: every built-in conforms, and each kind of broken code is caught."""

import random

import numpy as np
import pytest

from gradcode.codes import available, build, scheme_class
from gradcode.codes.conformance import assert_conforms, check_conformance
from gradcode.codes.frc import FractionalRepetition


@pytest.mark.parametrize("name", available())
def test_every_built_in_conforms(name):
    grid = list(scheme_class(name).parameter_grid(8))
    for params in random.Random(name).sample(grid, min(8, len(grid))):
        assert_conforms(build(name, **params), limit=60, subsets=60, trials=60)


def _failed(code):
    report = check_conformance(code, subsets=80, trials=80)
    return {check.name for check in report.checks if not check.passed}


class OptimisticFRC(FractionalRepetition):
    """Claims any n - s - 1 responders suffice."""

    def is_decodable(self, keys):
        return len(set(keys)) >= self.n - self.s - 1


class WrongLength(FractionalRepetition):
    def encode_message(self, key, partials):
        return np.append(super().encode_message(key, partials), 0.0)


class RaisesKeyError(FractionalRepetition):
    def _solve(self, keys):
        if len(keys) < self.groups:
            raise KeyError("a bug, not NotDecodableError")
        return super()._solve(keys)


class LateCompletion(FractionalRepetition):
    def completion_times(self, arrivals):
        return super().completion_times(arrivals) + 1e-9


class HiddenPartition(FractionalRepetition):
    """Declares one partition fewer than it uses."""

    def partitions(self, worker):
        parts = super().partitions(worker)
        return parts[:-1] if worker == 0 else parts


@pytest.mark.parametrize(
    "cls, failing",
    [
        (OptimisticFRC, {"NotDecodableError contract", "completion_times"}),
        (WrongLength, {"message lengths", "decoding"}),
        (RaisesKeyError, {"NotDecodableError contract"}),
        (LateCompletion, {"completion_times"}),
    ],
)
def test_broken_codes_are_caught(cls, failing):
    assert failing <= _failed(cls(n=6, s=1))


def test_a_wrong_support_is_caught():
    # the encoding outside the declared partitions is refused when the code is built
    with pytest.raises(AssertionError, match="uses partitions outside its worker's"):
        HiddenPartition(n=6, s=1)


def test_the_report_lists_each_failure():
    with pytest.raises(AssertionError, match=r"OptimisticFRC\(n=6, s=1\) does not conform"):
        assert_conforms(OptimisticFRC(n=6, s=1))
