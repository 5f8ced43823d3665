"""The ByzShield distortion analysis: its rows are the exhaustive worst case of each code, the
paper's bound holds above ByzShield's, and ``gradcode analyze`` writes the table."""

from __future__ import annotations

import json

from gradcode.analysis.base import read_analysis
from gradcode.analysis.byzshield_distortion import case_rows
from gradcode.cli import main
from tests.codes.test_byzshield import BYZSHIELD_K15


def test_rows_at_k15_are_the_pinned_worst_case_beside_detox_and_the_baseline():
    rows = case_rows(5, 3, 7)
    assert [row["q"] for row in rows] == list(range(8))
    for row in rows:
        q = row["q"]
        assert (row["K"], row["f"], row["byzshield_distorted"]) == (15, 25, BYZSHIELD_K15[q])
        assert row["byzshield_fraction"] == BYZSHIELD_K15[q] / 25
        assert row["byzshield_distorted"] <= row["byzshield_bound"]
        assert row["detox_fraction"] == (q // 2) / 5 and row["baseline_fraction"] == q / 15


def test_with_five_copies_two_liars_distort_nothing():
    rows = case_rows(7, 5, 3)
    assert [row["byzshield_distorted"] for row in rows] == [0, 0, 0, 1]
    assert [row["detox_fraction"] for row in rows] == [0, 0, 0, 1 / 7]


def test_cli_writes_the_table(tmp_path, monkeypatch):
    from gradcode.analysis import byzshield_distortion

    monkeypatch.setattr(byzshield_distortion, "Q_MAX", {(5, 3): 3})
    out = tmp_path / "distortion.csv"
    assert main(["analyze", "byzshield-distortion", "--quiet", "--out", str(out)]) == 0
    rows = read_analysis(out)
    assert [row["byzshield_distorted"] for row in rows] == ["0", "0", "1", "3"]
    assert json.loads(out.with_name("distortion.csv.json").read_text())["cases"] == [
        {"l": 5, "r": 3, "q_max": 3}
    ]
