"""The intake's checks of one received result (``gradcode.train.intake``), without MPI: every
malformation and every non-finite value refused with its sender and reason, honest results,
pull's notices and stale results let through."""

from __future__ import annotations

import numpy as np
import pytest

from gradcode.train.intake import MALFORMED, NON_FINITE, Intake, Sender, non_finite
from gradcode.train.protocol import FIELD, HEADER, H, result_tag

WIDTH = 6
#: channel 1 serves worker 0 (keys 0 and 1), channel 2 worker 1 (key 2); channel 3 none
SENDERS = {1: Sender(0, frozenset({0, 1})), 2: Sender(1, frozenset({2}))}


def intake(**options) -> Intake:
    return Intake(WIDTH, SENDERS.get, **options)


def message(iteration: int = 4, key: int = 2, worker: int = 1) -> np.ndarray:
    buffer = np.zeros(H + WIDTH)
    buffer[FIELD["iteration"]], buffer[FIELD["key"]], buffer[FIELD["worker"]] = (
        iteration,
        key,
        worker,
    )
    buffer[H:] = np.linspace(-1.0, 2.0, WIDTH)
    return buffer


def check(buffer, *, source=2, tag=None, nbytes=None, current=4, truncated=False, **options):
    tag = result_tag(int(buffer[0])) if tag is None else tag
    nbytes = buffer.nbytes if nbytes is None else nbytes
    return intake(**options).check(source, tag, nbytes, buffer, current, truncated=truncated)


def test_an_honest_result_passes():
    assert check(message()) is None
    assert check(message(key=1, worker=0), source=1) is None


@pytest.mark.parametrize(
    ("value", "label"), [(np.nan, "1 NaN"), (np.inf, "1 +inf"), (-np.inf, "1 -inf")]
)
def test_each_non_finite_value_is_refused_and_counted(value, label):
    buffer = message()
    buffer[H + 3] = value
    refusal = check(buffer)
    assert refusal is not None
    assert (refusal.kind, refusal.worker, refusal.source, refusal.key) == (NON_FINITE, 1, 2, 2)
    assert refusal.iteration == 4
    assert label in refusal.reason and f"of {WIDTH} values" in refusal.reason


def test_nan_and_both_infinities_are_counted_apart():
    values = np.array([np.nan, np.inf, np.inf, -np.inf, 1.0, np.nan, np.nan])
    assert non_finite(values) == "non-finite payload: 3 NaN, 2 +inf, 1 -inf of 7 values"
    # +inf and -inf sum to NaN: still found
    assert non_finite(np.array([np.inf, -np.inf])) is not None


def test_large_finite_values_whose_sum_of_squares_overflows_pass():
    big = np.full(4, np.finfo(np.float64).max)
    with np.errstate(over="ignore"):
        assert not np.isfinite(big.dot(big))
    assert non_finite(big) is None
    buffer = message()
    buffer[H:] = np.finfo(np.float64).max
    assert check(buffer) is None


@pytest.mark.parametrize(
    ("change", "fragment"),
    [
        (dict(truncated=True), "oversized"),
        (dict(nbytes=(H + WIDTH) * 8 - 3), "not float64"),
        (dict(nbytes=(H - 1) * 8), "shorter than the"),
        (dict(nbytes=H * 8), "a header without a message"),
        (dict(nbytes=(H + WIDTH - 1) * 8), f"the code's are {WIDTH}"),
        (dict(tag=result_tag(5)), "not its own"),
        (dict(tag=3), "not its own"),
        (dict(source=3), "serves no worker"),
    ],
)
def test_a_malformed_result_is_refused_where_it_is_read(change, fragment):
    refusal = check(message(), **change)
    assert refusal is not None and refusal.kind == MALFORMED
    assert fragment in refusal.reason, refusal.reason


@pytest.mark.parametrize(
    ("field", "value", "fragment"),
    [
        ("worker", 0.0, "names worker 0, sent by worker 1"),
        ("key", 0.0, "key 0 is not one of worker 1's"),
        ("key", 2.5, "key 2.5 is not one of worker 1's"),
        ("iteration", 4.5, "is not an iteration"),
        ("iteration", -1.0, "is not an iteration"),
        ("compute", np.nan, "non-finite field(s) compute"),
        ("sent", np.inf, "non-finite field(s) sent"),
    ],
)
def test_a_header_that_lies_is_refused(field, value, fragment):
    buffer = message()
    buffer[FIELD[field]] = value
    tag = result_tag(4)
    refusal = check(buffer, tag=tag)
    assert refusal is not None and refusal.kind == MALFORMED and refusal.worker == 1
    assert fragment in refusal.reason, refusal.reason
    assert field in HEADER


def test_a_result_ahead_of_the_receiver_is_refused_only_where_none_can_be():
    early = message(iteration=6)
    assert "ahead of the current 4" in check(early, ahead=0).reason
    assert check(early, ahead=None) is None  # a tree parent's child may be ahead


def test_stale_results_are_not_inspected():
    stale = message(iteration=2)
    stale[H] = np.nan
    assert check(stale) is None  # never used: the port counts it stale


def test_a_header_only_result_is_a_notice_only_under_pull():
    notice = message()[:H].copy()
    assert check(notice, nbytes=H * 8, notices=True) is None
    assert check(notice, nbytes=H * 8) is not None


def test_a_non_finite_message_is_named_with_the_iteration_its_header_gives():
    buffer = message(iteration=5)
    buffer[H] = np.nan
    refusal = check(buffer, current=4, ahead=None)
    assert refusal is not None and refusal.iteration == 5 and refusal.kind == NON_FINITE


def test_a_ring_report_is_checked_like_a_result():
    from gradcode.train.intake import report_refusal

    fields = {"iteration": 0, "worker": 1}
    report = np.array([3.0, 0.0, 1.0, 2.0, 3.0])  # iteration 3, worker 0, a sum of 3

    def refusal(buffer, nbytes=None, truncated=False, iteration=3, worker=0):
        nbytes = buffer.nbytes if nbytes is None else nbytes
        return report_refusal(
            nbytes, buffer, truncated=truncated, iteration=iteration, worker=worker, fields=fields
        )

    assert refusal(report) is None
    assert "oversized" in refusal(report, truncated=True)
    assert "wrong length: 32 bytes" in refusal(report, nbytes=32)
    assert "names worker 0, iteration 3" in refusal(report, iteration=2)
    assert "names worker 0" in refusal(report, worker=1)
    poisoned = report.copy()
    poisoned[3] = -np.inf
    assert "1 -inf of 3 values" in refusal(poisoned)
    poisoned[0] = np.nan
    assert "non-finite" in refusal(poisoned)
