"""The connection stall among many ranks (issue 40, part 1): a bare mpi4py all-to-all
(``alltoall_rank.py``, no gradcode) at several job sizes, on the emulated cluster or on the
host's loopback, with the kernel's counters read around each job.

On the cluster every rank has a node of its own (``gradcode cluster mpiexec``: MPICH over
libfabric's ``tcp`` provider; ``--transport openmpi``: ``gradcode cluster ulfm``, Open MPI's
TCP BTL). ``--arp dynamic`` removes the nodes' permanent neighbour entries for the sweep (as
every cluster had them before ``cluster up`` made them), so the stall can be reproduced, and
puts them back after. On the host (``--where host``) the ranks talk over ``lo`` with shared
memory switched off (``MPIR_CVAR_NOLOCAL=1``).

Counters, summed over every node's namespace (``/proc/net/netstat`` and ``snmp``): listen
overflows and drops, SYN retransmissions, retransmission timeouts, active opens, and
retransmissions held back because the first copy was still queued on this host; the ARP
table's ``table_fulls`` and ``forced_gc_runs`` (one table for every namespace of the
kernel, ``ip -s ntable``); the per-CPU backlog's drops (``/proc/net/softnet_stat``).

    gradcode cluster up --nodes 158 --rate 100mbit --no-slurm
    python benchmarks/cluster_alltoall.py --ranks 5 11 19 39 84 157 --out a2a.jsonl
    python benchmarks/cluster_alltoall.py --ranks 19 39 --arp dynamic --timeout 120 --out a2a.jsonl
    gradcode cluster down
    python benchmarks/cluster_alltoall.py --where host --ranks 5 11 19 39 84 157 --out a2a.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from gradcode.cluster.control import current_spec
from gradcode.cluster.mpi.mpich import MPICH_ENV
from gradcode.cluster.network import namespaces

BIN = Path(sys.executable).parent
RANK = Path(__file__).with_name("alltoall_rank.py")
TCP_COUNTERS = (
    "TcpExtListenOverflows",
    "TcpExtListenDrops",
    "TcpExtTCPSynRetrans",
    "TcpExtTCPTimeouts",
    "TcpActiveOpens",
    "TcpExtTCPSpuriousRtxHostQueues",
)
#: the cluster's MPICH transport on the host's loopback, shared memory off
HOST_ENV = {**MPICH_ENV, "FI_TCP_IFACE": "lo", "MPIR_CVAR_NOLOCAL": "1"}


def _netstat(prefix: list[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for table in ("/proc/net/netstat", "/proc/net/snmp"):
        lines = subprocess.run(
            [*prefix, "cat", table], capture_output=True, text=True, check=True
        ).stdout.splitlines()
        for names, values in zip(lines[::2], lines[1::2], strict=True):
            group, *keys = names.split()
            for key, value in zip(keys, values.split()[1:], strict=True):
                if value.lstrip("-").isdigit():
                    counts[group.rstrip(":") + key] = int(value)
    return counts


def _arp(prefix: list[str]) -> dict[str, int]:
    shown = subprocess.run(
        [*prefix, "ip", "-s", "ntable", "show", "name", "arp_cache"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found = {
        key: int(value) for key, value in re.findall(r"(table_fulls|forced_gc_runs) (\d+)", shown)
    }
    found["entries"] = int(re.search(r"entries (\d+)", shown).group(1))
    return found


def _softnet_drops() -> int:
    rows = Path("/proc/net/softnet_stat").read_text().split("\n")
    return sum(int(row.split()[1], 16) for row in rows if row.strip())


def counters(where: str) -> dict[str, int]:
    """The sweep's counters now: TCP's summed over the nodes' namespaces (the host's own on
    the host), the shared ARP table's and the backlog's."""
    if where == "host":
        prefixes = [[]]
    else:
        prefixes = [["ip", "netns", "exec", node.name] for node in current_spec().nodes]
    total = dict.fromkeys(TCP_COUNTERS, 0)
    for prefix in prefixes:
        counts = _netstat(prefix)
        for key in TCP_COUNTERS:
            total[key] += counts.get(key, 0)
    total.update(_arp(prefixes[0]))
    total["softnet_dropped"] = _softnet_drops()
    return total


def command(where: str, transport: str, ranks: int) -> tuple[list[str], dict[str, str]]:
    env = {**os.environ}
    program = [str(BIN / "python"), str(RANK)]
    if where == "host":
        if transport == "openmpi":
            from gradcode.launch.mpilib import ulfm_command, ulfm_environment

            mca = [("btl_tcp_if_include", "lo")]
            return ulfm_command(ranks, program, mca=mca), ulfm_environment(env)
        return [str(BIN / "mpiexec.hydra"), "-n", str(ranks), *program], {**env, **HOST_ENV}
    way = "ulfm" if transport == "openmpi" else "mpiexec"
    return [str(BIN / "gradcode"), "cluster", way, "-n", str(ranks), "--", *program], env


def flush_neighbours() -> None:
    for node in current_spec().nodes:
        namespaces.run(["ip", "-n", node.name, "neigh", "flush", "nud", "permanent"])


def _run(argv: list[str], env: dict[str, str], timeout: float) -> tuple[str, str]:
    """The job's output and how it ended; a job past ``timeout`` is ended with its whole
    process group (the launcher's proxies and ranks too)."""
    job = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
        start_new_session=True,
    )
    try:
        output, _ = job.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(job.pid, signal.SIGTERM)
        try:
            output, _ = job.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(job.pid, signal.SIGKILL)
            output, _ = job.communicate()
        return output, f"timed out after {timeout:g} s"
    return output, "completed" if job.returncode == 0 else f"exit {job.returncode}"


def one_job(where: str, transport: str, ranks: int, timeout: float) -> dict:
    """One all-to-all job: its times, how it ended and the counters' change across it."""
    argv, env = command(where, transport, ranks)
    before = counters(where)
    began = time.monotonic()
    output, status = _run(argv, env, timeout)
    wall = time.monotonic() - began
    time.sleep(1)  # a timed-out job's ranks are gone before the counters are read
    after = counters(where)
    line = next((json.loads(x[4:]) for x in output.splitlines() if x.startswith("A2A ")), {})
    return {
        "where": where,
        "transport": transport,
        "ranks": ranks,
        "status": status,
        "wall_s": round(wall, 2),
        **{k: v for k, v in line.items() if k != "ranks"},
        "counters": {k: after[k] - before[k] for k in after if k != "entries"},
        "arp_entries_after": after["entries"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", type=int, nargs="+", default=[5, 11, 19, 39, 84, 157])
    parser.add_argument("--where", choices=("cluster", "host"), default="cluster")
    parser.add_argument("--transport", choices=("mpich", "openmpi"), default="mpich")
    parser.add_argument("--arp", choices=("permanent", "dynamic"), default="permanent")
    parser.add_argument("--timeout", type=float, default=600, help="seconds a job may take")
    parser.add_argument("--bytes", type=int, default=5000, help="bytes of one message")
    parser.add_argument("--out", type=Path, required=True, help="JSON lines, appended")
    args = parser.parse_args()
    os.environ["A2A_BYTES"] = str(args.bytes)
    if args.arp == "dynamic":
        if args.where != "cluster":
            parser.error("--arp dynamic: only on the cluster")
        flush_neighbours()
    try:
        for ranks in args.ranks:
            row = {**one_job(args.where, args.transport, ranks, args.timeout), "arp": args.arp}
            print(json.dumps(row), flush=True)
            with args.out.open("a") as out:
                out.write(json.dumps(row) + "\n")
    finally:
        if args.arp == "dynamic":
            namespaces.fill_neighbours(current_spec())
    return 0


if __name__ == "__main__":
    sys.exit(main())
