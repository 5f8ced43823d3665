"""Comparison rows: the relative difference, the kinds, and the CSV the workflow concatenates."""

import csv
import math

import pytest

from gradcode.figures.compare import FIELDS, KINDS, Comparison, write_rows
from gradcode.figures.fidelity import row_fidelity, with_fidelity


def row(paper_value, reproduced, kind="simulation", note=""):
    return Comparison("000 (Ye & Abbe)", "Table 3", "E[T]", paper_value, reproduced, kind, note)


@pytest.mark.parametrize(
    "paper_value, reproduced, difference",
    [
        (20.0, 22.0, "+10.00%"),
        (20.0, 19.0, "-5.00%"),
        (-4.0, -5.0, "-25.00%"),  # relative to |paper|: below the paper's value is negative
        (3, 3, "+0.00%"),
        (1.0, 1.000049, "+0.00%"),
        (0.0, 1.0, ""),  # no relative difference to zero
        (math.inf, 1.0, ""),
        (math.nan, 1.0, ""),
        ("(4, 3)", "(4, 3)", ""),  # text on either side
        (21.3697, "not run", ""),
        ("about 1", 0.98, ""),
    ],
)
def test_difference(paper_value, reproduced, difference):
    assert row(paper_value, reproduced).difference == difference


def test_kind_must_be_known():
    # the failed-workers figure's rows (workers killed mid-run) have a kind of their own
    assert "emulated failure" in KINDS
    for kind in KINDS:
        assert row(1.0, 1.0, kind).kind == kind
    with pytest.raises(ValueError, match="comparison kind must be one of"):
        row(1.0, 1.0, "measured")


def read(path):
    with path.open(newline="") as handle:
        return list(csv.reader(handle))


def test_write_rows(tmp_path):
    path = tmp_path / "tables" / "compare" / "figure.csv"  # parents are created
    write_rows(
        path,
        [
            row(21.3697, 21.12345678, note="n = 8, k = 8"),
            row("(4, 3)", "(4, 3)", "exact computation"),
            row(7, 6.999999999, "exact computation"),
            row(0.88, 1e-17),
        ],
    )
    header, *lines = read(path)
    assert tuple(header) == FIELDS
    assert lines == [
        ["000 (Ye & Abbe)", "Table 3", "E[T]", "21.3697", "21.1235", "-1.15%", "simulation",
         "n = 8, k = 8", "", ""],
        ["000 (Ye & Abbe)", "Table 3", "E[T]", "(4, 3)", "(4, 3)", "", "exact computation", "",
         "", ""],
        # an int is written as it is, a float with 6 significant digits
        ["000 (Ye & Abbe)", "Table 3", "E[T]", "7", "7", "-0.00%", "exact computation", "", "",
         ""],
        ["000 (Ye & Abbe)", "Table 3", "E[T]", "0.88", "1e-17", "-100.00%", "simulation", "", "",
         ""],
    ]  # fmt: skip
    assert [p.name for p in path.parent.iterdir()] == ["figure.csv"]  # no temporary left


def test_write_rows_replaces_and_writes_a_header_without_rows(tmp_path):
    path = tmp_path / "figure.csv"
    write_rows(path, [row(1.0, 2.0)])
    write_rows(str(path), [])
    assert read(path) == [list(FIELDS)]


def test_rows_made_from_runs_carry_their_dilation_and_verdict(tmp_path):
    """A row names the runs it was made from (``with_fidelity``), or the figure's runs fill
    it (``write_rows``' ``fidelity``): the machine's when it decided any of them."""
    links = {"dilation": 4.0, "fidelity": {"dilation": 4.0, "verdict": {"decided_by": "links"}}}
    machine = {"dilation": 1.0, "fidelity": {"dilation": 1.0, "verdict": {"decided_by": "machine"}}}
    assert row_fidelity([links]) == {"dilation": 4.0, "fidelity": "links"}
    assert row_fidelity([links, machine]) == {"dilation": "1/4", "fidelity": "machine"}
    assert row_fidelity([{"name": "written before fidelity records"}]) == {
        "dilation": "",
        "fidelity": "",
    }
    path = tmp_path / "figure.csv"
    write_rows(
        path, [with_fidelity(row(1.0, 1.0), [links]), row(2.0, 2.0)], row_fidelity([machine])
    )
    _header, *lines = read(path)
    assert [line[-2:] for line in lines] == [["4.0", "links"], ["1.0", "machine"]]
