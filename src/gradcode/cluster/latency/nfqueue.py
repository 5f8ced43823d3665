"""The kernel's netfilter queue (``NFQUEUE``) spoken over netlink with the standard library:
the messages that bind a queue, the packets it hands up and the verdicts that let them go.

Why not a PyPI package (NetfilterQueue, pyroute2): they wrap libnetfilter_queue (a C library
and its headers at install time) or a large netlink framework, for the five message layouts
the delayer uses; these are small, fixed by the kernel's ABI (``linux/netfilter/nfnetlink.h``,
``nfnetlink_queue.h``) and tested here without root (``tests/cluster/test_nfqueue.py``).

A netlink message is a ``nlmsghdr`` (length, type, flags, sequence, port id: host byte order),
then nfnetlink's ``nfgenmsg`` (family, version, the queue number big-endian), then attributes
(``nlattr``: length and type in host order, the payload, padded to 4 bytes). Payloads of the
queue's own attributes are big-endian.
"""

from __future__ import annotations

import socket
import struct
from collections.abc import Iterator
from typing import NamedTuple

NETLINK_NETFILTER = 12
NFNL_SUBSYS_QUEUE = 3
NFNETLINK_V0 = 0
#: message types within the queue subsystem
NFQNL_MSG_PACKET, NFQNL_MSG_VERDICT, NFQNL_MSG_CONFIG, NFQNL_MSG_VERDICT_BATCH = 0, 1, 2, 3
#: netlink's own message types and flags
NLMSG_ERROR, NLMSG_DONE = 2, 3
NLM_F_REQUEST, NLM_F_ACK = 1, 4
#: configuration attributes and commands
NFQA_CFG_CMD, NFQA_CFG_PARAMS, NFQA_CFG_QUEUE_MAXLEN = 1, 2, 3
NFQA_CFG_MASK, NFQA_CFG_FLAGS = 4, 5
NFQNL_CFG_CMD_BIND, NFQNL_CFG_CMD_UNBIND = 1, 2
NFQNL_COPY_META = 1
#: hand up segmentation-offloaded packets whole (one message, not one per segment)
NFQA_CFG_F_GSO = 4
#: packet attributes
NFQA_PACKET_HDR, NFQA_VERDICT_HDR, NFQA_TIMESTAMP = 1, 2, 4
NF_ACCEPT = 1

_NLMSGHDR = struct.Struct("=IHHII")
_NFGENMSG = struct.Struct("!BBH")
_NLATTR = struct.Struct("=HH")
HEADER = _NLMSGHDR.size + _NFGENMSG.size


class NetlinkError(OSError):
    """The kernel refused a request (its errno and what was asked)."""


def _align(length: int) -> int:
    return (length + 3) & ~3


def attribute(kind: int, payload: bytes) -> bytes:
    """One ``nlattr``, padded to 4 bytes."""
    length = _NLATTR.size + len(payload)
    return _NLATTR.pack(length, kind) + payload + b"\0" * (_align(length) - length)


def message(kind: int, queue: int, attributes: bytes, *, seq: int = 0, ack: bool = False) -> bytes:
    """One request to the queue subsystem: ``kind`` (``NFQNL_MSG_*``) about queue ``queue``."""
    flags = NLM_F_REQUEST | (NLM_F_ACK if ack else 0)
    body = _NFGENMSG.pack(socket.AF_UNSPEC, NFNETLINK_V0, queue) + attributes
    header = _NLMSGHDR.pack(
        _NLMSGHDR.size + len(body), NFNL_SUBSYS_QUEUE << 8 | kind, flags, seq, 0
    )
    return header + body


def bind(queue: int, *, seq: int = 0) -> bytes:
    """Take queue ``queue`` for this socket."""
    command = struct.pack("!BxH", NFQNL_CFG_CMD_BIND, socket.AF_UNSPEC)
    return message(NFQNL_MSG_CONFIG, queue, attribute(NFQA_CFG_CMD, command), seq=seq, ack=True)


def configure(queue: int, maxlen: int, *, seq: int = 0) -> bytes:
    """Copy mode META (only the metadata comes up, never the packet), at most ``maxlen``
    packets held, offloaded packets whole."""
    attributes = (
        attribute(NFQA_CFG_PARAMS, struct.pack("!IB", 0, NFQNL_COPY_META))
        + attribute(NFQA_CFG_QUEUE_MAXLEN, struct.pack("!I", maxlen))
        + attribute(NFQA_CFG_MASK, struct.pack("!I", NFQA_CFG_F_GSO))
        + attribute(NFQA_CFG_FLAGS, struct.pack("!I", NFQA_CFG_F_GSO))
    )
    return message(NFQNL_MSG_CONFIG, queue, attributes, seq=seq, ack=True)


def verdict(queue: int, packet_id: int, *, batch: bool) -> bytes:
    """Accept packet ``packet_id`` of ``queue`` (``batch``: and every earlier one still held)."""
    kind = NFQNL_MSG_VERDICT_BATCH if batch else NFQNL_MSG_VERDICT
    header = attribute(NFQA_VERDICT_HDR, struct.pack("!II", NF_ACCEPT, packet_id))
    return message(kind, queue, header)


class Packet(NamedTuple):
    """A queued packet as the kernel announced it: its queue, id and arrival timestamp (wall
    clock, nanoseconds; ``None`` when the packet carried none). A tuple: one is made per packet,
    and a tuple is made fastest."""

    queue: int
    packet_id: int
    timestamp_ns: int | None


class Error(NamedTuple):
    """A netlink error or acknowledgement (``errno`` 0) of the request numbered ``seq``."""

    errno: int
    seq: int


_ERRNO = struct.Struct("=i")
_SEQ = struct.Struct("=I")
_PACKET_ID = struct.Struct("!I")
_STAMP = struct.Struct("!QQ")
_PACKET = NFNL_SUBSYS_QUEUE << 8 | NFQNL_MSG_PACKET


def parse(data: bytes) -> Iterator[Packet | Error]:
    """The packets and errors in one datagram from the kernel (other messages skipped).

    Attributes are walked in place (no slices, no inner generator): this runs once per
    packet the delayer holds."""
    offset, size = 0, len(data)
    while offset + 16 <= size:
        length, kind, _flags, seq, _port = _NLMSGHDR.unpack_from(data, offset)
        if length < 16:
            break
        end = min(offset + length, size)
        if kind == _PACKET:
            queue = _NFGENMSG.unpack_from(data, offset + 16)[2]
            packet_id, stamp = None, None
            at = offset + HEADER
            while at + 4 <= end:
                attr_length, attr = _NLATTR.unpack_from(data, at)
                if attr_length < 4:
                    break
                attr &= 0x3FFF
                if attr == NFQA_PACKET_HDR and attr_length >= 8:
                    packet_id = _PACKET_ID.unpack_from(data, at + 4)[0]
                elif attr == NFQA_TIMESTAMP and attr_length >= 20:
                    seconds, micros = _STAMP.unpack_from(data, at + 4)
                    stamp = seconds * 1_000_000_000 + micros * 1000
                at += (attr_length + 3) & ~3
            if packet_id is not None:
                yield Packet(queue, packet_id, stamp)
        elif kind == NLMSG_ERROR and offset + 36 <= size:
            code = _ERRNO.unpack_from(data, offset + 16)[0]
            # the error's own header repeats the request's: its sequence number says which
            request_seq = _SEQ.unpack_from(data, offset + 28)[0]
            yield Error(-code, request_seq if request_seq else seq)
        offset += _align(length)


def open_socket(receive_buffer: int) -> socket.socket:
    """A netfilter netlink socket with a receive buffer of ``receive_buffer`` bytes (forced
    past the system's limit: a full buffer loses the kernel's messages, not its packets)."""
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_NETFILTER)
    SO_RCVBUFFORCE = getattr(socket, "SO_RCVBUFFORCE", 33)
    sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, receive_buffer)
    sock.bind((0, 0))
    return sock


def request(sock: socket.socket, data: bytes, seq: int, what: str) -> None:
    """Send one acknowledged request and wait for its acknowledgement; ``NetlinkError`` naming
    ``what`` when the kernel refuses it."""
    sock.send(data)
    while True:
        for item in parse(sock.recv(65536)):
            if isinstance(item, Error) and item.seq == seq:
                if item.errno:
                    raise NetlinkError(item.errno, f"{what}: {_strerror(item.errno)}")
                return


def _strerror(errno: int) -> str:
    import os

    return os.strerror(errno)
