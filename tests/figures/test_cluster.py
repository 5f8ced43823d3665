"""The emulated network's figure helpers (gradcode.figures.cluster)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from gradcode.codes import build
from gradcode.figures.cluster import (
    PAYLOAD_FRACTION,
    by_workers,
    cut_window,
    iteration_times,
    peer_medians,
    predicted_after_download,
    probe_rows,
    reference_codes,
    relative_error,
    stall,
    time_saved,
)
from gradcode.runfile.config import LinksConfig
from gradcode.runlogs.log import read_log
from gradcode.train.protocol import H

P = PAYLOAD_FRACTION


def _hop(nbytes: float, slower: float, latency: float = 0.0) -> float:
    """The links' per-message delay in the model of a run on links: the latency, and the
    last frame (a full one of 1,514 bytes, or a smaller message's own with its 66 header
    bytes) through the second link, the slower one."""
    return latency + min(1514, nbytes + 66 * -(-nbytes // 1448)) / slower


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
    # at the links' payload rate, and their last frame through the master's link
    alone = 0.8 / P + _hop(800, 1000)
    got = predicted_after_download(code, record, links, 100, header_bytes=0)
    assert got == pytest.approx(alone)
    record["messages"][1]["started"] = 10.0
    got = predicted_after_download(code, record, links, 100, header_bytes=0)
    assert got == pytest.approx(10 + alone)


def test_iteration_times_set_every_logged_iteration_beside_both_models():
    links = LinksConfig(rate=1000.0, master_rate=2000.0, latency=0.0)
    code = build("uncoded", n=2)
    messages = [{"key": w, "started": 0.5, "compute": 0.0, "injected_compute": 0.1} for w in (0, 1)]
    for message in messages:
        message |= {"worker": message["key"], "bytes": 800}
    records = [{"iteration_time": 1.5, "messages": messages, "used": [0, 1]}] * 3
    times = iteration_times(code, records, links, 100)
    assert set(times) == {"measured", "predicted", "after_download", "floor"}
    assert all(values.shape == (3,) for values in times.values())
    assert times["measured"] == pytest.approx([1.5] * 3)
    # from the logged start: ready at 0.5 + 0.1, then 800 bytes and the runtime's header at
    # 1000 B/s each (the master's 2000 B/s shared by two)
    expected = predicted_after_download(code, records[0], links, 100)
    assert times["after_download"] == pytest.approx([expected] * 3)
    assert expected > 0.6 + 0.8
    # the model's own download (two models through the master's link) comes first instead
    assert np.all(times["predicted"] > 0.1 + 0.8)


def test_runs_are_grouped_by_n_and_the_papers_comparisons_found_by_parameters():
    codes = {
        "n4-opt": build("ye-abbe", n=4, d=2, s=1, m=1),
        "n3-uncoded": build("uncoded", n=3),
        "n4-uncoded-too": build("ye-abbe", n=4, d=1, s=0, m=1),
        "n4-m1": build("ye-abbe", n=4, d=4, s=3, m=1),
        "n4-m2": build("ye-abbe", n=4, d=2, s=0, m=2),
    }
    groups = by_workers(codes)
    assert groups == {3: ["n3-uncoded"], 4: ["n4-opt", "n4-uncoded-too", "n4-m1", "n4-m2"]}
    four = {name: codes[name] for name in groups[4]}
    expected = {"n4-opt": 3.0, "n4-uncoded-too": 9.0, "n4-m1": 5.0, "n4-m2": 1.0}
    # paper 000's (n, 1, 0, 1) code is the uncoded scheme; (2, 0, 2) has s = 0 but m > 1
    roles = reference_codes(four, expected)
    assert roles == {"optimum": "n4-m2", "uncoded": "n4-uncoded-too", "m1": "n4-opt"}
    # a run without an expected time is never the optimum; a missing role is None
    roles = reference_codes(
        {"n3-uncoded": codes["n3-uncoded"], "n4-m1": codes["n4-m1"]}, {"n4-m1": 1.0}
    )
    assert roles == {"optimum": "n4-m1", "uncoded": "n3-uncoded", "m1": "n4-m1"}
    assert reference_codes({"a": codes["n3-uncoded"]}, {"a": 2.0})["m1"] is None
    with pytest.raises(ValueError, match="expected time"):
        reference_codes(four, {})
    assert time_saved(0.75, 1.0) == pytest.approx(0.25)


def _probe(rate_mbit, slowdown, sizes=(1_000_000, 4_000_000), fit=True):
    """A links.json at ``rate_mbit`` (both ends) whose medians are the payload-rate model's
    times ``slowdown``, fitted as the probe fits them."""
    rate = rate_mbit * 1e6 / 8
    payload = rate * PAYLOAD_FRACTION
    rows = [
        {"bytes": b, "time": slowdown * b / payload, "min": 0, "max": 0, "rate": 0} for b in sizes
    ]
    summary = {"sizes": rows, "fit": {"latency": 0.0, "rate": payload / slowdown} if fit else None}
    return {
        "stated": {"rate": rate, "master_rate": rate, "latency": 0.0},
        "summary": {"up": summary, "down": summary},
        "ranks": [0, 1],
        "repeats": 1,
    }


def test_a_rate_sweep_is_read_slowest_first_and_compared_rate_by_rate(tmp_path):
    from gradcode.figures.cluster import read_sweep, stated_rate, sweep_fits, sweep_rows

    for label, mbit, slowdown in (("50mbit", 50, 1.02), ("25mbit", 25, 1.0)):
        (tmp_path / label).mkdir()
        (tmp_path / label / "links.json").write_text(json.dumps(_probe(mbit, slowdown)))
    index = tmp_path / "index.json"
    entries = [{"rate": r, "links": f"{r}/links.json"} for r in ("50mbit", "25mbit")]
    index.write_text(json.dumps({"rates": entries}))
    probes = read_sweep(index)
    assert list(probes) == ["25mbit", "50mbit"]
    assert stated_rate(probes["50mbit"]) == pytest.approx(50e6 / 8)
    rows = sweep_rows(probes)
    assert len(rows) == 2 * 2 * 2  # rates x directions x sizes
    assert {r["label"] for r in rows if r["stated"] == pytest.approx(25e6 / 8)} == {"25mbit"}
    assert all(
        r["ratio_frames"] == pytest.approx(1.0 if r["label"] == "25mbit" else 1.02) for r in rows
    )
    fits = sweep_fits(probes)
    assert [(f["label"], f["direction"]) for f in fits] == [
        ("25mbit", "up"),
        ("25mbit", "down"),
        ("50mbit", "up"),
        ("50mbit", "down"),
    ]
    first, last = fits[0], fits[-1]
    assert first["fit_ratio"] == pytest.approx(PAYLOAD_FRACTION)
    assert first["fit_ratio_frames"] == pytest.approx(1.0)
    assert first["worst_frames"] == pytest.approx(0.0, abs=1e-12)
    assert first["worst"] == pytest.approx(1 / PAYLOAD_FRACTION - 1)  # the plain model's
    assert last["fit_ratio_frames"] == pytest.approx(1 / 1.02)
    assert last["worst_frames"] == pytest.approx(0.02) and last["sizes"] == 2
    # a probe without a fit still has its worst ratio; one without a stated rate fails
    unfitted = _probe(25, 1.0, fit=False)
    unfitted["summary"] = {"up": unfitted["summary"]["up"]}
    (fit,) = sweep_fits({"x": unfitted})
    assert fit["fitted"] is None and fit["fit_ratio"] is None and fit["sizes"] == 2
    with pytest.raises(ValueError, match="stated rate"):
        sweep_rows({"x": _probe(25, 1.0) | {"stated": {"rate": None}}})
    index.write_text(json.dumps({"rates": []}))
    with pytest.raises(ValueError, match="without rates"):
        read_sweep(index)


def test_message_transfers_show_incast_at_the_master():
    from gradcode.figures.cluster import message_transfers

    code = build("uncoded", n=4)
    features, rate = 1000, 12.5e6
    links = LinksConfig(rate=rate, master_rate=rate, latency=0.0)
    size = 8 * features + 8 * H
    # all four ready together: they share the master's link and finish together
    record = {
        "messages": [
            {"key": w, "compute": 0.001, "injected_compute": 0.0, "transfer": 0.003}
            for w in range(4)
        ]
    }
    measured, model = message_transfers(code, record, links, features)
    assert measured == pytest.approx([0.003] * 4)
    assert model == pytest.approx([4 * size / (rate * P)] * 4)
    # far apart, each has the link alone
    record["messages"] = [
        {"key": w, "compute": 0.001 + 0.01 * w, "injected_compute": 0.0, "transfer": None}
        for w in range(4)
    ]
    record["messages"][0]["transfer"] = 0.001
    measured, model = message_transfers(code, record, links, features)
    assert measured.size == 1 and model == pytest.approx([size / (rate * P)])


def _started(workers, started=0.0, work=0.0, used=()):
    return {
        "used": list(used),
        "messages": [
            {
                "key": w,
                "worker": w,
                "bytes": 800 + 8 * H,
                "started": started,
                "compute": 0.0,
                "injected_compute": work,
            }
            for w in range(workers)
        ],
    }


@pytest.mark.parametrize("latency", [0.0, 0.01])
def test_the_model_after_the_measured_download_pulls_what_the_code_needs(latency):
    links = LinksConfig(rate=1000.0, master_rate=2000.0, latency=latency)
    code = build("frc", n=4, s=1)  # groups (0, 1), (2, 3): one of each
    record = _started(4)

    def after(collection):
        return predicted_after_download(
            code, record, links, 100, header_bytes=0, collection=collection
        )

    # push: 4 x 800 bytes share 2000 B/s (500 each); pull: 2 of them, each at its own 1000
    hop = _hop(800, 1000, latency)
    assert after("push") == pytest.approx(hop + 1.6 / P)
    assert predicted_after_download(code, record, links, 100, header_bytes=0) == after("push")
    assert after("pull") == pytest.approx(3 * hop + 0.8 / P)
    # worker 0 starts late: its group's other one (1) is pulled instead, as soon
    record["messages"][0]["started"] = 10.0
    assert after("pull") == pytest.approx(3 * hop + 0.8 / P)
    with pytest.raises(ValueError, match=r"parameters\.collection: must be one of"):
        after("poll")


def test_iteration_times_pass_the_collection_to_both_models():
    latency, size = 0.01, 800 + 8 * H
    links = LinksConfig(rate=1000.0, master_rate=2000.0, latency=latency)
    code = build("frc", n=4, s=1)
    records = [{"iteration_time": 3.0, **_started(4, started=0.5, work=0.1, used=[0, 2])}] * 2
    times = iteration_times(code, records, links, 100, collection="pull")
    # the floor: one model through a worker's link, the work, the 2 used results through the
    # master's port, all at the links' payload rate
    rate, master = 1000 * PAYLOAD_FRACTION, 2000 * PAYLOAD_FRACTION
    floor = latency + 8 * 101 / rate + 0.1 + latency + max(2 * size / master, size / rate)
    assert times["floor"] == pytest.approx([floor] * 2)
    # the model's own download: 4 copies of 808 bytes at 500 B/s each; then 0.1 s of work,
    # the notice, the PULL, 2 results at 1000 B/s each, received (payload rates; every
    # message a frame of the smallest, the model's 808 bytes, later)
    hop = _hop(808, 1000, latency)
    download = hop + 8 * 101 / (500 * P)
    pulled = download + 0.1 + 3 * hop + size / (1000 * P)
    assert times["predicted"] == pytest.approx([pulled] * 2)
    after = 0.5 + 0.1 + 3 * _hop(min(808, size), 1000, latency) + size / (1000 * P)
    assert times["after_download"] == pytest.approx([after] * 2)
    pushed = iteration_times(code, records, links, 100)
    assert pushed["predicted"] == pytest.approx([download + 0.1 + hop + size / (500 * P)] * 2)
    after = 0.6 + _hop(min(808, size), 1000, latency) + size / (500 * P)
    assert pushed["after_download"] == pytest.approx([after] * 2)


def test_predicted_links_time_pulls_for_flat_and_tree_codes_not_rings():
    from gradcode.runlogs.timings import predicted_links_time

    links = LinksConfig(rate=1000.0, master_rate=2000.0, latency=0.0)
    code = build("ye-abbe", n=4, d=4, s=3, m=1)  # any one of 4
    record = _started(4, work=0.2)
    hop = _hop(800, 1000)  # (the results' frame: smaller than the model's)
    download = hop + 4 * 8 * 101 / (2000 * P)  # 4 copies share the master's 2000 B/s
    got = predicted_links_time(code, record, links, 100, header_bytes=0, collection="pull")
    assert got == pytest.approx(download + 0.2 + 3 * hop + 800 / (1000 * P))
    pushed = predicted_links_time(code, record, links, 100, header_bytes=0)
    # all 4 share the port
    assert pushed == pytest.approx(download + 0.2 + hop + 4 * 800 / (2000 * P))
    # CodedReduce (2, 2, 1): every parent pulls one of its two children, all ready at once
    tree = build("coded-reduce", n=2, L=2, s=1)
    injected = {"start": [0.0] * 6, "compute": [0.0] * 6}
    idle = {"messages": [], "injected": injected}
    pulled = predicted_links_time(tree, idle, links, 100, header_bytes=0, collection="pull")
    pushed = predicted_links_time(tree, idle, links, 100, header_bytes=0)
    # copies: the master's two, a parent's two
    down = 2 * hop + (2 * 8 * 101 / 2000 + 2 * 8 * 101 / 1000) / P
    assert pushed == pytest.approx(down + 2 * hop + (2 * 800 / 1000 + 2 * 800 / 2000) / P)
    assert pulled == pytest.approx(down + 6 * hop + (800 / 1000 + 800 / 1000) / P)
    ring = build("ring-allreduce", n=4)
    with pytest.raises(ValueError, match=r"parameters\.collection: pull is for flat and tree"):
        predicted_links_time(ring, record, links, 100, collection="pull")
