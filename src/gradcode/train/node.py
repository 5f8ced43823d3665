"""Where each rank ran and how MPI connected it: ``ranks`` in ``summary.json`` and
``ranks.json``.

Every rank describes itself (``describe_rank``): its ``host`` (hostname), ``netns`` (the inode
of its network namespace, ``/proc/self/ns/net``: ranks of an emulated cluster share one
hostname only if its nodes were given the same one, never a namespace), ``boot_id`` (the
running kernel's: ranks with the same one read the same monotonic clock, which is what makes
a sender's timestamp comparable with a receiver's), SLURM's ``slurm_nodeid`` and
``slurmd_nodename`` when it started the rank, and the MPI transport: the library's version and
device line (``MPI.Get_library_version``) and the environment MPICH reads to pick it
(``MPIR_CVAR_CH4_NETMOD``, ``FI_PROVIDER``, ``MPIR_CVAR_NOLOCAL``, ...).

Rank 0 gathers them and ``summarize_ranks`` adds, per rank, ``node`` (ranks on one node share
an index: same host, namespace and kernel), ``shares_node_with`` (the other ranks on its node)
and ``path_to_master`` (what MPICH uses between this rank and rank 0: ``self``, ``shm`` when
it considers them on one host, which is by hostname, and ``MPIR_CVAR_NOLOCAL`` is not set,
else ``netmod``). A rank in another namespace that MPICH still reaches through shared memory
(same hostname, ``NOLOCAL`` unset) would bypass the links: ``shm_across_namespaces`` in the
summary says so.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Sequence
from typing import Any

from mpi4py import MPI

from gradcode.netns import boot_id, namespace_inode

#: the environment MPICH (and libfabric) choose the transport from, recorded when set
TRANSPORT_ENV = (
    "MPIR_CVAR_CH4_NETMOD",
    "MPIR_CVAR_NOLOCAL",
    "MPIR_CVAR_CH4_SHM_POSIX_EAGER",
    "MPIR_CVAR_ODD_EVEN_CLIQUES",
    "MPIR_CVAR_CH4_OFI_ENABLE_SHARED_CONTEXTS",
    "FI_PROVIDER",
    "FI_TCP_IFACE",
    "FI_SOCKETS_IFACE",
    "UCX_TLS",
    "UCX_NET_DEVICES",
    "MPIR_CVAR_NAMESERV_HOST",
)


def _truthy(value: str | None) -> bool:
    return value is not None and value.strip().lower() not in ("", "0", "false", "no", "off")


def library() -> dict[str, str]:
    """The MPI library: its version text's first line and, for MPICH, its device line."""
    text = MPI.Get_library_version()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    found = {"version": lines[0] if lines else ""}
    for line in lines:
        if line.startswith("MPICH Device:"):
            found["device"] = line.split(":", 1)[1].strip()
    return found


def describe_rank(rank: int) -> dict[str, Any]:
    """This rank's node and transport (see the module docstring)."""
    env = {key: os.environ[key] for key in TRANSPORT_ENV if key in os.environ}
    record: dict[str, Any] = {
        "rank": rank,
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "processor_name": MPI.Get_processor_name(),
        "netns": namespace_inode(),
        "boot_id": boot_id(),
        "slurm_nodeid": os.environ.get("SLURM_NODEID"),
        "slurmd_nodename": os.environ.get("SLURMD_NODENAME"),
        "transport": {
            "library": library(),
            "netmod": env.get("MPIR_CVAR_CH4_NETMOD", "default"),
            "provider": env.get("FI_PROVIDER"),
            "nolocal": _truthy(env.get("MPIR_CVAR_NOLOCAL")),
            "env": env,
        },
    }
    return record


def _node_key(record: dict[str, Any]) -> tuple[Any, ...]:
    return (record["host"], record["netns"], record["boot_id"], record["slurm_nodeid"])


def summarize_ranks(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Every rank's record with ``node``, ``shares_node_with`` and ``path_to_master``, the
    nodes, and whether all clocks are comparable (one kernel)."""
    nodes: dict[tuple[Any, ...], int] = {}
    ranks = [dict(record) for record in sorted(records, key=lambda r: r["rank"])]
    for record in ranks:
        record["node"] = nodes.setdefault(_node_key(record), len(nodes))
    master = ranks[0] if ranks else None
    shm_across = False
    for record in ranks:
        record["shares_node_with"] = [
            other["rank"]
            for other in ranks
            if other["node"] == record["node"] and other["rank"] != record["rank"]
        ]
        if master is None or record is master:
            record["path_to_master"] = "self"
            continue
        same_host = record["host"] == master["host"]  # MPICH's locality is by hostname
        nolocal = record["transport"]["nolocal"] or master["transport"]["nolocal"]
        record["path_to_master"] = "shm" if same_host and not nolocal else "netmod"
        if record["path_to_master"] == "shm" and record["node"] != master["node"]:
            shm_across = True
    by_node: dict[int, list[int]] = {}
    for record in ranks:
        by_node.setdefault(record["node"], []).append(record["rank"])
    boots = {record["boot_id"] for record in ranks}
    first = {record["node"]: record for record in reversed(ranks)}
    return {
        "ranks": ranks,
        "nodes": [
            {
                "node": index,
                "host": first[index]["host"],
                "netns": first[index]["netns"],
                "ranks": members,
            }
            for index, members in sorted(by_node.items())
        ],
        "one_clock": len(boots) == 1 and None not in boots,
        "shm_across_namespaces": shm_across,
    }
