"""A multi-node SLURM on the emulated nodes: munged, slurmctld on the master's node, one slurmd
per node, each in its node's namespaces.

The configuration goes to ``/etc/slurm/slurm.conf``, the default path, because the Snakemake
SLURM executor plugin drops ``SLURM_CONF`` from its job steps; whatever was there is kept aside
and put back by ``down``. slurmctld runs on the master's node (``gc-node0``), so the SLURM
commands work from there: ``gradcode cluster exec -- sinfo`` (the master's node is the
cluster's login node; the host's own namespace has no address on the cluster's network).

Every task of every job step runs a task prolog (``record-rank``) that writes where it ran
(SLURM's node id and name, the hostname, the inode of its network namespace) to
``ranks/JOB.STEP.RANK.json`` in the cluster's runtime folder, so a check of placement does
not depend on what the program in the step records.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

from gradcode.cluster.network.namespaces import ClusterError, enter, run
from gradcode.cluster.spec import ClusterSpec
from gradcode.cluster.state import State
from gradcode.livecluster.files import RUN_DIR

SLURM_CONF = Path("/etc/slurm/slurm.conf")
SPOOL = Path("/var/spool/gradcode-cluster")
LOGS = Path("/var/log/gradcode-cluster")
MUNGE_KEY = Path("/etc/munge/munge.key")
RANKS = RUN_DIR / "ranks"
TASK_PROLOG = RUN_DIR / "record-rank"
PARTITION = "cluster"
DAEMONS = ("/usr/sbin/slurmctld", "/usr/sbin/slurmd", "/usr/sbin/munged")


#: MiB the master's node advertises at least: it is the head node, where the workflow's
#: single-node jobs (data preparation, tables, figures; the slurm profiles ask 2000 MB each)
#: land when the even share of a many-node cluster is too small for them
HEAD_NODE_MIB = 4096
#: MiB per CPU every node advertises at least: a training job holds its nodes whole
#: (--exclusive), so SLURM asks each for all its CPUs times the run's memory per CPU (an MPI
#: rank of a paper-scale run peaks near 300 MiB, the estimate adds a margin, and the
#: profile's two retries ask for more: 512, then 640 and 896 MiB at N = 84)
NODE_MIB_PER_CPU = 1152


def node_memory(nodes: int, cpus: int) -> tuple[int, int]:
    """MiB the master's node and each worker's node advertise: the machine's memory (less
    1 GiB) shared out evenly, the head node at least ``HEAD_NODE_MIB`` and the workers' the
    rest, at least ``cpus * NODE_MIB_PER_CPU``. The nodes share one machine's memory, so on
    many nodes the floors overcommit it: SLURM then only places one rank per node, and the
    machine holds them because a rank's measured peak (``peak_rss_mib``: about 130 MiB a
    worker, 300 MiB the master at N = 84) is far below what its node advertises."""
    total_kib = next(
        int(line.split()[1])
        for line in Path("/proc/meminfo").read_text().splitlines()
        if line.startswith("MemTotal:")
    )
    usable = total_kib // 1024 - 1024
    head = max(HEAD_NODE_MIB, usable // nodes)
    workers = max(cpus * NODE_MIB_PER_CPU, (usable - head) // max(1, nodes - 1))
    return head, workers


def slurm_conf(spec: ClusterSpec, memory_mib: tuple[int, int]) -> str:
    """The slurm.conf of the cluster (one partition of every node, the master's first);
    ``memory_mib``: what the master's node and each worker's node advertise."""
    master = spec.master
    nodes = ",".join(node.name for node in spec.nodes)
    lines = [
        "# Emulated multi-node cluster (written by gradcode cluster up; removed by down).",
        "ClusterName=gradcode-cluster",
        # the hostname slurmctld runs under (its node's UTS namespace) and its address
        f"SlurmctldHost={master.name}({master.address})",
        "AuthType=auth/munge",
        # no cgroups in a namespace-only node: processes are tracked by parentage
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "MpiDefault=none",
        "ReturnToService=2",
        f"SlurmctldPidFile={RUN_DIR}/slurmctld.pid",
        f"SlurmdPidFile={RUN_DIR}/slurmd.%n.pid",
        f"SlurmdSpoolDir={SPOOL}/slurmd/%n",
        f"StateSaveLocation={SPOOL}/slurmctld",
        "SlurmUser=slurm",
        "SlurmdUser=root",
        f"SlurmctldLogFile={LOGS}/slurmctld.log",
        f"SlurmdLogFile={LOGS}/slurmd.%n.log",
        f"TaskProlog={TASK_PROLOG}",
        # accounting off: the executor plugin polls squeue, which sees jobs for MinJobAge s
        "AccountingStorageType=accounting_storage/none",
        "JobAcctGatherType=jobacct_gather/none",
        "JobCompType=jobcomp/none",
        "MinJobAge=300",
        "SchedulerType=sched/backfill",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core_Memory",
        # every node shares the host's cores: advertise what the spec says, not what it finds
        "SlurmdParameters=config_overrides",
        # daemons and steps find each other by address (no node name resolves on the host)
        "CommunicationParameters=NoAddrCache",
        *dilated_timers(spec.dilation),
    ]
    for node in spec.nodes:
        lines.append(
            f"NodeName={node.name} NodeAddr={node.address} NodeHostname={node.name} "
            f"CPUs={spec.cpus} RealMemory={memory_mib[0 if node.master else 1]} "
            "State=UNKNOWN"
        )
    lines.append(
        f"PartitionName={PARTITION} Nodes={nodes} Default=YES MaxTime=INFINITE State=UP "
        "OverSubscribe=YES"
    )
    return "\n".join(lines) + "\n"


#: SLURM's timers whose messages cross the links, at their defaults (slurm.conf(5)): a round
#: trip, a connection's set-up, and how long a node may stay silent before it counts as down
LINK_TIMERS = {"MessageTimeout": 10, "TCPTimeout": 2, "SlurmdTimeout": 300}


def dilated_timers(dilation: int) -> list[str]:
    """SLURM's link timers ``dilation`` times their defaults (none on an undilated cluster):
    the daemons talk over the nodes' links, which a dilated cluster makes ``dilation`` times
    slower and whose queues it makes as much deeper. With the defaults, slurmctld's pings to 156
    nodes whose master's link UMW kept busy (a 160 s queue at K = 64) all timed out, and the
    whole cluster went DOWN in the middle of the run (docs/measurements/fidelity.md)."""
    if dilation == 1:
        return []
    return [f"{name}={seconds * dilation}" for name, seconds in LINK_TIMERS.items()]


def task_prolog() -> str:
    """The task prolog: one JSON line per task saying where it runs."""
    fields = ("job", "step", "rank", "nodeid", "nodename", "hostname", "netns")
    template = "{" + ", ".join(f'\\"{f}\\": \\"%s\\"' for f in fields) + "}\\n"
    return (
        "#!/bin/sh\n"
        "# Written by gradcode cluster up: where each task of a step ran (gradcode.cluster.slurm)\n"
        f'printf "{template}" "$SLURM_JOB_ID" "$SLURM_STEP_ID" "$SLURM_PROCID" '
        '"$SLURM_NODEID" "$SLURMD_NODENAME" "$(hostname)" "$(stat -L -c %i /proc/self/ns/net)" '
        f'> "{RANKS}/$SLURM_JOB_ID.$SLURM_STEP_ID.$SLURM_PROCID.json" 2>/dev/null\n'
        "exit 0\n"
    )


def require_slurm() -> None:
    missing = [daemon for daemon in DAEMONS if not Path(daemon).exists()]
    if missing or shutil.which("sinfo") is None:
        raise ClusterError(
            f"SLURM or munge is not installed ({', '.join(missing) or 'sinfo'} missing): "
            "apt-get install slurmctld slurmd slurm-client munge (.ci/cluster-smoke does)"
        )


def live_pids(name: str) -> list[int]:
    """Live processes named ``name`` (exited ones the init process has not reaped yet, state
    Z, hold no port or file and do not count)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        comm, rest = text[text.index("(") + 1 : text.rindex(")")], text[text.rindex(")") + 2 :]
        if comm == name and not rest.startswith("Z"):
            found.append(int(stat.parent.name))
    return found


def _daemon(
    state: State, name: str, argv: list[str], log: Path, env: dict[str, str] | None = None
) -> None:
    """Start a daemon in the foreground, detached (its own session), recorded in ``state``."""
    entry = state.record("daemon", name=name)
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as out:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env=env,
        )
    state.update(entry, pid=process.pid, argv=argv)


def start_slurm(spec: ClusterSpec, state: State) -> None:
    """munged (unless one runs), slurm.conf, slurmctld on the master's node, a slurmd per node."""
    require_slurm()
    other = [pid for name in ("slurmctld", "slurmd") for pid in live_pids(name)]
    if other:
        raise ClusterError(
            f"a SLURM daemon not made by this cluster is running (pids {other}): stop it first "
            "(.ci/slurm-down for the single-node CI cluster)"
        )
    if not live_pids("munged"):
        if not MUNGE_KEY.exists():
            MUNGE_KEY.parent.mkdir(parents=True, exist_ok=True)
            MUNGE_KEY.write_bytes(Path("/dev/urandom").open("rb").read(1024))
        shutil.chown(MUNGE_KEY, "munge", "munge")
        MUNGE_KEY.chmod(0o400)
        Path("/run/munge").mkdir(parents=True, exist_ok=True)
        shutil.chown("/run/munge", "munge", "munge")
        _daemon(
            state,
            "munged",
            [
                "setpriv",
                "--reuid=munge",
                "--regid=munge",
                "--init-groups",
                "/usr/sbin/munged",
                "--foreground",
            ],
            LOGS / "munged.out",
        )
        _wait_for(lambda: Path("/run/munge/munge.socket.2").exists(), 10, "munged to start")

    backup = RUN_DIR / "slurm.conf.before"
    entry = state.record("slurm.conf", path=str(SLURM_CONF))
    if "backup" not in entry:
        saved = SLURM_CONF.exists()
        if saved:
            shutil.copy2(SLURM_CONF, backup)
        state.update(entry, backup=str(backup) if saved else None)
    state.record("dir", path=str(SPOOL))
    for folder in (SPOOL / "slurmctld", LOGS, RANKS):
        folder.mkdir(parents=True, exist_ok=True)
    shutil.chown(SPOOL / "slurmctld", "slurm", "slurm")
    shutil.chown(LOGS, "slurm", "slurm")
    RANKS.chmod(0o1777)
    TASK_PROLOG.write_text(task_prolog())
    TASK_PROLOG.chmod(0o755)
    SLURM_CONF.parent.mkdir(parents=True, exist_ok=True)
    SLURM_CONF.write_text(slurm_conf(spec, node_memory(len(spec.nodes), spec.cpus)))

    master = spec.master.name
    _daemon(
        state,
        "slurmctld",
        [*enter(master), "/usr/sbin/slurmctld", "-D", "-i"],
        LOGS / "slurmctld.out",
    )
    for node in spec.nodes:
        start_slurmd(state, node.name)
    _wait_for(lambda: _all_idle(spec), 60, "every node to be idle in sinfo")


def start_slurmd(state: State, node: str) -> None:
    """``node``'s slurmd, started (again, after the node was lost: its entry in ``state``
    gets the new pid). Its environment has no ``SLURM_*`` variable: started from inside a
    job (``gradcode cluster lose --return``), it must not take the job's for its own."""
    (SPOOL / "slurmd" / node).mkdir(parents=True, exist_ok=True)
    environment = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
    _daemon(
        state,
        f"slurmd {node}",
        [*enter(node), "/usr/sbin/slurmd", "-D", "-N", node],
        LOGS / f"slurmd.{node}.out",
        environment,
    )


def uses_slurm(state: State) -> bool:
    """Whether the cluster was brought up with SLURM (not ``--no-slurm``)."""
    return any(
        entry["kind"] == "daemon" and entry.get("name") == "slurmctld" for entry in state.resources
    )


def scontrol(spec: ClusterSpec, *arguments: str) -> str:
    """``scontrol ARGUMENTS`` on the master's node (where slurmctld answers); its output."""
    return run([*enter(spec.master.name), "scontrol", *arguments], timeout=30)


def wait_idle(spec: ClusterSpec, node: str, seconds: float = 60) -> None:
    """Until SLURM has ``node`` idle again; ``ClusterError`` after ``seconds``."""
    _wait_for(lambda: node_states(spec).get(node) == "idle", seconds, f"{node} to be idle")


def node_states(spec: ClusterSpec) -> dict[str, str]:
    """SLURM's state of every node (``sinfo -N`` on the master's node); empty if unreachable."""
    try:
        out = run([*enter(spec.master.name), "sinfo", "-h", "-N", "-o", "%N %T"], timeout=15)
    except ClusterError:
        return {}
    return dict(line.split(None, 1) for line in out.splitlines() if line.strip())


def _all_idle(spec: ClusterSpec) -> bool:
    states = node_states(spec)
    return len(states) == len(spec.nodes) and all(s == "idle" for s in states.values())


def _wait_for(ready, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if ready():
            return
        time.sleep(0.5)
    raise ClusterError(f"gave up waiting {seconds:g} s for {what}; logs in {LOGS}")


def restore_conf(entry: dict) -> None:
    """Put back the slurm.conf that was there before ``up`` (or remove ours)."""
    backup = entry.get("backup")
    if backup and Path(backup).exists():
        shutil.move(backup, entry["path"])
    elif "backup" in entry:
        Path(entry["path"]).unlink(missing_ok=True)
