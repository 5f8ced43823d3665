"""A tree node's rows (``gradcode.runlogs.nodelog``): through a ``DONE`` report and back, and
``nodes.jsonl`` across a resume."""

from __future__ import annotations

import json

import numpy as np

from gradcode.runlogs.nodelog import NODES_FILE, NodeLog, decode, read_nodes, write_nodes


def _rows(worker: int, iterations: range) -> list[dict]:
    log = NodeLog(worker)
    for t in iterations:
        log.add(
            t,
            complete=t % 3 != 0,
            work=0.01 * t,
            elapsed=0.02 * t,
            budget=0.03 * t,
            injected_comm=0.5,
            width=16,
        )
    report = np.concatenate([[7.0, 8.0, 1.0, 2.0, 3.0, 4.0], log.encode()])
    return decode(report[6:])


def test_rows_survive_the_done_report():
    rows = _rows(2, range(4))
    assert [row["iteration"] for row in rows] == [0, 1, 2, 3]
    assert rows[1] == {
        "iteration": 1,
        "worker": 2,
        "complete": True,
        "work": 0.01,
        "elapsed": 0.02,
        "budget": 0.03,
        "injected_comm": 0.5,
        "width": 16,
    }
    assert not rows[0]["complete"] and not rows[3]["complete"]
    assert decode(np.empty(0)) == [] and decode(NodeLog(0).encode()) == []


def test_a_resumed_run_keeps_the_earlier_lines_and_replaces_the_rest(tmp_path):
    write_nodes(tmp_path, _rows(0, range(5)) + _rows(1, range(5)), keep_below=0)
    first = read_nodes(tmp_path)
    assert sorted(first) == [0, 1, 2, 3, 4]
    assert [node["worker"] for node in first[2]] == [0, 1]
    # the resumed session starts at 3: it logged 3.. again (worker 1 only, say)
    write_nodes(tmp_path, _rows(1, range(3, 6)), keep_below=3)
    lines = (tmp_path / NODES_FILE).read_text().splitlines()
    assert [json.loads(line)["iteration"] for line in lines] == [0, 1, 2, 3, 4, 5]
    again = read_nodes(tmp_path)
    assert again[1] == first[1]
    assert [node["worker"] for node in again[4]] == [1]
    assert read_nodes(tmp_path / "nowhere") == {}
