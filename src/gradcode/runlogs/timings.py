"""Reading timings back from a run's log: what the injected delays and measured compute imply.

For a flat scheme, each result record in ``log.jsonl`` carries its sender's measured
computation and injected delays. A message with key ``q`` would, with free coordination, reach
the master at::

    ready_q   = compute_q + injected_compute_q          (cumulative up to that message)
    arrival_q = max(arrival of the worker's previous message, ready_q) + injected_comm_q

and the iteration would end at ``code.completion_times`` of those arrivals (messages that never
arrived count as ``inf``: they were not needed). ``implied_iteration_time`` returns that;
``coordination_overhead`` compares it with the measured iteration time (the coordination the
runtime adds: sending the model, polling, transfers, decoding, the update).

``predicted_iteration_time`` is the same rule applied to the injected delays alone, as a
simulator would (it is what the speedup benchmark compares measured times with).

``predicted_links_time`` puts a run on real links (``network.links``) beside the
``shared-links`` timing model: the logged compute of each message (flat schemes) or node (trees,
rings: ``node_work``), the links' rates and latency, the sizes the runtime sends.

``link_floor`` is the least time a logged iteration could have taken on its links (issue 20):
one copy of the model through the slowest link on its way, the slowest used worker's measured
work, the used results through the master's port; what a runtime with an ideal broadcast and
no overhead of its own would reach. For a tree (``tree_link_floor``) the same at every parent,
with the code's own rule deciding which children it waits for.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from gradcode.codes.base import GradientCode
from gradcode.codes.ring import RingCode
from gradcode.codes.tree import MASTER, TreeCode
from gradcode.message_header import H
from gradcode.runfile.bandwidth import SinglePort
from gradcode.runfile.config import BandwidthConfig, LinksConfig
from gradcode.runfile.stragglers import Delays
from gradcode.timing.collection import Pulls
from gradcode.timing.links import (
    FLOAT,
    FRAME_BYTES,
    MSS,
    PAYLOAD_FRACTION,
    FlatRun,
    LinksModel,
    RingRun,
    TreeRun,
)
from gradcode.topology import TopologyVisitor, topology_of


def logged_key(value: Any) -> Any:
    """A message key as the code names it, from its form in ``log.jsonl`` (a JSON list for a
    tuple key)."""
    return tuple(value) if isinstance(value, list) else value


def implied_iteration_time(code: GradientCode, record: Mapping[str, Any]) -> float:
    """The completion time the logged compute and injected delays imply (seconds)."""
    keys = code.all_message_keys()
    index = {key: q for q, key in enumerate(keys)}
    arrivals = np.full((1, len(keys)), np.inf)
    messages = sorted(record["messages"], key=lambda m: m["compute"] + m["injected_compute"])
    link_free: dict[int, float] = {}
    for message in messages:
        key = logged_key(message["key"])
        ready = message["compute"] + message["injected_compute"]
        worker = int(message["worker"])
        arrival = max(link_free.get(worker, 0.0), ready) + message["injected_comm"]
        link_free[worker] = arrival
        arrivals[0, index[key]] = arrival
    return float(code.completion_times(arrivals)[0])


def coordination_overhead(
    code: GradientCode, records: Iterable[Mapping[str, Any]], skip: int = 0
) -> dict[str, float]:
    """Over the records after the first ``skip``: ``(sum measured - sum implied) / sum
    measured`` (``overhead``) and the mean of the per-iteration ratios (``mean_ratio``)."""
    measured, implied = [], []
    for record in list(records)[skip:]:
        measured.append(record["iteration_time"])
        implied.append(implied_iteration_time(code, record))
    m, i = np.array(measured), np.array(implied)
    return {
        "iterations": float(m.size),
        "measured_mean": float(m.mean()),
        "implied_mean": float(i.mean()),
        "overhead": float((m.sum() - i.sum()) / m.sum()),
        "mean_ratio": float(np.mean((m - i) / m)),
    }


def predicted_iteration_time(
    code: GradientCode,
    delays: Delays,
    features: int,
    bandwidth: BandwidthConfig | None = None,
) -> float:
    """The iteration time the runtime's emulation implies for ``delays`` alone (no computation,
    no coordination): the model a simulator runs, on the very draws a job injected.

    Message ``q`` of worker ``w`` is ready after ``start_w + prefix_q compute_w``, leaves its
    link ``comm_w L / l`` after the previous one, and with ``bandwidth`` is received through
    the master's single port in arrival order (its payload bytes over the port's rate each,
    as the runtime charges them). Flat schemes only.
    """
    keys = code.all_message_keys()
    length = code.message_length(features)
    link_free: dict[int, float] = {}
    arrivals = np.empty(len(keys))
    for q, key in enumerate(keys):
        worker = code.worker_of(key)
        start, compute, comm = delays.of(worker)
        ready = start + code.message_prefix(key) * compute
        arrivals[q] = max(link_free.get(worker, 0.0), ready) + comm * length / features
        link_free[worker] = arrivals[q]
    if bandwidth is not None:
        port = SinglePort(bandwidth, features)
        order = np.argsort(arrivals, kind="stable")
        nbytes = length * 8
        accepted = np.empty_like(arrivals)
        for q in order:
            accepted[q] = port.accept_time(arrivals[q], nbytes)
        arrivals = accepted
    return float(code.completion_times(arrivals[None, :])[0])


def predicted_links_time(
    code: GradientCode,
    record: Mapping[str, Any],
    links: LinksConfig,
    features: int,
    *,
    header_bytes: float = 8 * H,
    distribution: str = "isend",
    collection: str = "push",
) -> float:
    """The iteration time the ``shared-links`` timing model predicts for a logged iteration on
    links of ``links``' parameters (``gradcode.timing.links``), whatever the topology:

    - flat schemes: the model goes to every worker through the master's link (the way the run
      sent it: ``distribution``), each message is ready its logged ``compute +
      injected_compute`` after its worker got the model, and the messages share the master's
      link, pushed or pulled as the run's were (``collection``); messages not in the record
      were never sent (under ``pull`` the record holds the pulled ones);
    - trees: the model goes down the tree (scattered: to every node at once), every node's
      own work is ``node_work``'s, and the messages share each parent's link;
    - rings: ``2 (N - 1)`` chunk steps after the slowest worker's ``node_work``.

    Result messages carry the runtime's header (``header_bytes``); the links carry what
    ``links_model`` says they do (TCP's payload, a frame's store-and-forward per message)."""
    model = links_model(
        links,
        features,
        header_bytes,
        distribution=distribution,
        collection=collection,
        frame_bytes=_last_frame(code, features, header_bytes, distribution),
    )
    model.check(code)
    return topology_of(code).accept(_Predicted(model, record), code)


class _Predicted(TopologyVisitor[float]):
    """``predicted_links_time`` of each topology: a flat code's messages from their logged
    work, a tree's or a ring's nodes from theirs (``node_work``)."""

    def __init__(self, model: LinksModel, record: Mapping[str, Any]) -> None:
        self.model, self.record = model, record

    def _rates(self, code: GradientCode) -> np.ndarray:
        return self.model.rate.for_workers(code.n)

    def flat(self, code: GradientCode) -> float:
        run = FlatRun(self.model, code, self._rates(code))
        arrivals = run.arrivals(logged_work(code, self.record)[None, :])
        return float(code.completion_times(arrivals)[0])

    def tree(self, code: TreeCode) -> float:
        run = TreeRun(self.model, code, self._rates(code))
        return float(run.finish(node_work(code, self.record)[None, :]).times[0])

    def ring(self, code: RingCode) -> float:
        run = RingRun(self.model, code, self._rates(code))
        return float(run.finish(node_work(code, self.record)[None, :]).times[0])


@dataclass(frozen=True)
class LinkFloor:
    """A logged iteration's link-limited floor, seconds: ``download`` + ``work`` + ``upload``.

    ``port``: whose port bounds the upload (``"master"`` or ``"worker"``)."""

    download: float
    work: float
    upload: float
    port: str

    @property
    def total(self) -> float:
        return self.download + self.work + self.upload


def link_floor(
    code: GradientCode,
    record: Mapping[str, Any],
    links: LinksConfig,
    features: int,
    *,
    payload: float = PAYLOAD_FRACTION,
) -> LinkFloor:
    """The least time logged iteration ``record`` of a flat code could take on ``links``.

    - ``download``: the model (``features + 1`` float64s, as the runtime sends it) reaching
      the workers: at best, pipelined, one copy's time through the slower of the master's
      link and a worker's, plus the latency;
    - ``work``: the longest logged ``compute + injected_compute`` among the messages the
      decoder used (``record["used"]``): the iteration cannot end before its last one;
    - ``upload``: the used messages (their logged ``bytes``: payload and header) through the
      master's port, or the largest worker's share of them through its own link, whichever
      takes longer, plus the latency.

    Rates are the links' times ``payload`` (the share of a rate-limited link's frames that
    is TCP payload, ``gradcode.timing.links.PAYLOAD_FRACTION``). Trees: ``tree_link_floor``.
    ``ValueError`` for a ring code (its results do not cross the master's port) or a record
    without the decoder's messages."""
    return topology_of(code).accept(_Floors(record, links, features, payload), code)


class _Floors(TopologyVisitor[LinkFloor]):
    """``link_floor`` of each topology that collects results."""

    def __init__(
        self, record: Mapping[str, Any], links: LinksConfig, features: int, payload: float
    ) -> None:
        self.record, self.links, self.features, self.payload = record, links, features, payload

    def flat(self, code: GradientCode) -> LinkFloor:
        return flat_link_floor(code, self.record, self.links, self.features, payload=self.payload)

    def tree(self, code: TreeCode) -> LinkFloor:
        return tree_link_floor(code, self.record, self.links, self.features, payload=self.payload)

    def refusal(self, code: Any, topology: str) -> str:
        return f"link_floor: flat and tree codes only ({code.name} is a {topology} code)"


def flat_link_floor(
    code: GradientCode,
    record: Mapping[str, Any],
    links: LinksConfig,
    features: int,
    *,
    payload: float = PAYLOAD_FRACTION,
) -> LinkFloor:
    """``link_floor`` of a flat code (see there)."""
    rate, master = links.rate * payload, links.master_rate * payload
    download = links.latency + 8 * (features + 1) / min(rate, master)
    used = {logged_key(key) for key in record["used"]}
    messages = [m for m in record["messages"] if logged_key(m["key"]) in used]
    if not messages:
        raise ValueError(f"link_floor: iteration {record.get('iteration')} used no message")
    work = max(m["compute"] + m["injected_compute"] for m in messages)
    per_worker: dict[int, float] = {}
    for message in messages:
        per_worker[message["worker"]] = per_worker.get(message["worker"], 0.0) + message["bytes"]
    through_master = sum(per_worker.values()) / master
    through_worker = max(per_worker.values()) / rate
    port = "master" if through_master >= through_worker else "worker"
    upload = links.latency + max(through_master, through_worker)
    return LinkFloor(download, work, upload, port)


def tree_link_floor(
    code: TreeCode,
    record: Mapping[str, Any],
    links: LinksConfig,
    features: int,
    *,
    payload: float = PAYLOAD_FRACTION,
) -> LinkFloor:
    """``link_floor`` of a tree code: the least time logged iteration ``record`` could take
    with the tree's own rule at every parent.

    - The model reaches a node at depth ``d`` at best ``d`` latencies plus one copy's time
      through the slower link after the master sent it (pipelined down the tree, as the flat
      floor's download).
    - Every node's own work is ``node_work``'s (logged for the master's children, the
      injected delays and the median measured compute per partition for the deeper nodes);
      a node's message is ready when its work is done and its children reduce
      (``children_completion_times``, the earliest decodable set of them).
    - A parent's port carries one message at a time at its rate, in the order the messages
      are ready (no message waits for one ready later), each also through its sender's link,
      and arrives a latency later; only those of the children its rule needs cross it, the
      ones a parent pulling in the order they are ready asks for (``Pulls.of``: the first
      of every group of CodedReduce's per-parent code), as the flat floor counts only the
      used messages.

    ``download`` is the deepest node's model time, ``upload`` the results' way up along the
    path that decided (every level's wait for its port, link and latency after the deciding
    child was ready), ``work`` the rest: the work and the waits for children along that path.
    ``port`` is ``"tree"``."""
    rate, master = links.rate * payload, links.master_rate * payload
    size = 8 * (code.message_length(features) + H)
    copy = 8 * (features + 1) / min(rate, master)
    depth = np.array([code.depth(node) for node in range(code.n)])
    got = depth * links.latency + copy
    ready = got + node_work(code, record)
    way_up = np.zeros(code.n)  # communication on the deciding path below each node
    for parent in reversed(code.parents()):
        kids = list(code.children(parent))
        port = master if parent == MASTER else rate
        needed = Pulls.of(code, parent).select(ready[kids][None, :])[0]
        arrivals = np.full(len(kids), np.inf)
        free = 0.0
        for index in np.argsort(ready[kids], kind="stable"):
            if not needed[index]:
                continue
            start = max(ready[kids[index]], free)
            free = start + size / port
            arrivals[index] = max(free, ready[kids[index]] + size / rate) + links.latency
        reduced = float(code.children_completion_times(parent, arrivals[None, :])[0])
        decided = int(np.argmin(np.abs(arrivals - reduced)))
        decider = kids[decided]
        below = way_up[decider] + arrivals[decided] - ready[decider]
        if parent == MASTER:
            download = float(got.max())
            upload = float(below)
            return LinkFloor(download, reduced - download - upload, upload, "tree")
        if reduced > ready[parent]:
            ready[parent], way_up[parent] = reduced, below
    raise AssertionError(f"{code.name}: no parent is MASTER")


def logged_work(
    code: GradientCode, record: Mapping[str, Any], *, from_start: bool = False
) -> np.ndarray:
    """Per message key (``all_message_keys`` order), the logged ``compute + injected_compute``
    behind it, ``(keys,)``; ``inf`` for a message not in the record (never sent). With
    ``from_start``, plus its worker's logged ``started`` (when it had the model)."""
    index = message_index(code)
    work = np.full(len(index), np.inf)
    for message in record["messages"]:
        done = message["compute"] + message["injected_compute"]
        work[index[logged_key(message["key"])]] = done + (message["started"] if from_start else 0)
    return work


def node_work(code: GradientCode, record: Mapping[str, Any]) -> np.ndarray:
    """Seconds of every node's own work in a logged iteration, ``(n,)``: its measured
    ``compute`` plus its ``injected_compute`` where its message is in the record (every worker
    of a ring, the master's children in a tree). A tree's deeper nodes report to their parents,
    not to the log: theirs is the iteration's injected delay (``injected``: start plus the
    per-partition delay times the node's load, as the worker sleeps it) plus the logged
    nodes' median measured compute per partition times the node's load."""
    loads = code.loads().astype(np.float64)
    injected = record["injected"]
    work = np.asarray(injected["start"], dtype=np.float64) + loads * np.asarray(
        injected["compute"], dtype=np.float64
    )
    logged = {int(m["worker"]): m for m in record["messages"]}
    per_partition = [m["compute"] / loads[w] for w, m in logged.items() if loads[w] > 0]
    measured = loads * (float(np.median(per_partition)) if per_partition else 0.0)
    for worker, message in logged.items():
        work[worker] = message["injected_compute"]
        measured[worker] = message["compute"]
    return work + measured


def message_index(code: GradientCode) -> dict[Any, int]:
    """Position of every message key in ``code.all_message_keys()`` (look a logged key up
    through ``logged_key``)."""
    return {key: q for q, key in enumerate(code.all_message_keys())}


def links_model(
    links: LinksConfig,
    features: int,
    header_bytes: float = 8 * H,
    *,
    download: bool = True,
    distribution: str = "isend",
    collection: str = "push",
    frame_bytes: float = FRAME_BYTES,
) -> LinksModel:
    """The ``shared-links`` model of ``links``' parameters for ``features``-long gradients
    (``distribution``, ``collection``: the ways the run's model went and its results came,
    ``summary.json``'s), for links that carry messages as Ethernet links do:

    - a link limited to ``rate`` carries ``rate * PAYLOAD_FRACTION`` of messages (the limit
      counts frames, and TCP's payload is 1448 of a full frame's 1514 bytes);
    - every message arrives one frame later than its bytes over the rate: a path crosses two
      links (the sender's, then the receiver's through the switch), and a switch, like the
      emulated cluster's two tbf per path, forwards a frame only once it holds it whole. That
      is ``frame_bytes`` (a full frame, or the message's own frames when it is smaller:
      ``_last_frame``) over the slower link, added to ``latency``.

    The papers' model (``gradcode.timing.links``, simulations) has neither: at a ring's chunk
    of one frame the second is as long as the chunk's own time (``docs/measurements/
    fidelity.md``, "The model of a run on links")."""
    slower = min(links.rate, links.master_rate)
    return LinksModel(
        rate=links.rate * PAYLOAD_FRACTION,
        master_rate=links.master_rate * PAYLOAD_FRACTION,
        latency=links.latency + frame_bytes / slower,
        features=features,
        header_bytes=header_bytes,
        download=download,
        distribution=distribution,
        collection=collection,
    )


def _last_frame(
    code: GradientCode, features: int, header_bytes: float, distribution: str = "isend"
) -> float:
    """The bytes a switch holds of a message before it forwards them: a full frame, or the
    smallest message ``code`` sends an iteration with its TCP/IP and Ethernet headers where
    that is smaller (a ring's chunk, a scattered model's; at N = 156 and 25,000 features a
    chunk is 1,282 bytes of payload, 1,348 on the wire)."""
    ring = topology_of(code).ring(code)
    if ring is not None:
        smallest = FLOAT * features / ring.n
    else:
        model = FLOAT * (features + 1) / (code.n if distribution == "scatter" else 1)
        smallest = min(model, FLOAT * code.message_length(features) + header_bytes)
    return min(FRAME_BYTES, smallest + math.ceil(smallest / MSS) * (FRAME_BYTES - MSS))


def links_flat_run(
    code: GradientCode,
    links: LinksConfig,
    features: int,
    header_bytes: float = 8 * H,
    *,
    download: bool = True,
    collection: str = "push",
) -> tuple[LinksModel, FlatRun]:
    """The ``shared-links`` model of ``links``' parameters and ``code`` prepared by it (flat
    schemes only; the links as ``links_model`` says they carry messages)."""
    frame = _last_frame(code, features, header_bytes)
    model = links_model(
        links, features, header_bytes, download=download, collection=collection, frame_bytes=frame
    )
    run = model.prepare(code)
    assert isinstance(run, FlatRun)
    return model, run
