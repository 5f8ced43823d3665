"""The netfilter queue's netlink messages (gradcode.cluster.latency.nfqueue), byte for byte against
the kernel's layouts (linux/netlink.h, nfnetlink.h, nfnetlink_queue.h), without root."""

from __future__ import annotations

import struct
import sys

import pytest

from gradcode.cluster.latency import nfqueue

pytestmark = pytest.mark.skipif(sys.byteorder != "little", reason="expected bytes: little-endian")


def test_bind_is_a_config_command_asking_for_an_acknowledgement():
    assert nfqueue.bind(3, seq=2) == bytes.fromhex(
        "1c000000"
        "0203"
        "0500"
        "02000000"
        "00000000"  # nlmsghdr: 28 bytes, QUEUE<<8|CONFIG
        "00"
        "00"
        "0003"  # nfgenmsg: AF_UNSPEC, version 0, queue 3 big-endian
        "0800"
        "0100"
        "01"
        "00"
        "0000"  # NFQA_CFG_CMD: BIND, pad, pf AF_UNSPEC
    )


def test_configure_asks_for_metadata_only_a_queue_length_and_whole_offloaded_packets():
    data = nfqueue.configure(7, 8192, seq=9)
    length, kind, flags, seq, port = struct.unpack_from("=IHHII", data)
    assert (length, kind, flags, seq, port) == (len(data), 0x0302, 5, 9, 0)
    assert data[16:20] == bytes.fromhex("00000007")
    assert data[20:] == bytes.fromhex(
        "0900"
        "0200"
        "00000000"
        "01"
        "000000"  # NFQA_CFG_PARAMS: copy_range 0, META, padded
        "0800"
        "0300"
        "00002000"  # NFQA_CFG_QUEUE_MAXLEN 8192
        "0800"
        "0400"
        "00000004"  # NFQA_CFG_MASK: F_GSO
        "0800"
        "0500"
        "00000004"  # NFQA_CFG_FLAGS: F_GSO
    )


@pytest.mark.parametrize(("batch", "kind"), [(False, 0x0301), (True, 0x0303)])
def test_a_verdict_accepts_a_packet_by_id(batch, kind):
    data = nfqueue.verdict(2, 0x01020304, batch=batch)
    assert data == struct.pack("=IHHII", 32, kind, 1, 0, 0) + bytes.fromhex(
        "000000020c0002000000000101020304"  # NFQA_VERDICT_HDR: NF_ACCEPT, id
    )


def _packet(queue: int, packet_id: int, stamp: tuple[int, int] | None) -> bytes:
    """A packet message as the kernel writes one (copy mode META)."""
    attrs = struct.pack("=HH", 11, 1) + struct.pack("!IHB", packet_id, 0x0800, 2) + b"\0"
    attrs += struct.pack("=HH", 8, 6) + struct.pack("!I", 5)  # NFQA_IFINDEX_OUTDEV
    if stamp is not None:
        attrs += struct.pack("=HH", 20, 4) + struct.pack("!QQ", *stamp)
    attrs += struct.pack("=HH", 8, 0x8000 | 15) + struct.pack("!I", 0)  # a nested one, skipped
    body = struct.pack("!BBH", 2, 0, queue) + attrs
    return struct.pack("=IHHII", 16 + len(body), 0x0300, 0, 0, 1234) + body


def test_packets_are_read_with_their_queue_id_and_arrival_timestamp():
    datagram = _packet(4, 77, (1_700_000_000, 250)) + _packet(1, 78, None)
    assert list(nfqueue.parse(datagram)) == [
        nfqueue.Packet(4, 77, 1_700_000_000 * 10**9 + 250_000),
        nfqueue.Packet(1, 78, None),
    ]


def test_an_error_names_the_request_it_answers():
    refused = struct.pack("=IHHII", 36, 2, 0, 0, 0) + struct.pack("=i", -1)
    refused += struct.pack("=IHHII", 28, 0x0302, 5, 7, 0)  # the request's own header
    acknowledged = struct.pack("=IHHII", 36, 2, 0, 0, 0) + struct.pack("=i", 0)
    acknowledged += struct.pack("=IHHII", 28, 0x0302, 5, 8, 0)
    assert list(nfqueue.parse(refused + acknowledged)) == [
        nfqueue.Error(1, 7),
        nfqueue.Error(0, 8),
    ]


def test_a_truncated_datagram_yields_what_is_whole():
    whole = _packet(0, 1, None)
    assert list(nfqueue.parse(whole + whole[:10])) == [nfqueue.Packet(0, 1, None)]
