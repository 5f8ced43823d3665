"""``gradcode codes recommend`` end to end: table, CSV, JSON, run-file lines that a run file
accepts, and one-line errors with exit status 2."""

from __future__ import annotations

import json

import pytest
import yaml

from gradcode.cli import main
from gradcode.codes import build
from gradcode.recommend.recommendation import RECORD_COLUMNS
from gradcode.runfile.config import parse_config
from gradcode.sim.table import read_csv

FAST = ["--trials", "1500", "--screen-trials", "300", "--quiet"]


def _spec(tmp_path, parameters, n=8, name="cluster.yaml"):
    path = tmp_path / name
    spec = {
        "model": "master-worker",
        "parameters": parameters,
        "schemes": [{"scheme": "uncoded", "params": {"n": n}}],  # read and checked, not used
    }
    path.write_text(yaml.safe_dump(spec))
    return path


@pytest.fixture
def table3_spec(tmp_path):
    return _spec(tmp_path, {"lambda1": 0.8, "t1": 1.6, "lambda2": 0.1, "t2": 6})


def _run_file_lines(out: str) -> str:
    return out.split("run-file lines:\n", 1)[1]


def test_table_csv_and_the_run_file_lines_of_the_best(tmp_path, table3_spec, capsys):
    csv_path = tmp_path / "rank.csv"
    args = ["codes", "recommend", "--spec", str(table3_spec), "--n", "8", "--out", str(csv_path)]
    assert main([*args, *FAST]) == 0
    out = capsys.readouterr().out
    assert "exact codes, ranked by expected time per iteration" in out
    assert "approximate codes" in out and "not ranked here" in out
    assert "ring-allreduce (1 configuration): model master-worker simulates gradient codes" in out
    assert "trials: 300 per configuration to screen all" in out and "then 1500 for the" in out
    lines = _run_file_lines(out)
    run = {"iterations": 1, "data": {"dataset": "synthetic"}, "model": {"kind": "logistic"}}
    run |= {"optimizer": {"step": 1.0}, **yaml.safe_load(lines)}
    scheme = parse_config(run).scheme  # the exact form gradcode train reads
    rows = read_csv(csv_path)
    assert list(rows[0]) == ["section", *RECORD_COLUMNS]
    best = rows[0]
    assert (best["section"], best["rank"], best["scheme"]) == ("exact", "1", scheme.name)
    assert build(scheme.name, **scheme.params).params() == json.loads(best["params"])
    assert {row["section"] for row in rows} == {"exact", "approximate"}
    assert any(row["scheme"] == "uncoded" and row["ratio_to_reference"] == "1" for row in rows)


def test_json_output(table3_spec, capsys):
    args = ["codes", "recommend", "--spec", str(table3_spec), "--n", "8", "--json"]
    assert main([*args, "--schemes", "ye-abbe,crc", "--max-message", "0.5", *FAST]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["best"]["scheme"] in ("ye-abbe", "crc") and payload["best"]["message"] <= 0.5
    assert (
        payload["reference"]["scheme"] == "uncoded" and "outside" in payload["reference"]["notes"]
    )
    assert payload["limits"] == ["--max-message 0.5", "--schemes ye-abbe,crc"]
    assert payload["run_file"].startswith("scheme:\n  name: ")
    assert {entry["limit"] for entry in payload["excluded"]} == {"--max-message 0.5"}


def test_heterogeneous_spec_prints_the_worker_times(tmp_path, capsys):
    spec = _spec(tmp_path, {"lambda1": [0.8] * 4 + [0.2] * 4, "t1": 1.6})
    assert main(["codes", "recommend", "--spec", str(spec), "--n", "8", "--exact-only", *FAST]) == 0
    out = capsys.readouterr().out
    assert "worker times per data subset (fastest = 1, Monte Carlo): 1, 1, 1, 1, 2.3" in out
    assert "sized to the worker times" in out


def test_n_not_matching_a_per_worker_list_is_one_line_and_exit_2(tmp_path, capsys):
    spec = _spec(tmp_path, {"lambda1": [0.8] * 4, "t1": 1.6}, n=4, name="four.yaml")
    assert main(["codes", "recommend", "--spec", str(spec), "--n", "8"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "gradcode: error: four.yaml: parameters.lambda1: describes 4 workers but --n is 8\n"
    )


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--max-load", "0"], "--max-load must be a number in (0, 1] (got 0.0)"),
        (["--trials", "1"], "--trials must be >= 2 (got 1)"),
        (["--schemes", "frc,nope"], "unknown scheme 'nope'"),
        (["--model-kind", "svm"], "unknown model 'svm'"),
        (["--bogus", "1"], "unrecognized arguments: --bogus 1"),
    ],
)
def test_bad_options_are_one_line_errors(table3_spec, capsys, extra, message):
    assert main(["codes", "recommend", "--spec", str(table3_spec), "--n", "8", *extra]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gradcode: error: ") and message in err and err.count("\n") == 1


def test_a_bad_spec_gives_the_simulate_one_liner(tmp_path, capsys):
    path = tmp_path / "bad.yaml"
    path.write_text("model: master-worker\nparameters: {lambda1: 0.8, t1: 1.6, rate: 2}\n")
    assert main(["codes", "recommend", "--spec", str(path), "--n", "8"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gradcode: error: bad.yaml: ") and err.count("\n") == 1
