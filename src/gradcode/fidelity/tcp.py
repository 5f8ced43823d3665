"""What TCP did in the network namespace a process is in, between two moments: segments sent
and retransmitted, retransmission time-outs, tail-loss probes, recoveries (the kernel's own
counters, ``/proc/self/net/snmp`` and ``/proc/self/net/netstat``), and the ``section`` of the
fidelity record that sums them once per namespace.

The counters belong to the namespace, not to the process: ranks sharing a namespace read the
same counters, and a namespace shared with the rest of the machine counts its traffic too. A
retransmission time-out lasts at least ``RtoMin`` (200 ms) of real time whatever the run's
time dilation, so a few of them on an emulated link show in a run's times."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from gradcode.netns import boot_id, namespace_inode

SNMP = Path("/proc/self/net/snmp")
NETSTAT = Path("/proc/self/net/netstat")
#: the namespace of PID 1, the machine's own as this process sees it
MACHINE = Path("/proc/1")

#: counters read from ``/proc/self/net/snmp``'s ``Tcp:`` lines
TCP = ("InSegs", "OutSegs", "RetransSegs")
#: counters read from ``/proc/self/net/netstat``'s ``TcpExt:`` lines: time-outs (the undilated
#: 200 ms minimum), tail-loss probes and SYN retransmissions (lost connection set-ups), lost
#: retransmissions, fast retransmissions and SACK recoveries (losses recovered without a
#: time-out), time-outs that proved spurious, and accept queues that overflowed
TCP_EXT = (
    "TCPTimeouts",
    "TCPLossProbes",
    "TCPSynRetrans",
    "TCPLostRetransmit",
    "TCPFastRetrans",
    "TCPSackRecovery",
    "TCPSpuriousRTOs",
    "ListenOverflows",
)
COUNTERS = TCP + TCP_EXT

#: what ``section`` says when a counted namespace was the machine's own
SHARED_NOTE = "a rank was in the machine's own network namespace: other processes' TCP is counted"


def parse(text: str, prefix: str, names: Iterable[str]) -> dict[str, int]:
    """The counters ``names`` of the ``prefix`` section (``Tcp``, ``TcpExt``) of a
    ``/proc/net/snmp``-style text (a line of names, then a line of values, both starting with
    ``PREFIX:``); a counter the text does not give is absent."""
    lines = [line.split() for line in text.splitlines() if line.startswith(f"{prefix}:")]
    if len(lines) < 2 or len(lines[0]) != len(lines[1]):
        return {}
    given = dict(zip(lines[0][1:], lines[1][1:], strict=True))
    found: dict[str, int] = {}
    for name in names:
        try:
            found[name] = int(given[name])
        except (KeyError, ValueError):
            continue  # not in this kernel's file, or not a number: left out, not guessed
    return found


def in_machine_namespace(own: int) -> bool | None:
    """Whether namespace ``own`` is PID 1's; ``None`` where neither way of telling is allowed.
    PID 1's ``ns/net`` link is often closed to a container's root, but its ``net`` directory
    is not, and procfs numbers each namespace's ``snmp`` entry apart (read on the emulated
    cluster: the machine's and two nodes' differed)."""
    try:
        return os.stat(MACHINE / "ns" / "net").st_ino == own
    except OSError:
        pass
    try:
        return os.stat(MACHINE / "net" / "snmp").st_ino == os.stat(SNMP).st_ino
    except OSError:
        return None


def sample() -> dict[str, Any] | None:
    """This process's namespace (``namespace``: the kernel's boot id and the namespace's
    inode, unique across machines), whether it is the machine's own (``machine``) and its TCP
    counters now; ``None`` when a file is missing or unreadable."""
    try:
        snmp, netstat = SNMP.read_text(), NETSTAT.read_text()
    except OSError:
        return None
    inode = namespace_inode()
    if inode is None:
        return None
    boot = boot_id() or ""  # unreadable: one machine's ranks still agree on it
    counters = parse(snmp, "Tcp", TCP) | parse(netstat, "TcpExt", TCP_EXT)
    if not counters:
        return None
    return {
        "namespace": [boot, inode],
        "machine": in_machine_namespace(inode),
        "counters": counters,
    }


def between(
    begin: Mapping[str, Any] | None, end: Mapping[str, Any] | None
) -> dict[str, Any] | None:
    """Each counter's increase from ``begin`` to ``end`` (two ``sample``\\ s of one process),
    with the namespace; ``None`` without both samples or if the process changed namespace. A
    counter that went down (a 32-bit kernel's wrapped) is left out."""
    if begin is None or end is None or begin["namespace"] != end["namespace"]:
        return None
    counters = {
        name: end["counters"][name] - begin["counters"][name]
        for name in COUNTERS
        if name in begin["counters"]
        and name in end["counters"]
        and end["counters"][name] >= begin["counters"][name]
    }
    return {"namespace": end["namespace"], "machine": end["machine"], "counters": counters}


def section(ranks: Sequence[Mapping[str, Any] | None]) -> dict[str, Any] | None:
    """The fidelity record's ``tcp`` from every rank's ``usage.between`` of its timed part
    carrying its ``tcp`` (``between``; a dead rank: ``None``): each namespace counted once,
    by its lowest rank (``counted``: that rank, how many ranks shared the namespace, whether
    it was the machine's, its counters); ``sums`` over the namespaces (a counter one of them
    lacks is left out); ``namespaces``; ``ranks`` that read their counters; and ``shared``
    (a counted namespace was the machine's: other processes' traffic is in the counts;
    ``None`` when that could not be told). ``None`` when no rank read its counters."""
    rows: dict[tuple[str, int], dict[str, Any]] = {}
    read = 0
    for rank, spent in enumerate(ranks):
        spent_tcp = None if spent is None else spent.get("tcp")
        if spent_tcp is None:
            continue
        read += 1
        key = (str(spent_tcp["namespace"][0]), int(spent_tcp["namespace"][1]))
        if key in rows:
            rows[key]["ranks"] += 1
            continue
        machine, counters = spent_tcp["machine"], dict(spent_tcp["counters"])
        rows[key] = {"rank": rank, "ranks": 1, "machine": machine, "counters": counters}
    if not rows:
        return None
    counted = sorted(rows.values(), key=lambda row: row["rank"])
    sums = {
        name: sum(row["counters"][name] for row in counted)
        for name in COUNTERS
        if all(name in row["counters"] for row in counted)
    }
    machine = [row["machine"] for row in counted]
    shared = True if True in machine else (None if None in machine else False)
    said: dict[str, Any] = {"namespaces": len(counted), "ranks": read, "shared": shared}
    if shared:
        said["note"] = SHARED_NOTE
    return said | {"sums": sums, "counted": counted}
