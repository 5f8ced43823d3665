"""The one rate type and grammar (gradcode.rate): every accepted spelling, every refused one
with its one-line message, exact round trips through the canonical spelling."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gradcode.errors import UserError
from gradcode.rate import PATTERN, Rate, RateError

MB = 1e6  # bytes per second in 1 MB/s
MBIT = 1e6 / 8  # bytes per second in 1 mbit


@pytest.mark.parametrize(
    ("text", "bytes_per_second"),
    [
        ("8bit", 1.0),
        ("100bit", 12.5),
        ("1kbit", 125.0),
        ("100mbit", 100 * MBIT),
        ("100Mbit", 100 * MBIT),
        ("100MBIT", 100 * MBIT),
        ("2.5gbit", 2.5e9 / 8),
        ("1Gbit", 1e9 / 8),
        ("12.5kbit", 12.5e3 / 8),
        ("1e6bit", 1e6 / 8),
        ("1.1mbit", 1_100_000 / 8),  # exactly: not 1.1 * 1e6 = 1100000.0000000002
        ("0.1MB/s", 100_000.0),
        ("1.25E2mbit", 125 * MBIT),
        ("5B/s", 5.0),
        ("1kB/s", 1e3),
        ("1KB/s", 1e3),
        ("12.5MB/s", 12.5 * MB),
        ("3GB/s", 3e9),
        ("1.25e7B/s", 12.5 * MB),
    ],
)
def test_every_accepted_spelling(text, bytes_per_second):
    rate = Rate.parse(text, "rate")
    assert rate.bytes_per_second == bytes_per_second
    assert rate.bits_per_second == 8 * bytes_per_second
    assert re.match(PATTERN, text)


def test_one_rate_in_bits_or_bytes_and_its_canonical_spelling():
    assert Rate.parse("100mbit", "r") == Rate.parse("12.5MB/s", "r") == Rate(12.5e6)
    # one rational, one float, however it is spelt (parsed exactly, rounded once)
    assert Rate.parse("0.8mbit", "r") == Rate.parse("0.1MB/s", "r") == Rate.parse("800kbit", "r")
    assert Rate.parse("1.1mbit", "r").bits_per_second == 1_100_000
    assert Rate.from_bits(1e8) == Rate(12.5e6)
    assert str(Rate(12.5e6)) == "100mbit"
    assert str(Rate.from_bits(1_500_000)) == "1500kbit"
    assert str(Rate.from_bits(2.5e9)) == "2500mbit"
    assert str(Rate(1.0)) == "8bit"
    assert str(Rate(1000.1)) == "8000.8bit"  # not whole bits: the exact decimal
    assert Rate.parse("200mbit", "r") > Rate.parse("100mbit", "r")
    assert f"{Rate(11_960_123.456789):.4g}" == "95.68mbit"
    assert f"{Rate(100.0):.3g}" == "800bit" and f"{Rate(12.5e6)}" == "100mbit"


@pytest.mark.parametrize(
    ("text", "bits", "byte_reading"),
    [
        ("100mbps", "100mbit (100 Mbit/s)", "100MB/s (100 megabytes per second)"),
        ("100Mbps", "100mbit (100 Mbit/s)", "100MB/s (100 megabytes per second)"),
        ("100MBps", "100mbit (100 Mbit/s)", "100MB/s (100 megabytes per second)"),
        ("100MBPS", "100mbit (100 Mbit/s)", "100MB/s (100 megabytes per second)"),
        ("2kbps", "2kbit (2 kbit/s)", "2kB/s (2 kilobytes per second)"),
        ("2Kbps", "2kbit (2 kbit/s)", "2kB/s (2 kilobytes per second)"),
        ("1gbps", "1gbit (1 Gbit/s)", "1GB/s (1 gigabytes per second)"),
        ("1Gbps", "1gbit (1 Gbit/s)", "1GB/s (1 gigabytes per second)"),
        ("500bps", "500bit (500 bit/s)", "500B/s (500 bytes per second)"),
        ("500Bps", "500bit (500 bit/s)", "500B/s (500 bytes per second)"),
        ("100Mb/s", "100mbit (100 Mbit/s)", "100MB/s (100 megabytes per second)"),
        ("100mb/s", "100mbit (100 Mbit/s)", "100MB/s (100 megabytes per second)"),
        ("10kb/s", "10kbit (10 kbit/s)", "10kB/s (10 kilobytes per second)"),
        ("10Gb/s", "10gbit (10 Gbit/s)", "10GB/s (10 gigabytes per second)"),
        ("7b/s", "7bit (7 bit/s)", "7B/s (7 bytes per second)"),
    ],
)
def test_ambiguous_spellings_are_refused_naming_both_readings(text, bits, byte_reading):
    with pytest.raises(RateError) as caught:
        Rate.parse(text, "run.yaml: network.links.rate")
    message = str(caught.value)
    assert message == (
        f"run.yaml: network.links.rate: {text!r} is ambiguous: write {bits} or {byte_reading}"
    )
    assert not re.match(PATTERN, text)


@pytest.mark.parametrize(
    ("value", "says"),
    [
        # a bare number: a unit is needed, and both readings are named
        ("100", "'100' has no unit: write 100bit (100 bit/s) or 100B/s (100 bytes per second)"),
        (100, "100 has no unit: write 100bit (100 bit/s) or 100B/s (100 bytes per second)"),
        (12.5e6, "has no unit: write 12500000bit (12500000 bit/s) or 12500000B/s"),
        (0.5, "has no unit: write 0.5bit (0.5 bit/s) or 0.5B/s"),
        # not positive, not finite
        ("0mbit", "a rate must be finite and > 0, got '0mbit'"),
        ("0B/s", "a rate must be finite and > 0"),
        ("0", "a rate must be > 0, got '0'"),
        ("-5mbit", "a rate must be > 0, got '-5mbit'"),
        (0, "a rate must be finite and > 0, got 0"),
        (-1.5, "a rate must be finite and > 0"),
        (math.nan, "a rate must be finite and > 0, got nan"),
        (math.inf, "a rate must be finite and > 0, got inf"),
        ("1e999gbit", "a rate must be finite and > 0"),
        ("1e99999999gbit", "a rate must be finite and > 0"),
        ("1.7e308B/s", "a rate must be finite and > 0"),  # its bits would not be
        (10**400, "a rate must be finite and > 0"),
        ("nan", "expected a rate like 100mbit or 12.5MB/s"),
        ("nanmbit", "expected a rate like 100mbit"),
        ("infB/s", "expected a rate like 100mbit"),
        # garbage
        ("fast", "expected a rate like 100mbit or 12.5MB/s (bits per second: bit, kbit"),
        ("", "expected a rate like"),
        ("mbit", "expected a rate like"),
        ("+5mbit", "(no sign)"),
        (".5mbit", "expected a rate like"),
        ("100 mbit", "no space between the number and the unit: '100 mbit'"),
        ("100mbit/s", "unknown rate unit 'mbit/s'"),
        ("100MB", "unknown rate unit 'MB'"),
        ("100mB/s", "unknown rate unit 'mB/s'"),
        ("5tbit", "unknown rate unit 'tbit'"),
        ("100furlongs", "unknown rate unit 'furlongs'"),
        (True, "expected a rate like 100mbit or 12.5MB/s, got True"),
        (None, "expected a rate like 100mbit or 12.5MB/s, got None"),
        ([1], "expected a rate"),
        # binary multiples: refused, with the SI spelling of the same rate
        ("100KiB/s", "binary multiples are not accepted (SI only: 1kbit = 1000 bit/s); "
         "write 102400B/s"),
        ("1MiB/s", "write 1048576B/s"),
        ("2kibit", "write 2048bit"),
        ("1Gibit", "write 1073741824bit"),
    ],
)  # fmt: skip
def test_refused_values_are_one_line_naming_the_field(value, says):
    with pytest.raises(RateError) as caught:
        Rate.parse(value, "spec.yaml: parameters.rate")
    message = str(caught.value)
    assert message.startswith("spec.yaml: parameters.rate: ")
    assert says in message
    assert "\n" not in message
    assert isinstance(caught.value, UserError) and isinstance(caught.value, ValueError)
    if isinstance(value, str):
        accepted = re.match(PATTERN, value) is not None
        at_fault = ("0mbit", "0B/s", "1e999gbit", "1e99999999gbit", "1.7e308B/s")
        assert accepted == (value in at_fault)  # only the number is at fault


@pytest.mark.parametrize("value", [0, -1, math.nan, math.inf, True, "1", 1.7e308, 10**400])
def test_the_constructor_takes_positive_finite_bytes_per_second_only(value):
    with pytest.raises(RateError):
        Rate(value)


@given(st.floats(min_value=1e-300, max_value=1e300, allow_nan=False, allow_infinity=False))
def test_the_canonical_spelling_reads_back_exactly(bytes_per_second):
    rate = Rate(bytes_per_second)
    text = str(rate)
    assert re.match(PATTERN, text) and "/" not in text  # a folder's name, and tc's spelling
    assert Rate.parse(text, "rate") == rate


@given(
    st.integers(min_value=1, max_value=10**15),
    st.sampled_from(["bit", "kbit", "mbit", "gbit", "B/s", "kB/s", "MB/s", "GB/s"]),
)
def test_every_spelling_reads_back_through_its_canonical_one(number, unit):
    rate = Rate.parse(f"{number}{unit}", "rate")
    assert Rate.parse(str(rate), "rate") == rate
    assert Rate.parse(rate, "rate") is rate  # a Rate passes through
