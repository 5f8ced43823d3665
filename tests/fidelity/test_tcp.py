"""What TCP did in a network namespace (``gradcode.fidelity.tcp``): the kernel's counters read
on this machine's own files and on fabricated ones, checked against traffic made here, and the
record's section counting each namespace once."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from gradcode.fidelity import tcp
from gradcode.fidelity.record import build_record

needs_counters = pytest.mark.skipif(
    not (tcp.SNMP.exists() and tcp.NETSTAT.exists()), reason="no /proc/self/net counters here"
)

SNMP_TEXT = (
    "Ip: Forwarding DefaultTTL InReceives\n"
    "Ip: 2 64 500\n"
    "Tcp: RtoAlgorithm RtoMin InSegs OutSegs RetransSegs InErrs\n"
    "Tcp: 1 200 7000 6000 12 0\n"
    "Udp: InDatagrams NoPorts\n"
    "Udp: 5 6\n"
)
#: a kernel's netstat without ``TCPLossProbes`` (and without most of the others)
NETSTAT_TEXT = (
    "TcpExt: SyncookiesSent TCPTimeouts TCPSackRecovery TCPLostRetransmit\n"
    "TcpExt: 0 3 4 1\n"
    "IpExt: InNoRoutes InOctets\n"
    "IpExt: 0 99\n"
)


def test_the_parser_takes_the_named_counters_of_one_section_and_leaves_out_the_missing():
    assert tcp.parse(SNMP_TEXT, "Tcp", tcp.TCP) == {
        "InSegs": 7000,
        "OutSegs": 6000,
        "RetransSegs": 12,
    }
    ext = tcp.parse(NETSTAT_TEXT, "TcpExt", tcp.TCP_EXT)
    assert ext == {"TCPTimeouts": 3, "TCPSackRecovery": 4, "TCPLostRetransmit": 1}
    assert "TCPLossProbes" not in ext
    # a section absent, cut short, or holding something else than a number
    assert tcp.parse(SNMP_TEXT, "TcpExt", tcp.TCP_EXT) == {}
    assert tcp.parse("Tcp: InSegs OutSegs\nTcp: 1\n", "Tcp", tcp.TCP) == {}
    assert tcp.parse("Tcp: InSegs OutSegs\nTcp: 1 x\n", "Tcp", tcp.TCP) == {"InSegs": 1}


def _fabricated(tmp_path: Path, monkeypatch, snmp: str, netstat: str) -> None:
    (tmp_path / "snmp").write_text(snmp)
    (tmp_path / "netstat").write_text(netstat)
    monkeypatch.setattr(tcp, "SNMP", tmp_path / "snmp")
    monkeypatch.setattr(tcp, "NETSTAT", tmp_path / "netstat")


def test_a_fabricated_kernel_gives_the_counters_it_has_and_their_increase(tmp_path, monkeypatch):
    _fabricated(tmp_path, monkeypatch, SNMP_TEXT, NETSTAT_TEXT)
    begin = tcp.sample()
    assert begin is not None
    assert begin["counters"] == {
        "InSegs": 7000,
        "OutSegs": 6000,
        "RetransSegs": 12,
        "TCPTimeouts": 3,
        "TCPSackRecovery": 4,
        "TCPLostRetransmit": 1,
    }
    _fabricated(
        tmp_path,
        monkeypatch,
        SNMP_TEXT.replace("7000 6000 12", "7100 6250 20"),
        NETSTAT_TEXT.replace("0 3 4 1", "0 5 4 0"),
    )
    spent = tcp.between(begin, tcp.sample())
    assert spent is not None and spent["namespace"] == begin["namespace"]
    # the counter that went down (wrapped) is left out, not guessed
    assert spent["counters"] == {
        "InSegs": 100,
        "OutSegs": 250,
        "RetransSegs": 8,
        "TCPTimeouts": 2,
        "TCPSackRecovery": 0,
    }


def test_a_missing_or_unreadable_file_gives_no_section(tmp_path, monkeypatch):
    monkeypatch.setattr(tcp, "SNMP", tmp_path / "absent")
    assert tcp.sample() is None
    assert tcp.between(None, None) is None
    _fabricated(tmp_path, monkeypatch, "Ip: Forwarding\nIp: 2\n", "IpExt: InOctets\nIpExt: 9\n")
    assert tcp.sample() is None  # files without TCP
    ranks = [{"seconds": 1.0, "tcp": None}, {"seconds": 1.0}, None]
    assert tcp.section(ranks) is None
    record = build_record(
        ranks=ranks,
        pressure=None,
        cores=2,
        dilation=1.0,
        measured=[0.1, 0.1],
        predicted=None,
        undilated=None,
        model="injected delays",
        handoffs=3,
    )
    assert record["tcp"] is None


@needs_counters
def test_traffic_made_here_shows_in_this_namespaces_counters():
    """A connection on the loopback, 200 kB sent with no delay: this namespace sent at least
    the handshake and that many segments of at most 64 kB each (others' traffic only adds)."""
    began = tcp.sample()
    assert began is not None and set(tcp.TCP) <= set(began["counters"])
    payload = b"x" * 200_000
    with socket.create_server(("127.0.0.1", 0)) as server:
        with socket.create_connection(server.getsockname()) as client:
            peer, _ = server.accept()
            with peer:
                client.sendall(payload)
                got = 0
                while got < len(payload):
                    got += len(peer.recv(1 << 16))
    spent = tcp.between(began, tcp.sample())
    assert spent is not None
    assert spent["counters"]["OutSegs"] >= 2 + len(payload) // 65536
    assert spent["counters"]["InSegs"] >= 2 + len(payload) // 65536
    assert all(value >= 0 for value in spent["counters"].values())


SAMPLE = "from gradcode.fidelity import tcp; import json; print(json.dumps(tcp.sample()))"


@needs_counters
def test_a_namespace_of_its_own_is_not_the_machines():
    """A process in a fresh network namespace (``unshare -n``, root only) reads other
    counters under another identity, and is told apart from the machine's namespace."""
    here = tcp.sample()
    assert here is not None
    done = subprocess.run(
        ["unshare", "-n", sys.executable, "-c", SAMPLE], capture_output=True, text=True
    )
    if done.returncode != 0:
        pytest.skip(f"no network namespace of its own here: {done.stderr.strip()[-200:]}")
    alone = json.loads(done.stdout)
    assert alone["namespace"][0] == here["namespace"][0]  # one machine, one boot
    assert alone["namespace"][1] != here["namespace"][1]
    assert alone["machine"] is False
    assert alone["counters"]["OutSegs"] == 0  # nothing ever sent there
    # the tests run in the machine's own namespace, beside PID 1 (``None``: it cannot tell)
    assert here["machine"] is not False


def rank(namespace: int, machine: bool | None, boot: str = "boot", **counters: int) -> dict:
    """A rank's ``usage.between`` with its ``tcp``."""
    found = {"namespace": [boot, namespace], "machine": machine, "counters": counters}
    return {"seconds": 1.0, "tcp": found}


def test_each_namespace_is_counted_once_by_its_lowest_rank():
    """Ranks 0 and 3 share namespace 10 (rank 3's window saw 2 more segments), 1 and 2 are
    alone in theirs, rank 4 died, rank 5 read nothing; namespace 11 lacks ``TCPTimeouts``."""
    ranks = [
        rank(10, False, OutSegs=100, RetransSegs=5, TCPTimeouts=1),
        rank(11, False, OutSegs=40, RetransSegs=1),
        rank(12, False, OutSegs=30, RetransSegs=0, TCPTimeouts=0),
        rank(10, False, OutSegs=102, RetransSegs=5, TCPTimeouts=1),
        None,
        {"seconds": 1.0, "tcp": None},
    ]
    found = tcp.section(ranks)
    assert found is not None
    assert found["namespaces"] == 3 and found["ranks"] == 4
    assert found["sums"] == {"OutSegs": 170, "RetransSegs": 6}
    assert [(row["rank"], row["ranks"]) for row in found["counted"]] == [(0, 2), (1, 1), (2, 1)]
    assert found["counted"][0]["counters"]["OutSegs"] == 100
    assert found["shared"] is False and "note" not in found


def test_two_machines_with_the_same_namespace_number_are_two_namespaces():
    """Every machine's first namespace has the same inode: the boot id tells them apart."""
    found = tcp.section([rank(7, True, "a", OutSegs=5), rank(7, True, "b", OutSegs=6)])
    assert found is not None
    assert found["namespaces"] == 2 and found["sums"] == {"OutSegs": 11}


@pytest.mark.parametrize(
    ("machines", "shared"),
    [((True, False), True), ((False, False), False), ((None, False), None), ((None, True), True)],
)
def test_the_section_says_when_the_machines_own_namespace_was_counted(machines, shared):
    found = tcp.section([rank(i, machine, OutSegs=1) for i, machine in enumerate(machines)])
    assert found is not None and found["shared"] is shared
    assert ("note" in found) is bool(shared)
