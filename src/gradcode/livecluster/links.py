"""The links of the emulated cluster that is up, as a run sees them (in a SLURM job: its
nodes'): each node's rates and the latency in force now, which ``gradcode cluster latency``
may have changed for a command from the cluster's own (``up``'s, in the state file), recorded
in a run's ``summary.json`` (``links_record``) and compared with a run file's stated
``network.links`` (``stated_links_mismatch``) and ``runtime.dilation``
(``dilation_mismatch``). Only read here: the cluster's machinery writes what it reads."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from gradcode.duration import Duration
from gradcode.livecluster.delayer import delayer_entry, queues_held, read_status, running
from gradcode.livecluster.files import in_namespace_of, read_state
from gradcode.livecluster.spec import ClusterSpec, bucket_bytes, format_limit
from gradcode.rate import Rate
from gradcode.slurmjob import job_nodes


def in_force(spec: ClusterSpec, state: Mapping[str, Any]) -> ClusterSpec:
    """``spec`` with each node's latency and jitter as the running delayer holds them now;
    ``spec`` itself without a running delayer (none: no latency was asked; one that died: the
    spec's latencies, which ``links_record`` marks as not applied); ``state`` is the state
    file's document."""
    entry = delayer_entry(state.get("resources", []))
    if entry is None or not running(entry.get("pid")):
        return spec
    queues = queues_held()
    if queues is None:
        return spec
    nodes = []
    for node in spec.nodes:
        held = queues.get(str(node.index))
        if held is not None:
            node = replace(node, latency=Duration(int(held[0])), jitter=Duration(int(held[1])))
        nodes.append(node)
    return replace(spec, nodes=tuple(nodes))


def _up(anywhere: bool = False) -> tuple[ClusterSpec, dict[str, Any]] | None:
    """The cluster that is up, latencies in force, as the kernel enforces them (a dilated
    cluster: ``ClusterSpec.virtual`` gives what its runs see); in a SLURM job only the job's
    nodes (it holds them alone, and ``gradcode cluster latency`` in it changes only theirs).
    ``None`` too when this process is not on one of its nodes, unless ``anywhere``: a run on
    the host beside a cluster is not on its links (and must not be refused for its dilation)."""
    state = read_state()
    if state is None or not state.get("complete"):
        return None
    spec = ClusterSpec.from_dict(state["spec"])
    if not anywhere and not in_namespace_of(node.name for node in spec.nodes):
        return None
    spec = in_force(spec, state)
    mine = job_nodes()
    if mine is not None:
        held = set(mine)
        nodes = tuple(node for node in spec.nodes if node.name in held)
        if nodes:
            spec = replace(spec, nodes=nodes)
    return spec, state


def links_record() -> dict[str, Any] | None:
    """The links of the emulated cluster that is up, as a run's ``summary.json`` records them
    (``communication.cluster``): each node's rates, latency and jitter in force as the run
    sees them (a dilated cluster's divided back by its factor, ``dilation``, which the kernel
    enforces), and the delayer (``running``, ``died`` and when it was last alive, or ``none``
    without latency); ``None`` when no cluster is up or this process is not on one of its
    nodes."""
    up = _up()
    if up is None:
        return None
    enforced, state = up
    spec = enforced.virtual()
    entry = delayer_entry(state.get("resources", []))
    delayer = "none" if entry is None else "running" if running(entry.get("pid")) else "died"
    last_alive = (read_status() or {}).get("wall") if delayer == "died" else None
    return {
        "nodes": [
            {
                "name": node.name,
                "egress": format_limit(node.egress),
                # what leaves at once after an idle spell (bytes; network.bucket_bytes)
                "egress_bucket": None if node.egress is None else bucket_bytes(node.egress),
                "ingress": format_limit(node.ingress),
                "latency": str(node.latency),
                "jitter": str(node.jitter),
            }
            for node in spec.nodes
        ],
        "dilation": enforced.dilation,
        # how long a packet may wait in a link's queue before it is dropped, as the run sees it
        "queue": str(spec.queue),
        "delayer": delayer,
        # when a delayer that died last said it was alive (wall clock, to within a second)
        "delayer_last_alive": last_alive,
    }


def stated_links_mismatch(
    rate: Rate, master_rate: Rate, latency: float | None = None, *, anywhere: bool = False
) -> str | None:
    """How the links of the emulated cluster that is up differ from links stated as ``rate``
    (workers), ``master_rate`` and ``latency`` (seconds one way; a run file's
    ``network.links``), in one line naming both values (``ClusterSpec.link_mismatch``,
    ``latency_mismatch``, against the latency in force); ``None`` when they agree or no
    cluster is up, or this process is not on one of its nodes (``anywhere``: wherever it is,
    as a launcher on the host asks before it starts a job there)."""
    up = _up(anywhere)
    if up is None:
        return None
    spec = up[0].virtual()
    found = [spec.link_mismatch(rate, master_rate)]
    if latency is not None:
        found.append(spec.latency_mismatch(latency))
    return "; ".join(line for line in found if line is not None) or None


def dilation_mismatch(factor: float) -> str | None:
    """How the time dilation of the emulated cluster that is up differs from a run file's
    ``runtime.dilation`` ``factor``, in one line naming both; ``None`` when they agree or no
    cluster is up. A run whose clock runs at another factor than its links would measure
    them ``K`` times off, so this is an error, not a warning. ``None`` too for a process not on
    one of its nodes."""
    up = _up()
    if up is None or up[0].dilation == factor:
        return None
    k = up[0].dilation
    return (
        f"runtime.dilation is {factor:g}, but the emulated cluster that is up was brought up "
        f"with --dilation {k}: state runtime.dilation: {k} (or bring the cluster up again)"
    )
