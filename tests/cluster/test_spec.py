"""The cluster spec and what is generated from it (no root needed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from gradcode.cluster.mpi.hydra import MPICH_ENV, launcher_script, mpiexec_command
from gradcode.cluster.network.namespaces import neighbour_batch, node_mac, rto_min_command, tbf
from gradcode.cluster.slurm import node_memory, slurm_conf, task_prolog
from gradcode.cluster.spec import (
    ClusterSpec,
    ClusterSpecError,
    build_spec,
    format_limit,
    limit_bits,
    parse_limit,
    parse_node_rate,
)
from gradcode.errors import UserError
from gradcode.rate import Rate


def mbit(count: float) -> Rate:
    return Rate.from_bits(count * 10**6)


def test_limits_parse_and_format():
    assert parse_limit("100mbit", "rate") == Rate.from_bits(100_000_000)
    assert parse_limit("1gbit", "rate") == Rate.from_bits(10**9)
    assert parse_limit("2.5Mbit", "rate") == Rate.from_bits(2_500_000)
    assert parse_limit("12.5MB/s", "rate") == Rate.from_bits(100_000_000)
    assert parse_limit("none", "rate") is None
    assert parse_limit("unlimited", "rate") is None
    assert parse_limit(None, "rate") is None
    assert format_limit(Rate.from_bits(100_000_000)) == "100mbit"
    assert format_limit(None) == "unlimited"
    assert format_limit(Rate.from_bits(1_500_000)) == "1500kbit"
    assert limit_bits(Rate.from_bits(1_500_000)) == 1_500_000 and limit_bits(None) is None


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("fast", "expected a rate"),
        ("100MB", "unknown rate unit"),
        ("100mbps", "ambiguous: write 100mbit .* or 100MB/s"),
        ("100Mbps", "ambiguous: write 100mbit .* or 100MB/s"),
        (50_000, "has no unit: write 50000bit .* or 50000B/s"),
        ("50000", "has no unit"),
        (0, "write none for an unlimited link"),
        ("0", "write none for an unlimited link"),
        (-5, "must be finite and > 0"),
        ("1kbit", "below 8kbit"),
        ("1000.1B/s", "whole bits per second"),
        (True, "expected a rate"),
    ],
)
def test_bad_rates_are_one_line_errors_naming_the_option(value, says):
    with pytest.raises(ClusterSpecError, match=says) as caught:
        parse_limit(value, "egress")
    assert str(caught.value).startswith("egress: ")
    assert "\n" not in str(caught.value)


def test_spec_nodes_addresses_and_rates():
    spec = build_spec({"nodes": 5, "rate": "100mbit", "master_rate": "50mbit"})
    assert [n.name for n in spec.nodes] == [f"gc-node{i}" for i in range(5)]
    assert [n.address for n in spec.nodes] == [f"10.251.0.{10 + i}" for i in range(5)]
    assert spec.master.master and (spec.master.egress, spec.master.ingress) == (mbit(50),) * 2
    assert all((n.egress, n.ingress) == (mbit(100), mbit(100)) for n in spec.nodes[1:])
    assert spec.prefixlen == 24
    assert ClusterSpec.from_dict(spec.as_dict()) == spec
    # the state file keeps whole bits per second, as it always has
    assert spec.as_dict()["nodes"][1]["egress"] == 100_000_000


def test_directions_are_separate_and_the_master_defaults_to_the_workers():
    spec = build_spec({"nodes": 2, "egress": "10mbit", "ingress": "20mbit"})
    assert (spec.master.egress, spec.master.ingress) == (mbit(10), mbit(20))
    spec = build_spec({"nodes": 3, "rate": "1gbit", "master_ingress": "300mbit"})
    assert (spec.master.egress, spec.master.ingress) == (mbit(1000), mbit(300))
    assert spec.nodes[1].ingress == mbit(1000)


def test_per_node_rates_override_the_role_rates():
    spec = build_spec(
        {
            "nodes": 4,
            "rate": "100mbit",
            "node_rates": {"gc-node2": "10mbit", "gc-node3": {"ingress": "20mbit"}},
        }
    )
    assert [(n.egress, n.ingress) for n in spec.nodes] == [
        (mbit(100), mbit(100)), (mbit(100), mbit(100)), (mbit(10), mbit(10)),
        (mbit(100), mbit(20)),
    ]  # fmt: skip
    assert parse_node_rate("gc-node1=5mbit/1mbit") == (
        "gc-node1", {"egress": "5mbit", "ingress": "1mbit"},
    )  # fmt: skip
    # a rate's own /s stays with it
    assert parse_node_rate("gc-node1=5MB/s/1mbit") == (
        "gc-node1", {"egress": "5MB/s", "ingress": "1mbit"},
    )  # fmt: skip
    assert parse_node_rate("gc-node1=5MB/s") == (
        "gc-node1", {"egress": "5MB/s", "ingress": "5MB/s"},
    )  # fmt: skip
    with pytest.raises(ClusterSpecError, match="--node-rate gc-node1=5mbps: '5mbps' is ambig"):
        parse_node_rate("gc-node1=5mbps")
    with pytest.raises(ClusterSpecError, match="expected NODE=RATE or NODE=EGRESS/INGRESS"):
        parse_node_rate("gc-node1=5mbit/1mbit/2mbit")


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"nodes": 2, "node_rates": {"gc-node5": "1mbit"}}, "no node 'gc-node5' in a 2-node"),
        ({"nodes": 2, "node_rates": {"gc-node1": {"up": "1mbit"}}}, "expected egress and/or"),
        ({"nodes": 2, "node_rates": ["gc-node1"]}, "node_rates must map"),
        ({"nodes": 2, "node_rates": {"gc-node1": "slow"}}, "node_rates.gc-node1: expected"),
        ({"nodes": 2, "node_rates": {"gc-node1": {"egress": "1mbps"}}}, "gc-node1.egress: '1m"),
        ({"nodes": 1}, "nodes must be an integer from 2"),
        ({"nodes": "4"}, "nodes must be an integer"),
        ({"subnet": "8.8.8.0/24"}, "not a private IPv4 range"),
        ({"subnet": "10.0.0.1/24"}, "subnet: "),
        ({"subnet": "fd00::/64"}, "not a private IPv4 range"),
        ({"subnet": "10.9.9.0/29", "nodes": 3}, "too small"),
        ({"nodes": 3, "speed": "1gbit"}, "unknown cluster option"),
        ({"cpus": 0}, "cpus must be"),
    ],
)
def test_bad_specs_are_refused_in_one_line(options, says):
    with pytest.raises(UserError, match=says) as caught:
        build_spec(options)
    assert "\n" not in str(caught.value)


def test_tbf_bucket_holds_half_a_millisecond_and_at_least_four_frames():
    assert tbf(mbit(100))[:6] == ["tbf", "rate", "100000000bit", "burst", "6250", "latency"]
    assert tbf(mbit(1000))[4] == "62500"
    assert tbf(mbit(10))[4] == str(4 * 1514)
    assert tbf(Rate.parse("12.5MB/s", "rate")) == tbf(mbit(100))


def test_slurm_conf_has_every_node_by_address_and_the_controller_on_the_master():
    spec = build_spec({"nodes": 4, "cpus": 2})
    conf = slurm_conf(spec, (4096, 1000))
    assert "SlurmctldHost=gc-node0(10.251.0.10)" in conf
    for node in spec.nodes:
        memory = 4096 if node.master else 1000
        assert (
            f"NodeName={node.name} NodeAddr={node.address} NodeHostname={node.name} "
            f"CPUs=2 RealMemory={memory} " in conf
        )
    assert "Nodes=gc-node0,gc-node1,gc-node2,gc-node3 Default=YES" in conf
    # per-node files (one slurmd per node on one machine) and the task prolog
    for key in ("SlurmdSpoolDir=", "SlurmdPidFile=", "SlurmdLogFile="):
        assert "%n" in next(line for line in conf.splitlines() if line.startswith(key))
    assert "TaskProlog=" in conf
    # an undilated cluster keeps SLURM's own timers
    assert "MessageTimeout" not in conf and "SlurmdTimeout" not in conf


def test_a_dilated_clusters_slurm_waits_as_many_times_longer_for_its_links():
    conf = slurm_conf(build_spec({"nodes": 3, "dilation": 64}), (4096, 1000)).splitlines()
    for line in ("MessageTimeout=640", "TCPTimeout=128", "SlurmdTimeout=19200"):
        assert line in conf


@pytest.mark.parametrize("nodes", [2, 9, 21, 85, 157])
def test_the_head_node_has_room_for_single_node_jobs_and_every_node_for_a_rank(nodes):
    head, workers = node_memory(nodes, cpus=4)
    assert head >= 4096 >= 2000  # the slurm profiles' default mem_mb
    # a training job takes its nodes whole: all 4 CPUs times its memory per CPU, which an
    # N = 84 run asks 512 MiB of, its retries 640 and 896
    assert workers >= 4 * 896
    total = int(Path("/proc/meminfo").read_text().split()[1]) // 1024
    if head + workers * (nodes - 1) > total:  # overcommitted only by the floors
        assert workers == 4 * 1152


def test_task_prolog_writes_one_json_record(tmp_path):
    script = task_prolog().replace("/run/gradcode-cluster/ranks", str(tmp_path))
    env = {
        "PATH": "/usr/bin:/bin",
        "SLURM_JOB_ID": "7",
        "SLURM_STEP_ID": "0",
        "SLURM_PROCID": "3",
        "SLURM_NODEID": "2",
        "SLURMD_NODENAME": "gc-node2",
    }
    subprocess.run(["sh", "-c", script], env=env, check=True)
    import json

    record = json.loads((tmp_path / "7.0.3.json").read_text())
    assert record["rank"] == "3" and record["nodename"] == "gc-node2"
    assert int(record["netns"]) > 0


def test_launcher_runs_the_command_in_the_named_node_only(tmp_path):
    spec = build_spec({"nodes": 3})
    script = launcher_script(spec)
    assert "gc-node0|gc-node1|gc-node2)" in script
    # an unknown host is refused before anything is entered
    path = tmp_path / "launch"
    path.write_text(script)
    done = subprocess.run(
        ["sh", str(path), "-x", "-o", "BatchMode=yes", "elsewhere", "true"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 255 and "unknown node 'elsewhere'" in done.stderr


def test_mpiexec_command_pins_tcp_and_the_node_interface():
    spec = build_spec({"nodes": 3})
    argv = mpiexec_command(spec, 3, ["python", "-c", "pass"], mpiexec="/x/mpiexec")
    assert argv[:7] == [
        "/x/mpiexec",
        "-launcher",
        "ssh",
        "-launcher-exec",
        "/run/gradcode-cluster/launch",
        "-iface",
        "gc-veth",
    ]
    assert argv[argv.index("-hosts") + 1] == "gc-node0,gc-node1,gc-node2"
    assert dict(argv[i + 1 : i + 3] for i, word in enumerate(argv) if word == "-genv") == MPICH_ENV
    assert argv[-5:] == ["-n", "3", "python", "-c", "pass"]


def test_cli_refuses_a_bad_node_rate_in_one_line():
    done = subprocess.run(
        [sys.executable, "-m", "gradcode", "cluster", "up", "--node-rate", "gc-node1"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 2 and "expected NODE=RATE" in done.stderr
    assert done.stderr.strip().count("\n") == 0


@pytest.mark.parametrize(
    ("option", "value"), [("--rate", "100mbps"), ("--master-egress", "100"), ("--ingress", "1Mb/s")]
)
def test_cli_refuses_an_ambiguous_rate_in_one_line_naming_the_option(option, value):
    done = subprocess.run(
        [sys.executable, "-m", "gradcode", "cluster", "up", option, value],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 2 and done.stderr.strip().count("\n") == 0
    assert f"{option}: '{value}'" in done.stderr
    assert "bit/s)" in done.stderr and "bytes per second)" in done.stderr  # both readings


def test_a_spec_files_bad_rate_names_the_file_and_the_key(tmp_path):
    spec = tmp_path / "cluster.yaml"
    spec.write_text("nodes: 3\nrate: 100mbit\nmaster_rate: 200mbps\n")
    done = subprocess.run(
        [sys.executable, "-m", "gradcode", "cluster", "up", "--spec", str(spec)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 2 and done.stderr.strip().count("\n") == 0
    assert f"{spec}: master_rate: '200mbps' is ambiguous: write 200mbit" in done.stderr


def test_a_mismatch_between_stated_and_actual_links_names_both_rates():
    spec = build_spec({"nodes": 3, "rate": "100mbit", "master_rate": "200mbit"})
    assert spec.link_mismatch(mbit(100), mbit(200)) is None
    # the same rates spelt in bytes
    assert spec.link_mismatch(Rate.parse("12.5MB/s", "r"), Rate.parse("25MB/s", "r")) is None
    said = spec.link_mismatch(mbit(800), mbit(200))
    assert said == (
        "network.links.rate states 800mbit, but the emulated cluster that is up has "
        "gc-node1's egress at 100mbit; 3 more link directions differ"
    )
    said = spec.link_mismatch(mbit(100), mbit(100))
    assert "network.links.master_rate states 100mbit" in said and "egress at 200mbit" in said
    slow = build_spec({"nodes": 3, "rate": "100mbit", "node_rates": {"gc-node2": "none"}})
    assert "gc-node2's egress at unlimited" in slow.link_mismatch(mbit(100), mbit(100))


def test_cli_refuses_a_bad_option_in_one_line():
    done = subprocess.run(
        [sys.executable, "-m", "gradcode", "cluster", "up", "--nodes", "1"],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0
    assert "nodes must be an integer from 2" in done.stderr


def test_every_node_gets_a_permanent_neighbour_entry_for_every_other_node():
    spec = build_spec({"nodes": 4})
    node1 = spec.nodes[1]
    lines = neighbour_batch(spec, node1).splitlines()
    assert len(lines) == 3
    assert all(line.endswith("dev gc-veth nud permanent") for line in lines)
    assert not any(f" {node1.address} " in line for line in lines)
    macs = {node_mac(node) for node in build_spec({"nodes": 200}).nodes}
    assert len(macs) == 200
    assert node_mac(spec.nodes[0]) == "02:67:63:00:00:00"
    assert node_mac(spec.nodes[3]) == "02:67:63:00:00:03"


def test_a_dilated_cluster_enforces_rates_k_times_lower_and_latencies_k_times_longer():
    asked = {"nodes": 3, "rate": "100mbit", "master_rate": "400mbit", "latency": "2ms"}
    spec = build_spec(asked | {"dilation": 4})
    assert spec.dilation == 4
    assert spec.nodes[1].egress == mbit(25) and spec.nodes[1].ingress == mbit(25)
    assert spec.master.egress == mbit(100)
    assert spec.nodes[2].latency.nanoseconds == 8_000_000
    # what the runs see is what was asked
    assert spec.virtual() == build_spec(asked)
    assert ClusterSpec.from_dict(spec.as_dict()) == spec
    assert "dilation" not in build_spec(asked).as_dict()  # undilated state files unchanged


def test_a_link_s_queue_bound_is_asked_once_enforced_times_k_and_read_back():
    """tbf drops what waits longer than the queue bound: at N = 156 the tree's incast lost
    packets at the default 100 ms and not at 400 ms (docs/measurements/fidelity.md)."""
    asked = {"nodes": 3, "rate": "100mbit"}
    plain = build_spec(asked)
    assert str(plain.queue) == "100ms"
    assert tbf(mbit(100), plain.enforced_queue_us)[5:] == ["latency", "100000us"]
    assert "queue_ns" not in plain.as_dict()  # default state files unchanged
    deep = build_spec(asked | {"queue": "400ms", "dilation": 4})
    assert str(deep.queue) == "400ms" and deep.enforced_queue_us == 1_600_000
    assert deep.virtual().queue == deep.queue
    assert ClusterSpec.from_dict(deep.as_dict()) == deep
    # a dilated default keeps the undilated link's bytes, as before the bound could be asked
    assert build_spec(asked | {"dilation": 4}).enforced_queue_us == 400_000
    old = build_spec(asked | {"dilation": 4}).as_dict()
    assert "queue_ns" not in old and ClusterSpec.from_dict(old).enforced_queue_us == 400_000
    # longer than a Duration holds once dilated: tc takes it in microseconds
    assert build_spec(asked | {"queue": "2500ms", "dilation": 64}).enforced_queue_us == 160e6
    for bad, says in (("0.5ms", "outside 1ms .. 10s"), ("20s", "outside"), ("fast", "duration")):
        with pytest.raises(ClusterSpecError, match=f"--queue: .*{says}"):
            build_spec(asked | {"queue": bad}, {"queue": "--queue"})


def test_a_dilated_node_s_route_floors_tcp_s_time_out_k_times_higher():
    spec = build_spec({"nodes": 3, "subnet": "10.9.8.0/24", "dilation": 64})
    assert rto_min_command(spec, spec.nodes[2]) == [
        *("ip", "-n", "gc-node2", "route", "change", "10.9.8.0/24", "dev", "gc-veth"),
        *("proto", "kernel", "scope", "link", "src", "10.9.8.12", "rto_min", "12800ms"),
    ]


def test_a_dilation_that_leaves_no_whole_bit_rate_is_refused_naming_the_option():
    with pytest.raises(ClusterSpecError, match=r"--dilation: gc-node0's egress: 100mbit .* 3"):
        build_spec({"nodes": 2, "rate": "100mbit", "dilation": 3}, {"dilation": "--dilation"})
    with pytest.raises(ClusterSpecError, match="dilation must be an integer from 1 to 128"):
        build_spec({"nodes": 2, "dilation": 2.5})
    with pytest.raises(ClusterSpecError, match="exceeds"):
        build_spec({"nodes": 2, "latency": "100ms", "dilation": 20})
