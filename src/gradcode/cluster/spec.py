"""A validated description of an emulated cluster: its nodes, their addresses and link rates.

Node 0 is the master's node (rank 0 of a run, slurmctld, the login shell of
``gradcode cluster exec``); nodes 1..N-1 are the workers'. Each node has one link to a
switch, limited in both directions: ``egress`` (what the node sends, a tbf on its own end of
the link) and ``ingress`` (what it receives, a tbf on the switch's end). The master's node has
its own rates, since the master's single port is what gradient coding relieves.

A node may also have a ``latency`` (and ``jitter``): what a packet pays to reach it, added in
the switch as the packet leaves the bridge for the node's port (``latency.delay``). With one latency
everywhere, every one-way trip between two nodes takes it once and a round trip twice.

A cluster may be *dilated* by a whole factor ``K`` (``gradcode.dilation``): a spec's rates and
latencies are then those the kernel enforces, every rate ``K`` times below and every latency
and jitter ``K`` times above what was asked (``build_spec``'s ``dilation``), so that a run whose
clock runs ``K`` times slow (``runtime.dilation``) sees the links asked for; ``virtual`` gives
them back.

Addresses come from a private IPv4 subnet (RFC 1918) and exist only inside the namespaces
the cluster creates, so the subnet never meets the host's own networks.

This module builds and validates a spec; the spec itself (``ClusterSpec``, ``NodeSpec``), as
the state file holds it, is ``gradcode.livecluster.spec``'s, where a run reads the cluster
that is up without importing the cluster.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from gradcode.duration import Duration, DurationError
from gradcode.livecluster.spec import (
    DEFAULT_QUEUE,
    NO_DELAY,
    PREFIX,
    ClusterSpec,
    ClusterSpecError,
    NodeSpec,
)

# how a limit is written, here as well as where the spec's data lives: whoever builds a spec
# writes its limits too
from gradcode.livecluster.spec import format_limit as format_limit
from gradcode.livecluster.spec import limit_bits as limit_bits
from gradcode.rate import Rate, RateError

#: the namespace that holds the switch (a bridge), so the host's own namespace gets nothing
SWITCH = f"{PREFIX}switch"
BRIDGE = f"{PREFIX}br"
#: the node's end of its link, the same name inside every node (hydra's -iface)
NODE_IFACE = f"{PREFIX}veth"
DEFAULT_SUBNET = "10.251.0.0/24"
#: the first node's host number in the subnet (.1 .. .9 stay free)
FIRST_HOST = 10
MAX_NODES = 200
#: the largest time-dilation factor a cluster takes (``build_spec``): the largest tried, N =
#: 156's explicit ring at 100 Mbit/s (781 kbit/s a link, TCP's floor 25.6 s; 117 s of wall for
#: 4 iterations, docs/measurements/fidelity.md); 64 before, which left open whether that run's
#: excess was the machine's
MAX_DILATION = 128

_PRIVATE = [ipaddress.ip_network(n) for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")]
#: the slowest link tc's timers emulate well
SLOWEST = Rate.from_bits(8_000)
#: how a spec or an option says a direction has no limit (no qdisc)
UNLIMITED = ("none", "unlimited")
#: the longest latency a link takes: past it a link is cut, not slow (``cluster cut``)
LONGEST_LATENCY = Duration(1_000_000_000)
#: the shortest and longest queue bound a link takes (``queue``): below a millisecond tbf's
#: queue holds less than its own bucket at the slowest rates; ten seconds is a deep buffer
#: at any rate tc emulates
SHORTEST_QUEUE = Duration(1_000_000)
LONGEST_QUEUE = Duration(10_000_000_000)


def parse_limit(value: object, what: str) -> Rate | None:
    """One direction's limit: a rate in ``gradcode.rate``'s grammar (``100mbit``, ``12.5MB/s``;
    whole bits per second, as tc takes them, at least 8kbit) or ``none`` (``unlimited``, YAML's
    null) for an unlimited link; ``ClusterSpecError`` naming ``what`` otherwise."""
    if value is None or (isinstance(value, str) and value.strip().lower() in UNLIMITED):
        return None
    if (value == 0 and not isinstance(value, bool)) or value == "0":
        raise ClusterSpecError(f"{what}: write none for an unlimited link (got {value!r})")
    try:
        rate = Rate.parse(value, what)
    except RateError as error:
        raise ClusterSpecError(str(error)) from None
    if not rate.bits_per_second.is_integer():
        raise ClusterSpecError(
            f"{what}: {value!r} is {rate.bits_per_second!r} bit/s; tc takes whole bits per second"
        )
    if rate < SLOWEST:
        raise ClusterSpecError(f"{what}: {value!r} is below {SLOWEST}, too slow to emulate")
    return rate


def parse_delay(value: object, what: str) -> Duration:
    """A latency or jitter: a duration in ``gradcode.duration``'s grammar (``1ms``, ``250us``;
    ``0`` for none) of at most ``LONGEST_LATENCY``; ``ClusterSpecError`` naming ``what``
    otherwise."""
    try:
        delay = Duration.parse(value, what)
    except DurationError as error:
        raise ClusterSpecError(str(error)) from None
    if delay > LONGEST_LATENCY:
        raise ClusterSpecError(f"{what}: {value!r} is longer than {LONGEST_LATENCY}")
    return delay


def check_jitter(latency: Duration, jitter: Duration, what: str) -> None:
    """A jitter spreads a delay both ways (latency - jitter .. latency + jitter), so it may not
    exceed the latency; ``ClusterSpecError`` naming ``what`` otherwise."""
    if jitter > latency:
        raise ClusterSpecError(
            f"{what}: jitter {jitter} exceeds the latency {latency} (a delay is never negative)"
        )


def _positive_int(value: object, what: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ClusterSpecError(f"{what} must be an integer from {low} to {high}, got {value!r}")
    return value


def build_spec(options: Mapping[str, Any], names: Mapping[str, str] | None = None) -> ClusterSpec:
    """Validate a cluster description (the CLI's options or a YAML spec's mapping); a bad
    rate's message names its key as ``names`` does (``--rate``, ``spec.yaml: rate``; default:
    the key).

    Keys: ``nodes`` (master's node included, 2..200: paper 001's N = 156 workers and the
    master), ``subnet``, ``cpus`` (per node, what
    SLURM advertises), ``rate`` (both directions of every worker's link), ``egress`` and
    ``ingress`` (override ``rate`` per direction), ``master_rate``, ``master_egress`` and
    ``master_ingress`` (the master's node; default: the workers'), ``node_rates`` (per node
    name, a rate or ``{egress:, ingress:}``: heterogeneous nodes), ``latency`` and ``jitter``
    (what a packet to a worker's node pays, default none), ``master_latency`` and
    ``master_jitter`` (to the master's node; default: the workers'), ``node_latency`` (per node
    name, a latency or ``{latency:, jitter:}``), ``dilation`` (a whole time-dilation factor
    ``K`` from 1 to ``MAX_DILATION``: the spec holds the rates divided and the latencies
    multiplied by it, each still whole bits per second and nanoseconds), ``queue`` (how long
    a packet may wait in any link's queue before it is dropped, ``SHORTEST_QUEUE`` to
    ``LONGEST_QUEUE``, default ``DEFAULT_QUEUE``; the kernel holds it times the dilation).
    Unknown keys are refused.
    """
    unknown = sorted(set(options) - OPTION_KEYS)
    if unknown:
        known = sorted(OPTION_KEYS)
        raise ClusterSpecError(f"unknown cluster option(s) {unknown} (known: {known})")
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
    named = dict(names or {})

    def limit(key: str) -> Rate | None:
        return parse_limit(options[key], named.get(key, key))

    rate = parse_limit(options.get("rate", "1gbit"), named.get("rate", "rate"))
    egress = limit("egress") if "egress" in options else rate
    ingress = limit("ingress") if "ingress" in options else rate
    master_rate = limit("master_rate") if "master_rate" in options else None
    master_egress = (
        limit("master_egress")
        if "master_egress" in options
        else (master_rate if "master_rate" in options else egress)
    )
    master_ingress = (
        limit("master_ingress")
        if "master_ingress" in options
        else (master_rate if "master_rate" in options else ingress)
    )
    overrides = _node_rates(
        options.get("node_rates") or {}, count, named.get("node_rates", "node_rates")
    )
    delays = _delays(options, count, named)
    nodes = []
    for index in range(count):
        name = f"{PREFIX}node{index}"
        address = str(subnet.network_address + FIRST_HOST + index)
        rates = (master_egress, master_ingress) if index == 0 else (egress, ingress)
        own = overrides.get(name, {})
        rates = (own.get("egress", rates[0]), own.get("ingress", rates[1]))
        nodes.append(NodeSpec(index, name, address, *rates, *delays[index]))
    queue = parse_queue(options.get("queue", DEFAULT_QUEUE), named.get("queue", "queue"))
    spec = ClusterSpec(nodes=tuple(nodes), subnet=str(subnet), cpus=cpus, queue=queue)
    return _dilate(spec, options.get("dilation", 1), named.get("dilation", "dilation"))


def parse_queue(value: object, what: str) -> Duration:
    """A link's queue bound: a duration (``100ms``) from ``SHORTEST_QUEUE`` to
    ``LONGEST_QUEUE``; ``ClusterSpecError`` naming ``what`` otherwise."""
    try:
        queue = value if isinstance(value, Duration) else Duration.parse(value, what)
    except DurationError as error:
        raise ClusterSpecError(str(error)) from None
    if not SHORTEST_QUEUE <= queue <= LONGEST_QUEUE:
        raise ClusterSpecError(
            f"{what}: {value!r} is outside {SHORTEST_QUEUE} .. {LONGEST_QUEUE}, the queue "
            "bounds a link takes"
        )
    return queue


def _dilate(spec: ClusterSpec, factor: object, what: str) -> ClusterSpec:
    """``spec`` (the links asked for) as the kernel must enforce them under the dilation
    ``factor`` (``dilated_rate``, ``dilated_delay``), checked, named ``what``."""
    k = _positive_int(factor, what, 1, MAX_DILATION)
    if k == 1:
        return spec
    nodes = tuple(
        replace(
            node,
            egress=dilated_rate(node.egress, k, f"{what}: {node.name}'s egress"),
            ingress=dilated_rate(node.ingress, k, f"{what}: {node.name}'s ingress"),
            latency=dilated_delay(node.latency, k, f"{what}: {node.name}'s latency"),
            jitter=dilated_delay(node.jitter, k, f"{what}: {node.name}'s jitter"),
        )
        for node in spec.nodes
    )
    return replace(spec, nodes=nodes, dilation=k)


def dilated_rate(limit: Rate | None, k: int, what: str) -> Rate | None:
    """The rate the kernel enforces for ``limit`` under dilation ``k`` (``limit / k``);
    ``ClusterSpecError`` naming ``what`` where that is no whole number of bits per second
    (tc's unit) or falls below ``SLOWEST``."""
    if limit is None or k == 1:
        return limit
    bits = limit.bits_per_second / k
    if not bits.is_integer():
        raise ClusterSpecError(
            f"{what}: {limit} divided by the dilation {k} is {bits!r} bit/s; tc takes whole "
            f"bits per second (choose a factor that divides {int(limit.bits_per_second)})"
        )
    if Rate.from_bits(bits) < SLOWEST:
        raise ClusterSpecError(
            f"{what}: {limit} divided by the dilation {k} is below {SLOWEST}, too slow to emulate"
        )
    return Rate.from_bits(bits)


def dilated_delay(value: Duration, k: int, what: str) -> Duration:
    """The latency (or jitter) the kernel enforces for ``value`` under dilation ``k``
    (``value * k``); ``ClusterSpecError`` naming ``what`` past ``LONGEST_LATENCY``."""
    longer = Duration(value.nanoseconds * k)
    if longer > LONGEST_LATENCY:
        raise ClusterSpecError(
            f"{what}: {value} times the dilation {k} exceeds {LONGEST_LATENCY}, the longest a "
            "link takes"
        )
    return longer


#: the keys of a cluster's latencies (``build_spec``)
DELAY_KEYS = ("latency", "jitter", "master_latency", "master_jitter", "node_latency")
#: the keys of a cluster description (``build_spec``)
OPTION_KEYS = frozenset(
    {
        *("nodes", "subnet", "cpus", "dilation", "queue"),
        *("rate", "egress", "ingress", "master_rate", "master_egress", "master_ingress"),
        "node_rates",
        *DELAY_KEYS,
    }
)


def _delays(
    options: Mapping[str, Any], count: int, named: Mapping[str, str]
) -> list[tuple[Duration, Duration]]:
    """Each node's (latency, jitter), checked (``check_jitter``) where they are given."""

    def delay(key: str, default: Duration) -> Duration:
        return parse_delay(options[key], named.get(key, key)) if key in options else default

    latency, jitter = delay("latency", NO_DELAY), delay("jitter", NO_DELAY)
    workers = (latency, jitter)
    master = (delay("master_latency", latency), delay("master_jitter", jitter))
    key = named.get("node_latency", "node_latency")
    given = options.get("node_latency") or {}
    if not isinstance(given, Mapping):
        raise ClusterSpecError(f"{key} must map node names to latencies, got {given!r}")
    found = [master] + [workers] * (count - 1)
    for name, value in given.items():
        index = _node_index(name, count, key)
        own = found[index]
        if isinstance(value, Mapping):
            extra = sorted(set(value) - {"latency", "jitter"})
            if extra or not value:
                raise ClusterSpecError(
                    f"{key}.{name}: expected latency and/or jitter, got {sorted(value)}"
                )
            found[index] = (
                parse_delay(value["latency"], f"{key}.{name}.latency")
                if "latency" in value
                else own[0],
                parse_delay(value["jitter"], f"{key}.{name}.jitter")
                if "jitter" in value
                else own[1],
            )
        else:
            found[index] = (parse_delay(value, f"{key}.{name}"), own[1])
    for index in [*range(1, count), 0]:  # the workers' first: what --jitter is about
        node_latency, node_jitter = found[index]
        # the master's jitter defaults to the workers', and may not fit its own latency
        where = "master_jitter" if index == 0 else "jitter"
        if f"{PREFIX}node{index}" in given:
            where = f"{key}.{PREFIX}node{index}"
        check_jitter(node_latency, node_jitter, named.get(where, where))
    return found


def _node_index(name: object, count: int, key: str) -> int:
    if name not in {f"{PREFIX}node{i}" for i in range(count)}:
        raise ClusterSpecError(
            f"{key}: no node {name!r} in a {count}-node cluster (gc-node0 .. gc-node{count - 1})"
        )
    return int(str(name).removeprefix(f"{PREFIX}node"))


def parse_node_latency(text: str) -> tuple[str, dict[str, str]]:
    """``--node-latency gc-node3=2ms`` or ``gc-node3=2ms/0.5ms`` (latency/jitter) ->
    ``("gc-node3", {"latency": ..., "jitter": ...})``."""
    name, sep, delays = text.partition("=")
    pieces = delays.split("/")
    if not sep or not name or not delays or len(pieces) > 2:
        raise ClusterSpecError(
            f"--node-latency: expected NODE=LATENCY or NODE=LATENCY/JITTER, got {text!r}"
        )
    for piece in pieces:
        parse_delay(piece, f"--node-latency {text}")
    return name, dict(zip(("latency", "jitter"), pieces, strict=False))


def _node_rates(given: object, count: int, key: str) -> dict[str, dict[str, Rate | None]]:
    """``node_rates`` (named ``key`` in messages): per node, a rate for both directions or
    ``{egress:, ingress:}`` (one or both); overrides the workers' (or the master's) rates for
    that node."""
    if not isinstance(given, Mapping):
        raise ClusterSpecError(f"{key} must map node names to rates, got {given!r}")
    names = {f"{PREFIX}node{i}" for i in range(count)}
    found: dict[str, dict[str, Rate | None]] = {}
    for name, value in given.items():
        if name not in names:
            raise ClusterSpecError(
                f"{key}: no node {name!r} in a {count}-node cluster "
                f"(gc-node0 .. gc-node{count - 1})"
            )
        if isinstance(value, Mapping):
            extra = sorted(set(value) - {"egress", "ingress"})
            if extra or not value:
                raise ClusterSpecError(
                    f"{key}.{name}: expected egress and/or ingress, got {sorted(value)}"
                )
            found[name] = {k: parse_limit(v, f"{key}.{name}.{k}") for k, v in value.items()}
        else:
            rate = parse_limit(value, f"{key}.{name}")
            found[name] = {"egress": rate, "ingress": rate}
    return found


def parse_node_rate(text: str) -> tuple[str, dict[str, str]]:
    """``--node-rate gc-node3=50mbit`` (both directions) or ``gc-node3=50mbit/20mbit``
    (egress/ingress; a rate's own ``/s``, ``6MB/s/2MB/s``, stays with it) ->
    ``("gc-node3", {...})``."""
    name, sep, rates = text.partition("=")
    if not sep or not name or not rates:
        raise ClusterSpecError(
            f"--node-rate: expected NODE=RATE or NODE=EGRESS/INGRESS, got {text!r}"
        )
    pieces: list[str] = []
    for piece in rates.split("/"):
        if piece == "s" and pieces:
            pieces[-1] += "/s"
        else:
            pieces.append(piece)
    if len(pieces) > 2:
        raise ClusterSpecError(
            f"--node-rate: expected NODE=RATE or NODE=EGRESS/INGRESS, got {text!r}"
        )
    egress, ingress = pieces[0], pieces[-1]
    for piece in {egress, ingress}:
        parse_limit(piece, f"--node-rate {text}")  # named as given, before the spec merges it
    return name, {"egress": egress, "ingress": ingress}
