"""What the emulated network's figures share (``gradcode cluster``, config/cluster.yaml): the
link probe's medians beside the ``shared-links`` model, a run's iterations beside the model's
prediction, a link cut's place among a run's iterations, and a run's exactness against the
serial uncoded trajectory.

Frame overhead. ``tc tbf`` counts whole frames on the veth (Ethernet header included), while a
message's time is its payload over the link: with a 1500-byte MTU and TCP timestamps a full
frame of 1514 bytes carries 1448 bytes of payload (``PAYLOAD_FRACTION``, 95.6 %; measured:
96.2 %). ``probe_rows`` puts every median beside the model with the stated rate (``predicted``)
and with the rate times ``PAYLOAD_FRACTION`` (``predicted_frames``).

Rate sweep. ``gradcode cluster rate`` runs the probe at several rates on one cluster (rule
``cluster_link_rates``, an index of the probes' ``links.json``); ``read_sweep`` loads them,
``sweep_rows`` puts every median beside the model at its own stated rate, and ``sweep_fits``
sets each direction's fitted payload rate beside the stated one.

Collection. ``predicted_after_download`` and ``iteration_times`` here, and
``gradcode.runlogs.timings.predicted_links_time`` they call, take the way the run's results
reached the master (``collection``: ``push`` or ``pull``, the run's ``runtime.collection`` as
resolved, ``summary.json``'s) and give it to the model.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gradcode.codes.base import GradientCode
from gradcode.figures.compare import Comparison
from gradcode.message_header import H
from gradcode.runfile.config import LinksConfig
from gradcode.runlogs.timings import (
    link_floor,
    links_flat_run,
    logged_key,
    logged_work,
    message_index,
    predicted_links_time,
)
from gradcode.timing.fair_share import message_time
from gradcode.timing.links import PAYLOAD_FRACTION


def probe_rows(links: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per direction and size of a ``links.json`` (``gradcode.train.linkprobe``):
    ``direction``, ``bytes``, ``time`` (median, s), ``rate`` (payload bytes/s), ``predicted``
    (the model at the stated rates), ``predicted_frames`` (at the payload's share of them),
    ``ratio`` and ``ratio_frames`` (measured / predicted)."""
    stated = links["stated"]
    if stated.get("rate") is None:
        raise ValueError("links.json has no stated rate (run the probe with --rate)")
    rate, master = float(stated["rate"]), float(stated.get("master_rate") or stated["rate"])
    latency = float(stated.get("latency") or 0.0)
    rows = []
    for direction, summary in links["summary"].items():
        for size in summary["sizes"]:
            nbytes = size["bytes"]
            predicted = message_time(nbytes, rate, master, latency)
            framed = message_time(
                nbytes, rate * PAYLOAD_FRACTION, master * PAYLOAD_FRACTION, latency
            )
            rows.append(
                {
                    "direction": direction,
                    "bytes": nbytes,
                    "time": size["time"],
                    "min": size["min"],
                    "max": size["max"],
                    "rate": size["rate"],
                    "predicted": predicted,
                    "predicted_frames": framed,
                    "ratio": size["time"] / predicted,
                    "ratio_frames": size["time"] / framed,
                }
            )
    return rows


def stated_rate(links: Mapping[str, Any]) -> float:
    """Bytes/s a message between the master and a worker gets on idle links: the slower of
    the workers' and the master's stated rates."""
    stated = links["stated"]
    if stated.get("rate") is None:
        raise ValueError("links.json has no stated rate (run the probe with --rate)")
    return min(float(stated["rate"]), float(stated.get("master_rate") or stated["rate"]))


def read_sweep(index: str | Path) -> dict[str, dict[str, Any]]:
    """A rate sweep's ``links.json`` by label (``25mbit`` ...), slowest stated rate first,
    from its index (``{"rates": [{"rate": label, "links": path}, ...]}``, each path relative
    to the index's folder)."""
    folder = Path(index).parent
    entries = json.loads(Path(index).read_text())["rates"]
    if not entries:
        raise ValueError(f"{index}: a rate sweep without rates")
    probes = {entry["rate"]: json.loads((folder / entry["links"]).read_text()) for entry in entries}
    return dict(sorted(probes.items(), key=lambda item: stated_rate(item[1])))


def sweep_rows(probes: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """``probe_rows`` of every probe of a sweep (label -> ``links.json``), each row with its
    ``label`` and ``stated`` (``stated_rate``, bytes/s)."""
    return [
        {"label": label, "stated": stated_rate(links), **row}
        for label, links in probes.items()
        for row in probe_rows(links)
    ]


def sweep_fits(probes: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per probe and direction: ``stated`` (bytes/s), ``fitted`` (the probe's line fit
    ``time = latency + bytes / rate``: payload bytes/s, ``None`` without a fit), ``fit_ratio``
    (fitted / stated; ``PAYLOAD_FRACTION`` when the link carries what tbf lets through),
    ``fit_ratio_frames`` (fitted / the payload's share of stated), ``latency`` (the fit's, s),
    ``worst_frames`` and ``worst`` (the largest ``|ratio_frames - 1|`` and ``|ratio - 1|``
    over the sizes) and ``sizes`` (how many)."""
    result = []
    for label, links in probes.items():
        stated = stated_rate(links)
        rows = probe_rows(links)
        for direction, summary in links["summary"].items():
            mine = [r for r in rows if r["direction"] == direction]
            if not mine:
                continue
            fit = summary.get("fit") or {}
            fitted = fit.get("rate")
            result.append(
                {
                    "label": label,
                    "direction": direction,
                    "stated": stated,
                    "fitted": fitted,
                    "fit_ratio": fitted / stated if fitted else None,
                    "fit_ratio_frames": fitted / (stated * PAYLOAD_FRACTION) if fitted else None,
                    "latency": fit.get("latency"),
                    "worst_frames": max(abs(r["ratio_frames"] - 1) for r in mine),
                    "worst": max(abs(r["ratio"] - 1) for r in mine),
                    "sizes": len(mine),
                }
            )
    return result


def peer_medians(links: Mapping[str, Any]) -> dict[tuple[int, str, int], float]:
    """Median time per ``(peer, direction, bytes)`` from the probe's messages."""
    times: dict[tuple[int, str, int], list[float]] = {}
    for message in links["messages"]:
        if message.get("time") is not None:
            key = (int(message["peer"]), message["direction"], int(message["bytes"]))
            times.setdefault(key, []).append(float(message["time"]))
    return {key: float(np.median(values)) for key, values in sorted(times.items())}


def predicted_after_download(
    code: GradientCode,
    record: Mapping[str, Any],
    links: LinksConfig,
    features: int,
    *,
    header_bytes: float = 8 * H,
    collection: str = "push",
) -> float:
    """The ``shared-links`` model's iteration time for a flat scheme's logged iteration with
    the model's download replaced by the measured one: each logged message is ready at its
    worker's logged ``started`` (when it had the model) plus its ``compute`` and
    ``injected_compute``, and the results share the master's link as the model says
    (``collection``: pushed, or pulled as the code's completion rule needs them).
    Messages the master never took off the wire are left out (as never sent), so where the
    scheme decodes from few of them the upload is optimistic; it separates how the model
    shares the download from how it shares the upload."""
    _, run = links_flat_run(
        code, links, features, header_bytes, download=False, collection=collection
    )
    arrivals = run.collect(logged_work(code, record, from_start=True)[None, :])
    return float(code.completion_times(arrivals)[0])


def iteration_times(
    code: GradientCode,
    records: Sequence[Mapping[str, Any]],
    links: LinksConfig,
    features: int,
    distribution: str = "isend",
    collection: str = "push",
) -> dict[str, np.ndarray]:
    """Per logged iteration of a flat scheme's run: ``measured`` (its ``iteration_time``),
    ``predicted`` (``predicted_links_time`` for its logged computation, the model sent the
    run's way: ``distribution``), ``after_download`` (``predicted_after_download``) and
    ``floor`` (``link_floor``: the least time the links allow for the results the decoder
    used), each ``(len(records),)`` in seconds; the results reach the master the run's way
    (``collection``)."""
    return {
        "measured": np.array([float(r["iteration_time"]) for r in records]),
        "predicted": np.array(
            [
                predicted_links_time(
                    code, r, links, features, distribution=distribution, collection=collection
                )
                for r in records
            ]
        ),
        "after_download": np.array(
            [
                predicted_after_download(code, r, links, features, collection=collection)
                for r in records
            ]
        ),
        "floor": np.array([link_floor(code, r, links, features).total for r in records]),
    }


def by_workers(codes: Mapping[str, GradientCode]) -> dict[int, list[str]]:
    """The run names of ``codes`` grouped by the codes' ``n``, in increasing ``n`` and, within
    a group, in the order given."""
    groups: dict[int, list[str]] = {}
    for name, code in codes.items():
        groups.setdefault(code.n, []).append(name)
    return dict(sorted(groups.items()))


def reference_codes(
    codes: Mapping[str, GradientCode], expected: Mapping[str, float]
) -> dict[str, str | None]:
    """Which of one ``n``'s runs the paper's comparisons name, from the codes' parameters (not
    their schemes' names: paper 000's (n, 1, 0, 1) code is the uncoded scheme too):
    ``optimum`` the lowest ``expected`` time; ``uncoded`` a code with no redundancy (one data
    subset per worker, ``s = 0``, ``m = 1``); ``m1`` the lowest ``expected`` among the codes
    with ``m = 1`` that tolerate stragglers (Tandon et al.'s setting). A role no run fills is
    ``None``; runs without an expected time are never the optimum or ``m1``."""
    timed = [name for name in codes if name in expected]
    if not timed:
        raise ValueError("no run has an expected time")
    uncoded = [
        name
        for name, code in codes.items()
        if code.s == 0 and code.m == 1 and bool(np.all(code.loads() == 1))
    ]
    m1 = [name for name in timed if codes[name].m == 1 and codes[name].s > 0]
    return {
        "optimum": min(timed, key=lambda name: expected[name]),
        "uncoded": uncoded[0] if uncoded else None,
        "m1": min(m1, key=lambda name: expected[name]) if m1 else None,
    }


def time_saved(best: float, other: float) -> float:
    """The fraction of ``other``'s time that ``best`` saves, ``1 - best / other``."""
    return 1.0 - best / other


def cut_window(cut: Mapping[str, Any]) -> tuple[int, int] | None:
    """``(first, last)`` iterations the cut overlapped: from the one running when the link
    went down (the log held ``first`` lines) to the one running when it came back; ``None``
    if the link was never cut."""
    if not cut.get("down") or not cut.get("up"):
        return None
    first = int(cut["down"]["log_lines"])
    last = int(cut["up"]["log_lines"])
    return first, max(first, last)


def stall(times: Sequence[float], window: tuple[int, int] | None, skip: int = 1) -> dict[str, Any]:
    """How a run went through a cut: the longest iteration in the window (and which), the
    median iteration outside it (after the first ``skip``), and how many iterations completed
    while the link was down (those before ``window[1]`` from ``window[0]``)."""
    values = np.asarray(times, dtype=np.float64)
    if window is None:
        outside = values[skip:]
        return {"longest": None, "at": None, "typical": float(np.median(outside)), "during": 0}
    first, last = window
    inside = values[first : last + 1]
    mask = np.ones(values.size, dtype=bool)
    mask[:skip] = False
    mask[first : last + 1] = False
    at = first + int(np.argmax(inside)) if inside.size else None
    return {
        "longest": float(inside.max()) if inside.size else None,
        "at": at,
        "typical": float(np.median(values[mask])) if mask.any() else float("nan"),
        "during": last - first,
    }


def relative_error(trajectory: np.ndarray, reference: np.ndarray) -> float:
    """``max_t ||theta_t - ref_t|| / ||ref_t||`` over the iterates both have."""
    steps = min(len(trajectory), len(reference))
    if steps == 0:
        raise ValueError("no iterates to compare")
    a, b = np.asarray(trajectory[:steps]), np.asarray(reference[:steps])
    norms = np.linalg.norm(b, axis=1)
    norms[norms == 0] = 1.0
    return float(np.max(np.linalg.norm(a - b, axis=1) / norms))


def message_transfers(
    code: GradientCode,
    record: Mapping[str, Any],
    links: LinksConfig,
    features: int,
    *,
    header_bytes: float = 8 * H,
    collection: str = "push",
) -> tuple[np.ndarray, np.ndarray]:
    """A flat scheme's result messages of one logged iteration: the measured ``transfer`` of
    each (from its ``Isend`` to the master's receive) and the ``shared-links`` model's for the
    same logged readiness (from the moment the model has it ready, or under ``pull`` the
    master's request reached its worker, until its last byte is through the master's link: its
    own size over its link when alone, up to ``q`` times that when ``q`` arrive together:
    incast). Both ``(messages,)``, in the record's order; messages without a measured transfer
    (ranks on different clocks) are left out."""
    _, run = links_flat_run(code, links, features, header_bytes, collection=collection)
    index = message_index(code)
    work = logged_work(code, record)
    asked = 2 * run.model.latency if collection == "pull" else 0.0  # notice there, request back
    ready = run.downloads()[run.worker] + work + asked
    finish = run.arrivals(work[None, :])[0] - run.model.latency
    measured, model = [], []
    for message in record["messages"]:
        if message.get("transfer") is None:
            continue
        q = index[logged_key(message["key"])]
        # a message waits behind its worker's previous one: its transfer starts after that
        start = ready[q] if run.after[q] < 0 else max(ready[q], finish[run.after[q]])
        measured.append(float(message["transfer"]))
        model.append(float(finish[q] - start))
    return np.array(measured), np.array(model)


def floor_comparison(
    paper: str, item: str, name: str, result: Mapping[str, np.ndarray], kind: str
) -> Comparison:
    """The comparison row of run ``name``'s mean measured iteration time (``result``'s
    ``measured``) against its mean link-limited floor (``floor``)."""
    return Comparison(
        paper,
        item,
        f"{name}: mean time per iteration (s), measured vs its link-limited floor",
        float(result["floor"].mean()),
        float(result["measured"].mean()),
        kind,
        "paper value: gradcode.runlogs.timings.link_floor: one copy of the model through the "
        "slower link, the longest logged work among the results the decoder used, those "
        "results through the bottleneck port (trees: at every parent the children its rule "
        "needs, in the order they are ready); no paper gives it",
    )
