"""Reading the workflow's CSV tables and reshaping their rows."""

import json
import math

import pytest

from gradcode.figures.tables import (
    ci_errors,
    group_by,
    index_by,
    means,
    read_rows,
    read_sidecar,
    select,
)

ROWS = [
    {"label": "GC", "n": 8, "s": 1, "mean_time": 2.0, "ci_low": 1.5, "ci_high": 2.75},
    {"label": "CR", "n": 12, "s": 1, "mean_time": 0.5, "ci_low": 0.25, "ci_high": 1.0},
    {"label": "UMW", "n": 8, "s": 0, "mean_time": 4.0, "ci_low": 4.0, "ci_high": 4.0},
]


def test_read_rows_converts_numbers(tmp_path):
    path = tmp_path / "table.csv"
    path.write_text(
        "label,n,mean_time,small,flag,empty,code\n"
        'GC,8,2.5,1e-17,true,,"(4, 3)"\n'
        "CR,-3,7.0,inf,false,,x\n"
    )
    rows = read_rows(path)
    assert rows[0] == {
        "label": "GC",
        "n": 8,
        "mean_time": 2.5,
        "small": 1e-17,
        "flag": "true",  # booleans stay text: notebooks compare with "true"
        "empty": "",
        "code": "(4, 3)",
    }
    assert isinstance(rows[0]["n"], int) and isinstance(rows[1]["mean_time"], float)
    assert rows[1]["n"] == -3 and math.isinf(rows[1]["small"])


def test_read_rows_of_a_header_only(tmp_path):
    path = tmp_path / "table.csv"
    path.write_text("label,n\n")
    assert read_rows(str(path)) == []


def test_read_sidecar(tmp_path):
    table = tmp_path / "sim.csv"
    meta = {"parameters": {"tc": 0.05}, "trials": 100}
    (tmp_path / "sim.csv.json").write_text(json.dumps(meta))
    assert read_sidecar(table) == meta
    assert read_sidecar(str(table)) == meta


def test_group_by_column_or_function_in_order_of_first_appearance():
    assert group_by(ROWS, "n") == {8: [ROWS[0], ROWS[2]], 12: [ROWS[1]]}
    assert list(group_by(ROWS, "s")) == [1, 0]
    by_size = group_by(ROWS, lambda row: row["n"] > 10)
    assert by_size == {False: [ROWS[0], ROWS[2]], True: [ROWS[1]]}
    assert group_by([], "n") == {}


def test_index_by():
    assert index_by(ROWS, "label") == {"GC": ROWS[0], "CR": ROWS[1], "UMW": ROWS[2]}
    assert index_by(ROWS, "n") == {8: ROWS[2], 12: ROWS[1]}  # the later row wins


def test_select():
    assert select(ROWS, n=8) == [ROWS[0], ROWS[2]]
    assert select(ROWS, n=8, s=0) == [ROWS[2]]
    assert select(ROWS, n=8, s=2) == []
    assert select(ROWS) == ROWS
    with pytest.raises(KeyError):
        select(ROWS, missing=1)


def test_ci_errors_are_distances_below_and_above():
    assert ci_errors(ROWS) == [[0.5, 0.25, 0.0], [0.75, 0.5, 0.0]]
    assert ci_errors(iter(ROWS[:1])) == [[0.5], [0.75]]
    other = [{"median": 3.0, "ci_low": 1.0, "ci_high": 4.0}]
    assert ci_errors(other, "median") == [[2.0], [1.0]]


def test_means_of_columns_and_of_functions():
    cells = [
        {"exact": 1.0, "named": 0.5},
        {"exact": 0.5, "named": 1.0},
        {"exact": 0.0, "named": 0.0},
    ]
    pooled = means(cells, {"exact": "exact", "both": lambda c: c["exact"] * c["named"]})
    assert pooled == {"exact": 0.5, "both": (0.5 + 0.5 + 0.0) / 3}
    assert list(pooled) == ["exact", "both"]
    with pytest.raises(ZeroDivisionError):
        means([], {"exact": "exact"})
