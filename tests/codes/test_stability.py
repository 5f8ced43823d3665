import csv

import pytest

from gradcode.cli import main
from gradcode.codes.stability import FAMILIES, stability_rows, write_stability_csv


def test_rows_cover_every_family_and_binary_stays_at_round_off(tmp_path):
    rows = list(stability_rows([5, 9], patterns=5))
    assert {row["family"] for row in rows} == {family.label for family in FAMILIES}
    assert all(row["patterns"] == 5 for row in rows)
    assert all(row["max_relative_error"] < 1e-13 for row in rows if row["scheme"] == "binary")
    path = tmp_path / "stability.csv"
    write_stability_csv(path, rows)
    with path.open() as handle:
        assert len(list(csv.DictReader(handle))) == len(rows)


def test_empty_study_writes_nothing(tmp_path):
    with pytest.raises(ValueError, match="no rows"):
        write_stability_csv(tmp_path / "out.csv", [])
    assert list(tmp_path.iterdir()) == []


def test_cli(tmp_path, capsys):
    out = tmp_path / "s.csv"
    args = ["codes", "stability", "--n-min", "5", "--n-max", "6", "--patterns", "3"]
    assert main([*args, "--families", "binary,crc", "--out", str(out)]) == 0
    with out.open() as handle:
        assert {row["scheme"] for row in csv.DictReader(handle)} == {"binary", "crc"}
    assert main([*args, "--families", "nope", "--out", str(out)]) == 2
    assert "unknown --families ['nope']" in capsys.readouterr().err
