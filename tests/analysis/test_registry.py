"""The analysis registry, its CLI and the workflow schema agree."""

import json
from pathlib import Path

import pytest
import yaml

from gradcode.analysis import ANALYSES, available_analyses
from gradcode.analysis.base import Analysis, read_analysis
from gradcode.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_schema_lists_exactly_the_registered_analyses():
    schema = yaml.safe_load((ROOT / "workflow/schemas/config.schema.yaml").read_text())
    analyze = schema["properties"]["analyze"]["properties"]
    assert sorted(analyze["names"]["items"]["enum"]) == available_analyses()
    assert sorted(analyze["trials_per_analysis"]["propertyNames"]["enum"]) == sorted(ANALYSES)


def test_every_analysis_module_has_compute():
    import importlib

    for name, (module, description) in ANALYSES.items():
        assert callable(importlib.import_module(f"gradcode.analysis.{module}").compute), name
        assert description


def test_written_table_round_trips(tmp_path):
    result = Analysis([{"n": 3, "x": 0.5}, {"n": 4, "y": [1, 2]}], {"what": "demo"})
    csv_path, sidecar = result.write(tmp_path / "demo.csv")
    assert read_analysis(csv_path) == [
        {"n": "3", "x": "0.5", "y": ""},
        {"n": "4", "x": "", "y": "[1,2]"},
    ]
    assert json.loads(sidecar.read_text()) == {"what": "demo"}


def test_empty_analysis_is_refused(tmp_path):
    with pytest.raises(ValueError, match="at least one row"):
        Analysis([]).write(tmp_path / "empty.csv")
    assert not list(tmp_path.iterdir())


def test_cli_writes_table_and_sidecar(tmp_path):
    out = tmp_path / "loads.csv"
    assert main(["analyze", "coded-reduce-loads", "--quiet", "--out", str(out)]) == 0
    meta = json.loads(out.with_name("loads.csv.json").read_text())
    assert meta["name"] == "coded-reduce-loads" and meta["trials"] == 1000
    assert any(row["n"] == "3" and row["L"] == "2" for row in read_analysis(out))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["analyze"], "analyze needs a NAME"),
        (["analyze", "nope", "--out", "x.csv"], "unknown analysis 'nope'"),
        (["analyze", "berrut-error"], "analyze needs --out FILE.csv"),
        (["analyze", "berrut-error", "--out", "x.csv", "--trials", "0"], "--trials must be >= 1"),
    ],
)
def test_cli_errors_are_one_line(capsys, args, message):
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err


def test_cli_lists_analyses(capsys):
    assert main(["analyze", "--list"]) == 0
    assert capsys.readouterr().out.count("\n") == len(ANALYSES)
