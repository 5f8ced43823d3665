"""A validated description of an emulated cluster: its nodes, their addresses and link rates.

Node 0 is the master's node (rank 0 of a run, slurmctld, the login shell of
``gradcode cluster exec``); nodes 1..N-1 are the workers'. Each node has one link to a
switch, limited in both directions: ``egress`` (what the node sends, a tbf on its own end of
the link) and ``ingress`` (what it receives, a tbf on the switch's end). The master's node has
its own rates, since the master's single port is what gradient coding relieves.

Addresses come from a private IPv4 subnet (RFC 1918) and exist only inside the namespaces
the cluster creates, so the subnet never meets the host's own networks.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gradcode.errors import UserError

#: every namespace, link and file the cluster makes starts with this, so nothing else is touched
PREFIX = "gc-"
#: the namespace that holds the switch (a bridge), so the host's own namespace gets nothing
SWITCH = f"{PREFIX}switch"
BRIDGE = f"{PREFIX}br"
#: the node's end of its link, the same name inside every node (hydra's -iface)
NODE_IFACE = f"{PREFIX}veth"
DEFAULT_SUBNET = "10.251.0.0/24"
#: the first node's host number in the subnet (.1 .. .9 stay free)
FIRST_HOST = 10
MAX_NODES = 200

_PRIVATE = [ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")]
_RATE = re.compile(r"^\s*([0-9]+(?:\.[0-9]+)?)\s*([kmg]?)(bit|bps)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9}


class ClusterSpecError(UserError):
    """A cluster option or spec file value is invalid."""


def parse_rate(value: object, what: str) -> int | None:
    """A rate as bits per second: ``100mbit``, ``1gbit``, ``500kbit``, a number of bit/s, or
    ``none``/``0`` for an unlimited link. (``bps`` means bits per second here, as in tc's
    ``mbit``; tc's byte units are not accepted, to leave no doubt.)"""
    if value is None or (isinstance(value, str) and value.strip().lower() in ("none", "0")):
        return None
    if isinstance(value, bool):
        raise ClusterSpecError(f"{what}: expected a rate like 100mbit, got {value!r}")
    if isinstance(value, int | float):
        if value < 0:
            raise ClusterSpecError(f"{what}: a rate must be positive, got {value!r}")
        return int(value) or None
    match = _RATE.match(str(value))
    if not match:
        raise ClusterSpecError(f"{what}: expected a rate like 100mbit or 1gbit, got {value!r}")
    bits = float(match.group(1)) * _UNITS[match.group(2).lower()]
    if bits and bits < 8_000:
        raise ClusterSpecError(f"{what}: {value!r} is below 8kbit, too slow to emulate")
    return int(bits) or None


def format_rate(bits: int | None) -> str:
    """``100000000`` -> ``100mbit``; ``None`` -> ``unlimited``."""
    if bits is None:
        return "unlimited"
    for unit, scale in (("gbit", 10**9), ("mbit", 10**6), ("kbit", 10**3)):
        if bits >= scale and bits % scale == 0:
            return f"{bits // scale}{unit}"
    return f"{bits}bit"


@dataclass(frozen=True)
class NodeSpec:
    """One node: its name (namespace and hostname), address and link rates (bit/s)."""

    index: int
    name: str
    address: str
    egress: int | None
    ingress: int | None

    @property
    def master(self) -> bool:
        return self.index == 0

    @property
    def switch_port(self) -> str:
        """The switch's end of this node's link (in the switch namespace)."""
        return f"{PREFIX}n{self.index}"


@dataclass(frozen=True)
class ClusterSpec:
    """The whole cluster; build it with ``build_spec`` (which validates)."""

    nodes: tuple[NodeSpec, ...]
    subnet: str
    cpus: int

    @property
    def master(self) -> NodeSpec:
        return self.nodes[0]

    @property
    def prefixlen(self) -> int:
        return ipaddress.ip_network(self.subnet).prefixlen

    def node(self, name: str) -> NodeSpec:
        for node in self.nodes:
            if node.name == name:
                return node
        known = ", ".join(n.name for n in self.nodes)
        raise ClusterSpecError(f"no node {name!r} in the cluster (nodes: {known})")

    def as_dict(self) -> dict[str, Any]:
        return {
            "subnet": self.subnet,
            "cpus": self.cpus,
            "nodes": [
                {
                    "name": n.name,
                    "address": n.address,
                    "egress": n.egress,
                    "ingress": n.ingress,
                }
                for n in self.nodes
            ],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ClusterSpec:
        """The inverse of ``as_dict`` (the state file), without re-deriving anything."""
        nodes = tuple(
            NodeSpec(i, n["name"], n["address"], n["egress"], n["ingress"])
            for i, n in enumerate(data["nodes"])
        )
        return cls(nodes=nodes, subnet=data["subnet"], cpus=int(data["cpus"]))


def _positive_int(value: object, what: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ClusterSpecError(f"{what} must be an integer from {low} to {high}, got {value!r}")
    return value


def build_spec(options: Mapping[str, Any]) -> ClusterSpec:
    """Validate a cluster description (the CLI's options or a YAML spec's mapping).

    Keys: ``nodes`` (master's node included, 2..200: paper 001's N = 156 workers and the
    master), ``subnet``, ``cpus`` (per node, what
    SLURM advertises), ``rate`` (both directions of every worker's link), ``egress`` and
    ``ingress`` (override ``rate`` per direction), ``master_rate``, ``master_egress`` and
    ``master_ingress`` (the master's node; default: the workers'), ``node_rates`` (per node
    name, a rate or ``{egress:, ingress:}``: heterogeneous nodes). Unknown keys are refused.
    """
    known = {
        "nodes",
        "subnet",
        "cpus",
        "rate",
        "egress",
        "ingress",
        "master_rate",
        "master_egress",
        "master_ingress",
        "node_rates",
    }
    unknown = sorted(set(options) - known)
    if unknown:
        raise ClusterSpecError(f"unknown cluster option(s) {unknown} (known: {sorted(known)})")
    count = _positive_int(options.get("nodes", 3), "nodes", 2, MAX_NODES)
    cpus = _positive_int(options.get("cpus", 4), "cpus", 1, 1024)
    try:
        subnet = ipaddress.ip_network(str(options.get("subnet") or DEFAULT_SUBNET), strict=True)
    except ValueError as error:
        raise ClusterSpecError(f"subnet: {error}") from None
    if subnet.version != 4 or not any(subnet.subnet_of(p) for p in _PRIVATE):
        raise ClusterSpecError(
            f"subnet {subnet} is not a private IPv4 range (10/8, 172.16/12, 192.168/16)"
        )
    if subnet.num_addresses < FIRST_HOST + count + 1:
        raise ClusterSpecError(f"subnet {subnet} is too small for {count} nodes")
    rate = parse_rate(options.get("rate", "1gbit"), "rate")
    egress = parse_rate(options["egress"], "egress") if "egress" in options else rate
    ingress = parse_rate(options["ingress"], "ingress") if "ingress" in options else rate
    master_rate = (
        parse_rate(options["master_rate"], "master_rate") if "master_rate" in options else None
    )
    master_egress = (
        parse_rate(options["master_egress"], "master_egress")
        if "master_egress" in options
        else (master_rate if "master_rate" in options else egress)
    )
    master_ingress = (
        parse_rate(options["master_ingress"], "master_ingress")
        if "master_ingress" in options
        else (master_rate if "master_rate" in options else ingress)
    )
    overrides = _node_rates(options.get("node_rates") or {}, count)
    nodes = []
    for index in range(count):
        name = f"{PREFIX}node{index}"
        address = str(subnet.network_address + FIRST_HOST + index)
        rates = (master_egress, master_ingress) if index == 0 else (egress, ingress)
        own = overrides.get(name, {})
        rates = (own.get("egress", rates[0]), own.get("ingress", rates[1]))
        nodes.append(NodeSpec(index, name, address, *rates))
    return ClusterSpec(nodes=tuple(nodes), subnet=str(subnet), cpus=cpus)


def _node_rates(given: object, count: int) -> dict[str, dict[str, int | None]]:
    """``node_rates``: per node, a rate for both directions or ``{egress:, ingress:}`` (one or
    both); overrides the workers' (or the master's) rates for that node."""
    if not isinstance(given, Mapping):
        raise ClusterSpecError(f"node_rates must map node names to rates, got {given!r}")
    names = {f"{PREFIX}node{i}" for i in range(count)}
    found: dict[str, dict[str, int | None]] = {}
    for name, value in given.items():
        if name not in names:
            raise ClusterSpecError(
                f"node_rates: no node {name!r} in a {count}-node cluster "
                f"(gc-node0 .. gc-node{count - 1})"
            )
        if isinstance(value, Mapping):
            extra = sorted(set(value) - {"egress", "ingress"})
            if extra or not value:
                raise ClusterSpecError(
                    f"node_rates.{name}: expected egress and/or ingress, got {sorted(value)}"
                )
            found[name] = {k: parse_rate(v, f"node_rates.{name}.{k}") for k, v in value.items()}
        else:
            rate = parse_rate(value, f"node_rates.{name}")
            found[name] = {"egress": rate, "ingress": rate}
    return found


def parse_node_rate(text: str) -> tuple[str, dict[str, str]]:
    """``--node-rate gc-node3=50mbit`` (both directions) or ``gc-node3=50mbit/20mbit``
    (egress/ingress) -> ``("gc-node3", {...})``."""
    name, sep, rates = text.partition("=")
    if not sep or not name or not rates:
        raise ClusterSpecError(
            f"--node-rate: expected NODE=RATE or NODE=EGRESS/INGRESS, got {text!r}"
        )
    egress, slash, ingress = rates.partition("/")
    return name, (
        {"egress": egress, "ingress": ingress} if slash else {"egress": egress, "ingress": egress}
    )
