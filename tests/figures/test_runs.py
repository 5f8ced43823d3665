"""Training runs as the figures read them: summary.json and the metric records of log.jsonl."""

import json

import pytest

from gradcode.figures.runs import (
    data_note,
    legend_label,
    read_run,
    read_runs,
    stand_in_suffix,
)
from gradcode.figures.style import STAND_IN_NOTE


def write_run(folder, *, name="exp/n4-frc", dataset="amazon", stand_in=False, time_unit=0.01):
    """A finished run as the trainer leaves it (the parts figures read)."""
    folder.mkdir(parents=True)
    stragglers = {"model": "master-worker", "params": {}}
    if time_unit is not None:
        stragglers["time_unit"] = time_unit
    summary = {
        "name": name,
        "scheme": "frc",
        "scheme_params": {"n": 4, "s": 1},
        "data": {"dataset": dataset, "stand_in": stand_in},
        "config": {"stragglers": stragglers},
        "iteration_time": {"mean": 0.25},
        "iterations": 3,
    }
    (folder / "summary.json").write_text(json.dumps(summary))
    records = [
        {"iteration": 0, "time": 0.1, "loss": 0.69, "auc": 0.5, "relative_error": None,
         "messages": [1, 2]},
        {"iteration": 1, "time": 0.3, "messages": [3]},  # no metrics evaluated
        {"iteration": 2, "time": 0.5, "loss": 0.6, "auc": 0.7, "relative_error": 0.1},
        {"iteration": 3, "time": 0.8, "loss": 0.5, "relative_error": 0.05},
    ]  # fmt: skip
    (folder / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return folder / "summary.json"


@pytest.fixture
def run(tmp_path):
    return read_run(write_run(tmp_path / "run"))


def test_read_run_keeps_the_metric_records_without_messages(run, tmp_path):
    assert run.path == tmp_path / "run" / "summary.json"
    assert [row["iteration"] for row in run.points] == [0, 2, 3]
    assert all("messages" not in row for row in run.points)
    assert run.points[0] == {
        "iteration": 0,
        "time": 0.1,
        "loss": 0.69,
        "auc": 0.5,
        "relative_error": None,
    }


def test_run_properties(run, tmp_path):
    assert run.short_name == "n4-frc"
    assert run.params == {"n": 4, "s": 1}
    assert run.stand_in is False
    assert run.time_unit == 0.01
    assert run.iteration_time == 0.25
    plain = read_run(write_run(tmp_path / "plain", name="plain", time_unit=None))
    assert plain.short_name == "plain"
    assert plain.time_unit == 1.0  # the default: model units are seconds


def test_series_and_defined(run):
    # series: every point that logged the metric, null included
    assert run.series("auc") == ([0.1, 0.5], [0.5, 0.7])
    assert run.series("relative_error") == ([0.1, 0.5, 0.8], [None, 0.1, 0.05])
    assert run.series("accuracy") == ([], [])
    # defined: only the points where it has a value
    assert [row["iteration"] for row in run.defined("relative_error")] == [2, 3]
    assert [row["iteration"] for row in run.defined("auc")] == [0, 2]


def test_read_runs_from_the_comma_separated_parameter(tmp_path):
    a = write_run(tmp_path / "a", name="exp/a")
    b = write_run(tmp_path / "b", name="exp/b")
    assert [r.short_name for r in read_runs(f"{a},{b}")] == ["a", "b"]
    assert [r.short_name for r in read_runs(f"{b},")] == ["b"]
    assert read_runs("") == []


def test_notes_name_the_data_and_flag_stand_ins(tmp_path):
    real = read_run(write_run(tmp_path / "real", dataset="amazon"))
    other = read_run(write_run(tmp_path / "other", dataset="gisette"))
    fake = read_run(write_run(tmp_path / "fake", dataset="amazon-standin", stand_in=True))
    assert data_note([real, other, real]) == "amazon, gisette"
    assert data_note([real, fake]) == f"amazon, amazon-standin - {STAND_IN_NOTE}"
    assert stand_in_suffix([real, other]) == ""
    assert stand_in_suffix([real, fake]) == f"; {STAND_IN_NOTE}"
    assert stand_in_suffix([]) == ""
    assert legend_label(real) == "exp/n4-frc: frc on amazon"
    assert legend_label(fake) == "exp/n4-frc: frc on amazon-standin (STAND-IN data)"
