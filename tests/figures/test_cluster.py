"""The emulated network's figure helpers (gradcode.figures.cluster)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from gradcode.codes import build
from gradcode.figures.cluster import (
    PAYLOAD_FRACTION,
    cut_window,
    peer_medians,
    predicted_after_download,
    probe_rows,
    relative_error,
    stall,
)
from gradcode.train.config import LinksConfig
from gradcode.train.log import read_log


def _links(rate=12.5e6, master=25e6):
    return {
        "stated": {"rate": rate, "master_rate": master, "latency": 0.0},
        "summary": {
            "up": {
                "sizes": [
                    {"bytes": 1_250_000, "time": 0.105, "min": 0.1, "max": 0.11, "rate": 1.19e7}
                ],
                "fit": None,
            }
        },
        "messages": [
            {"peer": 1, "direction": "up", "bytes": 100, "time": 0.3},
            {"peer": 1, "direction": "up", "bytes": 100, "time": 0.1},
            {"peer": 1, "direction": "up", "bytes": 100, "time": 0.2},
            {"peer": 2, "direction": "up", "bytes": 100, "time": None},
        ],
    }


def test_probe_rows_put_the_median_beside_the_model_with_and_without_frames():
    (row,) = probe_rows(_links())
    assert row["predicted"] == pytest.approx(0.1)  # the slower of the two links
    assert row["predicted_frames"] == pytest.approx(0.1 / PAYLOAD_FRACTION)
    assert row["ratio"] == pytest.approx(1.05)
    assert row["ratio_frames"] == pytest.approx(1.05 * PAYLOAD_FRACTION)
    with pytest.raises(ValueError, match="stated rate"):
        probe_rows(_links() | {"stated": {"rate": None}})


def test_peer_medians_skip_messages_without_a_time():
    assert peer_medians(_links()) == {(1, "up", 100): 0.2}


def test_the_cut_window_and_the_stall():
    assert cut_window({"down": None, "up": None}) is None
    window = cut_window({"down": {"log_lines": 3}, "up": {"log_lines": 4}})
    assert window == (3, 4)
    times = [0.5, 0.1, 0.1, 0.1, 3.2, 0.1, 0.1]
    info = stall(times, window)
    assert info == {"longest": 3.2, "at": 4, "typical": 0.1, "during": 1}
    assert stall(times, None)["longest"] is None


def test_relative_error_and_read_log(tmp_path):
    ref = np.array([[1.0, 0.0], [0.0, 2.0]])
    assert relative_error(ref, ref) == 0.0
    assert relative_error(ref + np.array([[0.0, 0.0], [0.0, 0.2]]), ref) == pytest.approx(0.1)
    with pytest.raises(ValueError):
        relative_error(np.empty((0, 2)), ref)
    (tmp_path / "log.jsonl").write_text(json.dumps({"iteration": 0}) + "\n\n")
    assert read_log(tmp_path) == [{"iteration": 0}]


def test_the_model_after_the_measured_download_shares_the_masters_link():
    links = LinksConfig(rate=1000.0, master_rate=2000.0, latency=0.0)
    code = build("uncoded", n=2)
    record = {
        "messages": [
            {"key": w, "started": 0.0, "compute": 0.0, "injected_compute": 0.0} for w in (0, 1)
        ]
    }
    # two messages of 8 * 100 bytes (+ no header) share 2000 B/s, each capped at 1000: 0.8 s
    assert predicted_after_download(code, record, links, 100, header_bytes=0) == pytest.approx(0.8)
    record["messages"][1]["started"] = 10.0
    assert predicted_after_download(code, record, links, 100, header_bytes=0) == pytest.approx(10.8)
