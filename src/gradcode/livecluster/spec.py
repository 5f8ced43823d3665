"""A cluster's nodes and links as the state file holds them (``ClusterSpec.as_dict`` and
``from_dict``), and what follows from them alone: the links a dilated run sees (``virtual``),
where they differ from stated links (``link_mismatch``, ``latency_mismatch``), a link's tbf
bucket (``bucket_bytes``).

``gradcode.cluster.spec`` builds and validates a spec from options and spec files
(``build_spec``) and the cluster's machinery makes it; this is the description both the cluster
and a run reading the cluster that is up share, so it sits below both.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from gradcode.duration import Duration
from gradcode.errors import UserError
from gradcode.rate import Rate

#: every namespace, link and file the cluster makes starts with this, so nothing else is touched
PREFIX = "gc-"
NO_DELAY = Duration(0)
#: how long a packet may wait in a link's queue for tokens before tbf drops it, as asked: the
#: switch port's buffer as time at the link's rate (100 ms: 1.25 MB at 100 Mbit/s). Incast
#: beyond it drops packets that TCP answers with retransmissions the ``shared-links`` model
#: does not have (docs/measurements/fidelity.md, "CR at N = 156 and the links' queue")
DEFAULT_QUEUE = Duration(100_000_000)
#: bytes of a full Ethernet frame (1500-byte MTU and its 14-byte header), as tbf counts them
FRAME = 1514
#: seconds of the rate the bucket holds (at least 4 frames): what a message after an idle
#: spell gets through ahead of the rate
BUCKET_SECONDS = 0.0005


class ClusterSpecError(UserError):
    """A cluster option or spec file value is invalid."""


def format_limit(rate: Rate | None) -> str:
    """``100mbit`` (``str(rate)``); ``None`` -> ``unlimited``."""
    return "unlimited" if rate is None else str(rate)


def limit_bits(rate: Rate | None) -> int | None:
    """A limit as the state file and ``gradcode cluster rate``'s record write it: whole bits
    per second (``gradcode.cluster.spec.parse_limit``), ``None`` unlimited."""
    return None if rate is None else int(rate.bits_per_second)


def _from_bits(bits: int | None) -> Rate | None:
    return None if bits is None else Rate.from_bits(bits)


def bucket_bytes(rate: Rate) -> int:
    """The bucket of ``tbf(rate)``: 0.5 ms of the rate, at least four full frames. After an
    idle spell it lets that many bytes leave at once, so a message gets a head start of
    ``bucket_bytes / rate`` over ``bytes / rate`` (1.2 ms at 40 Mbit/s), which a measured
    transfer carries (``gradcode.fit.observations``)."""
    return max(4 * FRAME, int(rate.bytes_per_second * BUCKET_SECONDS))


@dataclass(frozen=True)
class NodeSpec:
    """One node: its name (namespace and hostname), address, link rates (``None``:
    unlimited) and the latency (and jitter) of what is sent to it."""

    index: int
    name: str
    address: str
    egress: Rate | None
    ingress: Rate | None
    latency: Duration = NO_DELAY
    jitter: Duration = NO_DELAY

    @property
    def master(self) -> bool:
        return self.index == 0

    @property
    def switch_port(self) -> str:
        """The switch's end of this node's link (in the switch namespace)."""
        return f"{PREFIX}n{self.index}"


@dataclass(frozen=True)
class ClusterSpec:
    """The whole cluster; build it with ``gradcode.cluster.spec.build_spec`` (which validates)."""

    nodes: tuple[NodeSpec, ...]
    subnet: str
    cpus: int
    #: time dilation: the nodes' rates and latencies are the enforced (dilated) ones
    dilation: int = 1
    #: every link's queue bound as asked (``DEFAULT_QUEUE``); the kernel holds it times
    #: ``dilation`` (``enforced_queue_us``), so that the queue holds the undilated link's bytes
    queue: Duration = DEFAULT_QUEUE

    @property
    def enforced_queue_us(self) -> int:
        """The queue bound tbf enforces, in microseconds (tc's unit): the asked one times the
        dilation, which may exceed what a ``Duration`` holds (2.5 s at K = 64)."""
        return self.queue.nanoseconds // 1000 * self.dilation

    @property
    def master(self) -> NodeSpec:
        return self.nodes[0]

    @property
    def delayed(self) -> bool:
        """Whether any node's link has a latency (then the switch runs a delayer)."""
        return any(node.latency for node in self.nodes)

    @property
    def prefixlen(self) -> int:
        return ipaddress.ip_network(self.subnet).prefixlen

    def node(self, name: str) -> NodeSpec:
        for node in self.nodes:
            if node.name == name:
                return node
        known = ", ".join(n.name for n in self.nodes)
        raise ClusterSpecError(f"no node {name!r} in the cluster (nodes: {known})")

    def link_mismatch(self, rate: Rate, master_rate: Rate) -> str | None:
        """Where this cluster's links differ from links stated as ``rate`` (every worker's
        node, both directions) and ``master_rate`` (the master's node): one line naming the
        stated and the actual rate of the first that differs, ``None`` when none does."""
        differing = [
            (node, direction, getattr(node, direction), master_rate if node.master else rate)
            for node in (*self.nodes[1:], self.master)  # the workers' first
            for direction in ("egress", "ingress")
            if getattr(node, direction) != (master_rate if node.master else rate)
        ]
        if not differing:
            return None
        node, direction, actual, stated = differing[0]
        whose = "master_rate" if node.master else "rate"
        more = f"; {len(differing) - 1} more link directions differ" if differing[1:] else ""
        return (
            f"network.links.{whose} states {stated}, but the emulated cluster that is up has "
            f"{node.name}'s {direction} at {format_limit(actual)}{more}"
        )

    def latency_mismatch(self, latency: float) -> str | None:
        """Where this cluster's latencies differ from ``latency`` seconds one way stated for
        every node (a run file's ``network.links.latency``): one line naming both, ``None``
        when every node has it (to the nanosecond)."""
        stated = round(latency * 1e9)
        differing = [
            node for node in (*self.nodes[1:], self.master) if node.latency.nanoseconds != stated
        ]
        if not differing:
            return None
        more = f"; {len(differing) - 1} more nodes differ" if differing[1:] else ""
        return (
            f"network.links.latency states {Duration(stated)}, but the emulated cluster that is up "
            f"has {differing[0].name}'s latency at {differing[0].latency}{more}"
        )

    def virtual(self) -> ClusterSpec:
        """The links as a run dilated by this spec's factor sees them: every rate ``dilation``
        times the enforced one, every latency and jitter divided by it (``dilation`` 1)."""
        k = self.dilation
        if k == 1:
            return self

        def rate(limit: Rate | None) -> Rate | None:
            return None if limit is None else Rate.from_bits(limit.bits_per_second * k)

        nodes = tuple(
            replace(
                node,
                egress=rate(node.egress),
                ingress=rate(node.ingress),
                latency=Duration(node.latency.nanoseconds // k),
                jitter=Duration(node.jitter.nanoseconds // k),
            )
            for node in self.nodes
        )
        return replace(self, nodes=nodes, dilation=1)

    def as_dict(self) -> dict[str, Any]:
        # state files of undilated clusters with the default queue stay as they were
        extra: dict[str, Any] = {"dilation": self.dilation} if self.dilation != 1 else {}
        if self.queue != DEFAULT_QUEUE:
            extra["queue_ns"] = self.queue.nanoseconds
        return extra | {
            "subnet": self.subnet,
            "cpus": self.cpus,
            "nodes": [
                {
                    "name": n.name,
                    "address": n.address,
                    "egress": limit_bits(n.egress),
                    "ingress": limit_bits(n.ingress),
                    "latency_ns": n.latency.nanoseconds,
                    "jitter_ns": n.jitter.nanoseconds,
                }
                for n in self.nodes
            ],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ClusterSpec:
        """The inverse of ``as_dict`` (the state file: rates as bits per second), without
        re-deriving anything."""
        nodes = tuple(
            NodeSpec(
                i,
                n["name"],
                n["address"],
                _from_bits(n["egress"]),
                _from_bits(n["ingress"]),
                Duration(n.get("latency_ns", 0)),
                Duration(n.get("jitter_ns", 0)),
            )
            for i, n in enumerate(data["nodes"])
        )
        return cls(
            nodes=nodes,
            subnet=data["subnet"],
            cpus=int(data["cpus"]),
            dilation=int(data.get("dilation", 1)),
            queue=Duration(data.get("queue_ns", DEFAULT_QUEUE.nanoseconds)),
        )
