"""``gradcode simulate``, through a parser built the way ``gradcode.cli`` wires it."""

import argparse
import json
import sys

import pytest
import yaml

from gradcode.cli import CLIError
from gradcode.sim import preset
from gradcode.sim.cli import add_parser
from gradcode.sim.table import read_csv


def run(argv):
    parser = argparse.ArgumentParser(prog="gradcode", allow_abbrev=False)
    add_parser(parser.add_subparsers(dest="command", required=True))
    args, rest = parser.parse_known_args(argv)
    try:
        return args.func(args, rest)
    except CLIError as error:  # what gradcode.cli.main does
        print(f"gradcode: error: {error}", file=sys.stderr)
        return 2


def test_preset_writes_table_sidecar_and_progress(tmp_path, capsys):
    out = tmp_path / "sub" / "bh.csv"
    argv = ["simulate", "binary-heterogeneous", "--trials", "3000", "--seed", "4", "--out"]
    assert run([*argv, str(out)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert [line[:5] for line in err[:3]] == ["[1/3]", "[2/3]", "[3/3]"]
    assert err[-1].startswith("wrote ")
    rows = read_csv(out)
    assert [r["label"] for r in rows] == ["uncoded", "binary-uniform", "binary-times"]
    meta = json.loads((tmp_path / "sub" / "bh.csv.json").read_text())
    assert meta["name"] == "binary-heterogeneous" and meta["trials"] == 3000 and meta["seed"] == 4
    assert "Section VI" in meta["source"] and meta["description"]
    assert meta["parameters"]["lambda1"] == {"counts": [6, 6], "values": [1.25, 0.625]}
    first = out.read_bytes()
    assert run([*argv, str(out), "--quiet", "--chunk", "1000"]) == 0
    assert capsys.readouterr().err == "" and out.read_bytes() == first


def test_yaml_file_and_confidence(tmp_path):
    spec = tmp_path / "ring.yaml"
    spec.write_text(
        "description: rings\n"
        "model: single-port\n"
        "parameters: {a: 0.0, mu: 10, tc: 1, data: 8}\n"
        "schemes: [{scheme: ring-allreduce, grid: {n: [2, 4]}}]\n"
    )
    out = tmp_path / "ring.csv"
    argv = ["simulate", str(spec), "--trials", "500", "--confidence", "0.5", "--out", str(out)]
    assert run([*argv, "--quiet"]) == 0
    rows = read_csv(out)
    assert [r["n"] for r in rows] == ["2", "4"] and rows[1]["messages"] == "24"
    assert json.loads((tmp_path / "ring.csv.json").read_text())["confidence"] == 0.5


def test_list_and_show(capsys):
    assert run(["simulate", "--list"]) == 0
    listing = capsys.readouterr().out
    for name in ("ye-abbe-table3", "coded-reduce", "coded-reduce-theorem2", "binary-heterogeneous"):
        assert name in listing
    assert run(["simulate", "coded-reduce", "--show"]) == 0
    assert yaml.safe_load(capsys.readouterr().out) == preset("coded-reduce")


@pytest.mark.parametrize(
    "argv, message",
    [
        (["simulate", "nonsense"], "nonsense: neither a preset (binary-heterogeneous"),
        (["simulate"], "simulate needs a PRESET or FILE.yaml (see --list)"),
        (["simulate", "coded-reduce"], "simulate needs --out FILE.csv"),
        (["simulate", "coded-reduce", "--out", "x.csv", "--trials", "1"], "--trials must be >= 2"),
        (["simulate", "coded-reduce", "--out", "x.csv", "--chunk", "0"], "--chunk must be >= 1"),
        (["simulate", "coded-reduce", "--out", "x.csv", "--confidence", "2"], "--confidence must"),
        (["simulate", "coded-reduce", "--bogus", "1"], "unrecognized arguments: --bogus 1"),
    ],
)
def test_errors_are_one_line_with_status_2(argv, message, capsys):
    assert run(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("gradcode: error: ") and message in err and err.count("\n") == 1


def test_spec_errors_reach_the_user_as_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "model: master-worker\nparameters: {lambda1: 1, t1: 0}\nschemes: [{scheme: crc}]\n"
    )
    assert run(["simulate", str(bad), "--out", str(tmp_path / "o.csv")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gradcode: error: bad.yaml: schemes[0].params: crc")
    assert not (tmp_path / "o.csv").exists()
