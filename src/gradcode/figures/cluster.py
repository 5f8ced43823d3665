"""What the emulated network's figures share (``gradcode cluster``, config/cluster.yaml): the
link probe's medians beside the ``shared-links`` model, a run's iterations beside the model's
prediction, a link cut's place among a run's iterations, and a run's exactness against the
serial uncoded trajectory.

Frame overhead. ``tc tbf`` counts whole frames on the veth (Ethernet header included), while a
message's time is its payload over the link: with a 1500-byte MTU and TCP timestamps a full
frame of 1514 bytes carries 1448 bytes of payload (``PAYLOAD_FRACTION``, 95.6 %; measured:
96.2 %). ``probe_rows`` puts every median beside the model with the stated rate (``predicted``)
and with the rate times ``PAYLOAD_FRACTION`` (``predicted_frames``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from gradcode.codes.base import GradientCode
from gradcode.timing.links import fair_finish, message_time
from gradcode.train.config import LinksConfig
from gradcode.train.protocol import H
from gradcode.train.timings import links_flat_run, logged_key, message_index

#: TCP payload per frame as tbf counts it: MSS 1448 (1500 - 20 IP - 20 TCP - 12 timestamps)
#: over 1514 bytes (1500 + the 14-byte Ethernet header)
PAYLOAD_FRACTION = 1448 / 1514


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
) -> float:
    """The ``shared-links`` model's iteration time for a flat scheme's logged iteration with
    the model's download replaced by the measured one: each logged message is ready at its
    worker's logged ``started`` (when it had the model) plus its ``compute`` and
    ``injected_compute``, and the results share the master's link as the model says.
    Messages the master never took off the wire are left out (as never sent), so where the
    scheme decodes from few of them the upload is optimistic; it separates how the model
    shares the download from how it shares the upload."""
    model, run = links_flat_run(code, links, features, header_bytes, download=False)
    index = message_index(code)
    ready = np.full(len(index), np.inf)
    for message in record["messages"]:
        ready[index[logged_key(message["key"])]] = (
            message["started"] + message["compute"] + message["injected_compute"]
        )
    finish = fair_finish(
        ready,
        np.full(len(index), run.size),
        run.rates[run.worker],
        model.master_rate,
        run.after,
    )
    return float(code.completion_times((model.latency + finish)[None, :])[0])


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
