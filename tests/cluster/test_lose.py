"""``gradcode cluster lose``, the cluster's fault-tolerant launcher and the rank that moves to
its node, without a cluster (the real node loss is in .ci/cluster-smoke: root, SLURM). Signals
during the command are ``gradcode.cluster.during.command``'s, tested through ``cut``
(test_cut.py)."""

from __future__ import annotations

import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

from gradcode.cluster.during.command import complete_lines
from gradcode.cluster.faults import lose
from gradcode.cluster.faults.lose import LoseError, kill_node, plan_lose, run_lose, sysctl_command
from gradcode.cluster.mpi import noderank, ulfm
from tests.helpers.runlog import log_writer

NODES = ["gc-node0", "gc-node1", "gc-node2", "gc-node3"]


@pytest.mark.parametrize(
    ("args", "kwargs", "message"),
    [
        (("", "kill"), {"after": 0}, "NODE"),
        (("gc-node3", "melt"), {"after": 0}, "--kill"),
        (("gc-node3", "kill"), {}, "exactly one"),
        (("gc-node3", "link"), {"after": -1}, "--after"),
        (("gc-node3", "kill"), {"at_iteration": 0, "log": "x"}, "--at-iteration"),
        (("gc-node3", "kill"), {"at_iteration": 3}, "needs --log"),
        (("gc-node3", "link"), {"after": 1, "tcp_retries": 0}, "--tcp-retries"),
    ],
)
def test_a_bad_loss_is_one_line_naming_the_option(args, kwargs, message):
    with pytest.raises(LoseError, match=message):
        plan_lose(*args, **kwargs)


def test_a_rank_names_the_node_gradcode_cluster_ulfm_puts_it_on():
    assert plan_lose(None, "kill", after=0, rank=3, nodes=NODES).node == "gc-node3"
    assert plan_lose(None, "link", after=0, rank=2, nodes=["gc-node4", "gc-node7", "gc-node9"])
    with pytest.raises(LoseError, match="rank 0 is the master"):
        plan_lose(None, "kill", after=0, rank=0, nodes=NODES)
    with pytest.raises(LoseError, match="or --rank"):
        plan_lose("gc-node3", "kill", after=0, rank=3, nodes=NODES)
    with pytest.raises(LoseError, match="or --rank"):
        plan_lose(None, "kill", after=0)


def test_return_gives_the_node_back_after_the_command_and_records_it(tmp_path):
    log, record = tmp_path / "log.jsonl", tmp_path / "lost.json"
    events = []

    def give_back(plan):
        events.append(("back", plan.node, complete_lines(log)))
        return {"back": {"clock": 1.0}}

    status = run_lose(
        plan_lose(None, "link", at_iteration=2, log=log, rank=1, nodes=NODES),
        ["sh", "-c", shlex.join(log_writer(log)) + "; exit 3"],
        record,
        nodes=NODES,
        set_link=lambda node, state: events.append((state, node)),
        sysctl=lambda node, value=None: 15,
        give_back=give_back,
    )
    assert status == 3  # the command's (an uncoded run that stopped)
    assert events == [("down", "gc-node1"), ("back", "gc-node1", 6)]  # after the whole run
    done = json.loads(record.read_text())
    assert done["rank"] == 1 and done["returned"] == {"back": {"clock": 1.0}}
    # a command that ends before the trigger lost nothing, so nothing comes back
    events.clear()
    run_lose(
        plan_lose("gc-node1", "kill", after=30),
        [sys.executable, "-c", "pass"],
        record,
        kill=lambda node: events.append(node) or [],
        give_back=give_back,
    )
    assert events == [] and "returned" not in json.loads(record.read_text())


def test_the_relay_carries_nothing_while_the_nodes_link_is_down():
    class Link:
        state = True
        # set once the relay has looked at the link and found it down: from then on it
        # carries nothing (a fixed wait for that was a race at nice 19 on a busy machine)
        seen_down = threading.Event()

        def up(self):
            if not self.state:
                self.seen_down.set()
            return self.state

    link = Link()
    server, inner, port = _relay_ends()
    relay = threading.Thread(target=noderank.relay, args=([(inner, port)], link), daemon=True)
    relay.start()
    rank = socket.create_connection(("127.0.0.2", port))
    launcher, _ = server.accept()
    rank.sendall(b"before")
    assert launcher.recv(16) == b"before"
    link.state = False
    assert link.seen_down.wait(30)
    rank.sendall(b"cut off")
    launcher.settimeout(0.5)
    with pytest.raises(TimeoutError):
        launcher.recv(16)
    link.state = True
    launcher.settimeout(5)
    assert launcher.recv(16) == b"cut off"
    rank.close()
    relay.join(timeout=5)
    assert not relay.is_alive()
    launcher.close()
    # down for longer than the lifeline: the rank is given up, the relay ends
    lost = []
    relay = threading.Thread(
        target=noderank.relay,
        args=([(inner, port)], link, 0.3, lambda: lost.append(time.monotonic())),
        daemon=True,
    )
    relay.start()
    rank = socket.create_connection(("127.0.0.2", port))
    launcher, _ = server.accept()
    link.state = False
    began = time.monotonic()
    relay.join(timeout=5)
    assert not relay.is_alive() and len(lost) == 1 and lost[0] - began >= 0.3
    for sock in (rank, launcher, server, inner):
        sock.close()


def test_kill_node_kills_every_process_of_the_node_until_none_is_left():
    children = [
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]) for _ in range(2)
    ]
    pids = [child.pid for child in children]
    try:
        killed = kill_node("gc-node9", pids=lambda node: [p for p in pids if _running(p)])
        assert sorted(entry["pid"] for entry in killed) == sorted(pids)
        assert all(child.wait(timeout=5) == -signal.SIGKILL for child in children)
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()


def _running(pid: int) -> bool:
    return lose._running(pid)


def test_a_kill_at_an_iteration_during_a_command_records_the_moment(tmp_path):
    log = tmp_path / "log.jsonl"
    killed = []
    record = tmp_path / "lose.json"
    status = run_lose(
        plan_lose("gc-node3", "kill", at_iteration=3, log=log),
        log_writer(log),
        record,
        nodes=NODES,
        kill=lambda node: killed.append(node) or [{"pid": 1, "name": "x"}],
    )
    assert status == 0 and killed == ["gc-node3"]
    done = json.loads(record.read_text())
    assert done["how"] == "kill" and done["killed"] == [{"pid": 1, "name": "x"}]
    assert done["lost"]["log_lines"] >= 3 and done["done"]["clock"] >= done["lost"]["clock"]
    assert done["trigger"] == {"at_iteration": 3, "log": str(log)}
    assert complete_lines(log) == 6


def test_a_link_loss_lowers_the_others_tcp_retries_while_the_command_runs(tmp_path):
    calls = []
    values = {node: 15 for node in NODES}

    def sysctl(node, value=None):
        calls.append((node, value))
        if value is None:
            return values[node]
        values[node] = value
        return None

    links = []
    status = run_lose(
        plan_lose("gc-node2", "link", after=0, tcp_retries=4),
        [sys.executable, "-c", "import time; time.sleep(0.2)"],
        tmp_path / "lose.json",
        nodes=NODES,
        set_link=lambda node, state: links.append((node, state)),
        sysctl=sysctl,
    )
    assert status == 0 and links == [("gc-node2", "down")]  # and never up again
    assert ("gc-node2", 4) not in calls and ("gc-node1", 4) in calls
    assert values == {node: 15 for node in NODES}  # put back
    done = json.loads((tmp_path / "lose.json").read_text())
    assert done["tcp_retries2"]["during"] == 4 and done["tcp_retries2"]["before"]["gc-node0"] == 15


def test_a_command_that_ends_first_loses_nothing():
    killed = []
    status = run_lose(
        plan_lose("gc-node1", "kill", after=30),
        [sys.executable, "-c", "raise SystemExit(3)"],
        None,
        kill=lambda node: killed.append(node) or [],
    )
    assert status == 3 and killed == []


def test_the_sysctl_runs_in_the_node_namespace():
    assert sysctl_command("gc-node1") == [
        "nsenter",
        "--net=/run/netns/gc-node1",
        "--",
        "sysctl",
        "-n",
        "net.ipv4.tcp_retries2",
    ]
    assert sysctl_command("gc-node1", 5)[-3:] == ["-q", "-w", "net.ipv4.tcp_retries2=5"]


def test_each_rank_goes_to_its_node_and_the_pmix_ports_are_found():
    assert [noderank.node_of(r, NODES) for r in range(6)] == [*NODES, NODES[0], NODES[1]]
    environ = {
        "PMIX_SERVER_URI4": "prterun-x@0.0;tcp4://127.0.0.1:43451",
        "PMIX_SERVER_URI41": "prterun-x@0.0;tcp4://127.0.0.1:43451",
        "PMIX_SERVER_URI2": "prterun-x@0.0;tcp4://127.0.0.1:40000",
        "OTHER": "tcp4://127.0.0.1:1",
    }
    assert noderank.server_ports(environ) == {43451, 40000}
    assert noderank.rank_of({"OMPI_COMM_WORLD_RANK": "3"}) == 3
    assert noderank.rank_of({"PMIX_RANK": "2"}) == 2
    with pytest.raises(SystemExit):
        noderank.rank_of({})


def _relay_ends() -> tuple[socket.socket, socket.socket, int]:
    """The launcher's PMIx server (listening on 127.0.0.1) and the rank's side, listening at
    the same port in its node; here: another loopback address."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]
    inner = socket.socket()
    inner.bind(("127.0.0.2", port))
    inner.listen(1)
    return server, inner, port


def test_the_relay_carries_a_connection_both_ways_and_ends_with_it():
    server, inner, port = _relay_ends()
    relay = threading.Thread(target=noderank.relay, args=([(inner, port)],), daemon=True)
    relay.start()
    client = socket.create_connection(("127.0.0.2", port))
    accepted, _ = server.accept()
    client.sendall(b"ping")
    assert accepted.recv(4) == b"ping"
    accepted.sendall(b"pong")
    assert client.recv(4) == b"pong"
    client.close()
    relay.join(timeout=5)
    assert not relay.is_alive()
    for sock in (server, inner, accepted):
        sock.close()


def test_the_launcher_line_moves_every_rank_and_beats():
    line = ulfm.command(NODES, 4, ["python", "-m", "gradcode.train", "run.yaml"])
    moved = ["-m", "gradcode.cluster.mpi.noderank", "--nodes", ",".join(NODES), "--lifeline", "5"]
    assert line[-11:-4] == [*moved, "--"]
    longer = ulfm.command(NODES, 4, ["x"], period=1.0, timeout=4.0)
    assert longer[longer.index("--lifeline") + 1] == "8"  # twice the heartbeat timeout
    text = " ".join(line)
    assert "--with-ft ulfm" in text and "btl_tcp_if_include gc-veth" in text
    assert "mpi_ft_detector true" in text and "mpi_ft_detector_thread false" in text
    with pytest.raises(ValueError, match="3 periods"):
        ulfm.mca(period=1.0, timeout=2.0)
    env = ulfm.environment({"PATH": os.environ.get("PATH", "")})
    assert env["PRTE_MCA_ras"] == "^slurm" and env["MPI4PY_MPIABI"] == "openmpi"
