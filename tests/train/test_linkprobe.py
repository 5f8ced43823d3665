"""The link probe (``python -m gradcode.train.linkprobe``) with 3 ranks on one host: every
worker rank and direction, every size, medians, fits and the stated links' prediction."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import pytest

from gradcode.launch.jobs import mpiexec, run_command
from gradcode.timing.links import message_time
from gradcode.train.linkprobe import parse_args, parse_size

pytestmark = pytest.mark.mpi
ROOT = Path(__file__).resolve().parents[2]


def _probe(out, *args, ranks=3, timeout=90):
    command = [mpiexec(), "-n", str(ranks), sys.executable, "-m", "gradcode.train.linkprobe"]
    done = run_command([*command, "--out", str(out), *args], timeout=timeout)
    return done.returncode, done.stdout, done.stderr


def test_sizes_read_with_binary_units():
    assert parse_size("64KiB") == 65536 and parse_size("32MiB") == 32 * 2**20
    assert parse_size("4096") == 4096 and parse_size("1mb") == 10**6


def test_probe_times_every_size_both_ways_with_three_ranks(tmp_path):
    sizes = [65536, 1048576, 4194304]
    code, stdout, stderr = _probe(
        tmp_path, "--sizes", "64KiB,1MiB,4MiB", "--repeats", "2", "--rate", "1gbit"
    )
    assert code == 0, stderr[-2000:]
    result = json.loads((tmp_path / "links.json").read_text())
    assert result["sizes"] == sizes and result["one_clock"] is True
    assert [r["rank"] for r in result["ranks"]] == [0, 1, 2]
    messages = result["messages"]
    assert len(messages) == 2 * 2 * len(sizes) * 2  # peers x directions x sizes x repeats
    for message in messages:
        assert message["peer"] in (1, 2) and message["direction"] in ("up", "down")
        assert message["time"] == message["clock_time"] > 0  # one host: the clocks agree
        assert message["ack_time"] is not None and message["rtt"] > 0
        assert message["rate"] == pytest.approx(message["bytes"] / message["time"])
    for direction in ("up", "down"):
        rows = result["summary"][direction]["sizes"]
        assert [row["bytes"] for row in rows] == sizes
        for row in rows:
            assert row["messages"] == 4 and row["min"] <= row["time"] <= row["max"]
            assert row["predicted"] == pytest.approx(message_time(row["bytes"], 125e6, 125e6))
            assert row["ratio"] == pytest.approx(row["time"] / row["predicted"])
        assert result["summary"][direction]["fit"] is not None
    with open(tmp_path / "links.csv") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == len(messages) and set(rows[0]) >= {"peer", "bytes", "time", "rate"}
    assert "fit: latency" in stdout


def test_the_stated_rates_are_read_in_the_one_grammar(capsys):
    args = parse_args(["--out", "x", "--rate", "12.5MB/s", "--master-rate", "200mbit"])
    assert (args.rate_bytes, args.master_bytes) == (12.5e6, 25e6)
    with pytest.raises(SystemExit):
        parse_args(["--out", "x", "--rate", "100mbps"])
    assert (
        "--rate: '100mbps' is ambiguous: write 100mbit (100 Mbit/s) or 100MB/s (100 megabytes "
        "per second)" in capsys.readouterr().err
    )


def test_probe_refuses_one_rank(tmp_path):
    code, _, stderr = _probe(tmp_path, ranks=1)
    assert code == 2 and "at least 2 ranks" in stderr


def test_probe_reads_the_links_of_a_run_file(tmp_path):
    code, _, stderr = _probe(
        tmp_path,
        "--sizes",
        "64KiB",
        "--repeats",
        "1",
        "--directions",
        "up",
        "--run",
        str(ROOT / "config" / "runs" / "cluster-smoke.yaml"),
        ranks=2,
    )
    assert code == 0, stderr[-2000:]
    result = json.loads((tmp_path / "links.json").read_text())
    assert result["stated"] == {"rate": 12.5e6, "master_rate": 12.5e6, "latency": 0.001}
    (row,) = result["summary"]["up"]["sizes"]
    assert row["predicted"] == pytest.approx(0.001 + 65536 / 12.5e6)  # the stated 1 ms one way
    assert "down" not in result["summary"]
