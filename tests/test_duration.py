"""The one duration type and grammar (gradcode.duration): accepted spellings, refused ones with
their one-line messages, exact round trips through the canonical spelling."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gradcode.duration import LONGEST_NS, PATTERN, Duration, DurationError
from gradcode.errors import UserError


@pytest.mark.parametrize(
    ("text", "nanoseconds"),
    [
        ("1ms", 1_000_000),
        ("0.25ms", 250_000),
        ("250us", 250_000),
        ("1.5us", 1_500),
        ("2s", 2_000_000_000),
        ("0.1s", 100_000_000),
        ("1e3us", 1_000_000),
        ("0ms", 0),
        ("0", 0),
        (0, 0),
    ],
)
def test_accepted_spellings(text, nanoseconds):
    assert Duration.parse(text, "f").nanoseconds == nanoseconds


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("1", "--latency: '1' has no unit: write it with us, ms or s (e.g. 1ms)"),
        (1, "--latency: 1 has no unit"),
        (0.5, "--latency: 0.5 has no unit"),
        ("-1ms", "--latency: a duration must be >= 0, got '-1ms'"),
        ("1 ms", "expected a duration like 1ms or 250us"),
        ("1MS", "expected a duration like 1ms or 250us"),
        ("1ns", "units us, ms, s"),
        ("1min", "units us, ms, s"),
        ("0.0001us", "finer than a nanosecond"),
        ("61s", "longer than 60s"),
        (True, "expected a duration"),
        (None, "expected a duration"),
    ],
)
def test_refused_spellings_are_one_line_naming_the_field(value, says):
    with pytest.raises(DurationError) as error:
        Duration.parse(value, "--latency")
    message = str(error.value)
    assert says in message and "\n" not in message and message.startswith("--latency: ")
    assert isinstance(error.value, UserError)


@pytest.mark.parametrize(
    ("nanoseconds", "text"),
    [(0, "0ms"), (1_000_000, "1ms"), (250_000, "250us"), (1_500_000, "1500us"), (1_500, "1.5us"),
     (1_000_001, "1.000001ms"), (2 * 10**9, "2s"), (2_500_000_000, "2500ms")],
)  # fmt: skip
def test_canonical_spelling(nanoseconds, text):
    assert str(Duration(nanoseconds)) == text
    assert re.match(PATTERN, text)


@given(st.integers(min_value=0, max_value=LONGEST_NS))
def test_the_canonical_spelling_reads_back_exactly(nanoseconds):
    duration = Duration(nanoseconds)
    assert Duration.parse(str(duration), "f") == duration


def test_a_duration_holds_whole_nanoseconds():
    with pytest.raises(DurationError):
        Duration(1.5)  # type: ignore[arg-type]
    with pytest.raises(DurationError):
        Duration(-1)
    assert Duration(3) < Duration(4) and not Duration(0) and Duration(1)
    assert Duration(1_500_000).seconds == 0.0015
