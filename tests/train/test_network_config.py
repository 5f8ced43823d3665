"""The run file's ``network:`` section: real links, nothing of the communication emulated
(no MPI needed here)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gradcode.codes import build
from gradcode.runfile.config import ConfigError, LinksConfig, load_config, parse_config
from gradcode.runfile.plan import build_plan
from gradcode.runlogs.timings import link_floor, node_work, predicted_links_time
from gradcode.timing.links import PAYLOAD_FRACTION
from gradcode.train.node import summarize_ranks
from gradcode.train.protocol import H
from tests.train.test_config import error_of, minimal

LINKS = {"links": {"rate": "100mbit"}}
ROOT = Path(__file__).resolve().parents[2]


def test_links_are_parsed_and_the_master_rate_defaults_to_the_rate():
    config = parse_config(minimal(network={"links": {"rate": "100mbit", "latency": "1ms"}}))
    links = config.network.links
    assert links.rate == links.master_rate == 12.5e6
    assert links.latency == 0.001 and links.rate_text == "100mbit"
    assert links.latency_text == "1ms"
    config = parse_config(minimal(network={"links": {"rate": "1MB/s", "master_rate": "1gbit"}}))
    assert config.network.links.rate == 1e6 and config.network.links.master_rate == 125e6
    # the canonical spelling, whichever was written
    assert config.network.links.rate_text == "8mbit"
    assert parse_config(minimal(network={})).network.links is None
    assert parse_config(minimal()).network is None


def test_a_latency_is_a_duration_with_its_unit():
    # one grammar for durations (gradcode.duration): a bare 1 could be a second or a millisecond
    error = error_of(minimal(network={"links": {"rate": "100mbit", "latency": 0.001}}))
    assert "network.links.latency" in error and "no unit" in error
    error = error_of(minimal(network={"links": {"rate": "100mbit", "latency": "-1ms"}}))
    assert "network.links.latency" in error and ">= 0" in error
    zero = parse_config(minimal(network={"links": {"rate": "100mbit", "latency": 0}}))
    assert zero.network.links.latency == 0.0 and zero.network.links.latency_text == "0ms"


def test_links_do_not_change_the_fingerprint():
    # the links are where the job ran, not what it computes: a checkpoint resumes across them
    base = parse_config(minimal()).fingerprint()
    assert parse_config(minimal(network=LINKS)).fingerprint() == base


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"network": {"links": {"rate": "100furlongs"}}}, "network.links.rate: unknown rate unit"),
        ({"network": {"links": {"rate": -3}}}, "network.links.rate: a rate must be finite and"),
        ({"network": {"links": {"rate": "0mbit"}}}, "network.links.rate: a rate must be finite"),
        ({"network": {"links": {"rate": 1e6}}}, "network.links.rate: 1000000.0 has no unit"),
        (
            {"network": {"links": {"rate": "100mbps"}}},
            "network.links.rate: '100mbps' is ambiguous: write 100mbit (100 Mbit/s) or 100MB/s "
            "(100 megabytes per second)",
        ),
        (
            {"network": {"links": {"rate": "100mbit", "master_rate": "1gbps"}}},
            "network.links.master_rate: '1gbps' is ambiguous",
        ),
        ({"network": {"links": {}}}, "network.links.rate: missing"),
        ({"network": {"links": {"rate": "8bit", "burst": 2}}}, "network.links.burst: unknown key"),
        ({"network": {"ports": 1}}, "network.ports: unknown key"),
        (
            {"network": LINKS, "bandwidth": {"bytes_per_second": 1e6}},
            "network: and bandwidth: exclude each other",
        ),
        (
            {"network": LINKS, "stragglers": {"model": "fixed", "params": {"comm": 0.01}}},
            "stragglers.params.comm: emulates communication",
        ),
        (
            {
                "network": LINKS,
                "stragglers": {
                    "model": "single-port",
                    "params": {"a": 1e-4, "mu": 1e3, "tc": 0.02, "data": 480},
                },
            },
            "stragglers.params.tc: emulates communication",
        ),
        (
            {
                "network": LINKS,
                "stragglers": {
                    "model": "master-worker",
                    "params": {"lambda1": 10, "t1": 0.01, "lambda2": 10, "t2": 0.01},
                },
            },
            "stragglers.params.lambda2/t2: emulates communication",
        ),
    ],
)
def test_combinations_that_make_no_sense_are_one_line_errors(change, expected):
    assert expected in error_of(minimal(**change))


@pytest.mark.parametrize("field", ["rate", "master_rate"])
@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("100mbps", "'100mbps' is ambiguous: write 100mbit (100 Mbit/s) or 100MB/s (100 "
         "megabytes per second)"),
        (12500000, "12500000 has no unit: write 12500000bit (12500000 bit/s) or 12500000B/s"),
        ("-1mbit", "a rate must be > 0, got '-1mbit'"),
        (".nan", "a rate must be finite and > 0, got nan"),
        ("fast", "expected a rate like 100mbit or 12.5MB/s"),
    ],
)  # fmt: skip
def test_a_bad_rate_in_a_run_file_names_the_file_and_the_field(tmp_path, field, value, says):
    links = {"rate": "100mbit", "master_rate": "200mbit", field: value}
    text = yaml.safe_dump(minimal(network={"links": links}))
    path = tmp_path / "run.yaml"
    path.write_text(text.replace("'.nan'", ".nan"))  # YAML's NaN, a float
    with pytest.raises(ConfigError) as caught:
        load_config(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: network.links.{field}: {says}") and "\n" not in message


def test_a_bad_rate_in_a_straggler_spec_file_names_that_file(tmp_path):
    spec = tmp_path / "fitted.yaml"
    params = {"rate": ["100mbit", "100Mbps"], "master_rate": "1gbit", "features": 16}
    spec.write_text(yaml.safe_dump({"model": "shared-links", "parameters": params}))
    run = minimal(network=LINKS, stragglers={"spec": str(spec)})
    with pytest.raises(ConfigError) as caught:
        parse_config(run)
    assert str(caught.value) == (
        f"stragglers.spec: {spec}: parameters.rate[1]: '100Mbps' is ambiguous: write 100mbit "
        "(100 Mbit/s) or 100MB/s (100 megabytes per second)"
    )


@pytest.mark.parametrize(
    "stragglers",
    [
        {"model": "fixed", "params": {"compute": 0.01, "comm": 0}},
        {"model": "single-port", "params": {"a": 1e-4, "mu": 1e3, "tc": 0, "data": 480}},
        {"model": "master-worker", "params": {"lambda1": 10, "t1": 0.01}},
        {"model": "random-set", "params": {"count": 1, "delay": 0.05}},
        # the links model itself: its computation is injected, its links are the real ones
        {"model": "shared-links", "params": {"rate": "100mbit", "features": 16, "a": 1e-4}},
    ],
)
def test_with_links_only_computation_is_injected(stragglers):
    plan = build_plan(parse_config(minimal(network=LINKS, stragglers=stragglers)))
    assert plan.bandwidth is None  # no single port
    source = plan.delay_source()
    assert source.emulated_comm() is None
    for t in range(5):
        assert not source.delays(t).comm.any()  # no per-message link sleep


def test_single_port_with_zero_tc_emulates_no_port():
    stragglers = {"model": "single-port", "params": {"a": 1e-4, "mu": 1e3, "tc": 0, "data": 480}}
    assert build_plan(parse_config(minimal(stragglers=stragglers))).bandwidth is None


def _rank(rank, host="a", netns=1, nolocal=False):
    transport = {"nolocal": nolocal}
    return {
        "rank": rank,
        "host": host,
        "netns": netns,
        "boot_id": "b",
        "slurm_nodeid": None,
        "transport": transport,
    }


def test_ranks_are_grouped_into_nodes_by_host_and_namespace():
    placement = summarize_ranks(
        [_rank(2, "n2", 12), _rank(0, "n0", 10), _rank(1, "n1", 11), _rank(3, "n2", 12)]
    )
    ranks = placement["ranks"]
    assert [r["node"] for r in ranks] == [0, 1, 2, 2]
    assert ranks[2]["shares_node_with"] == [3] and ranks[1]["shares_node_with"] == []
    assert [r["path_to_master"] for r in ranks] == ["self", "netmod", "netmod", "netmod"]
    assert placement["nodes"][2] == {"node": 2, "host": "n2", "netns": 12, "ranks": [2, 3]}
    assert placement["one_clock"] and not placement["shm_across_namespaces"]


def test_one_hostname_in_two_namespaces_is_two_nodes_and_shm_is_flagged():
    placement = summarize_ranks([_rank(0, netns=1), _rank(1, netns=2)])
    assert [r["node"] for r in placement["ranks"]] == [0, 1]
    assert placement["ranks"][1]["path_to_master"] == "shm"  # MPICH: same host, shared memory
    assert placement["shm_across_namespaces"]
    placement = summarize_ranks([_rank(0, netns=1, nolocal=True), _rank(1, netns=2, nolocal=True)])
    assert placement["ranks"][1]["path_to_master"] == "netmod"
    assert not placement["shm_across_namespaces"]


def test_a_logged_iteration_is_predicted_on_its_links():
    code = build("uncoded", n=4)
    features, rate = 1000, 12.5e6
    links = LinksConfig(rate=rate, master_rate=rate, latency=0.001)
    record = {
        "messages": [
            {"key": w, "compute": 0.002, "injected_compute": 0.008 * (w == 3)} for w in range(4)
        ]
    }
    # the links carry TCP's payload of their frames, and every message one full frame later
    # through the switch (its last frame crosses the receiver's link after the sender's)
    payload, hop = rate * PAYLOAD_FRACTION, 0.001 + 1514 / rate
    download = hop + 4 * 8 * (features + 1) / payload
    size = 8 * features + 8 * H  # the runtime's header
    # workers 0-2 ready together at download + 2 ms, sharing the port; worker 3 8 ms later
    three = download + 0.002 + 3 * size / payload
    assert three < download + 0.010
    expected = download + 0.010 + size / payload + hop
    got = predicted_links_time(code, record, links, features)
    assert got == pytest.approx(expected)
    # a message that never came: never decodable
    assert predicted_links_time(code, {"messages": record["messages"][:3]}, links, features) == (
        float("inf")
    )


def test_the_link_floor_is_one_model_copy_the_slowest_used_worker_and_the_used_results():
    code = build("frc", n=4, s=1)
    features, rate, master = 125_000, 12.5e6, 25e6  # 100 and 200 Mbit/s
    links = LinksConfig(rate=rate, master_rate=master, latency=0.001)
    size = 8 * features + 8 * H
    record = {
        "iteration": 3,
        "used": [0, 3],
        "messages": [
            {"key": w, "worker": w, "bytes": size, "compute": 0.01, "injected_compute": delay}
            for w, delay in ((0, 0.05), (3, 0.02), (1, 0.4))  # worker 1's came, unused
        ],
    }
    floor = link_floor(code, record, links, features)
    payload = rate * PAYLOAD_FRACTION
    assert floor.download == pytest.approx(0.001 + 8 * (features + 1) / payload)
    assert floor.work == pytest.approx(0.06)  # worker 0's, not the unused worker 1's
    # two results through the master's 200 Mbit/s = one through a worker's 100 Mbit/s: a tie
    assert floor.upload == pytest.approx(0.001 + size / payload)
    assert floor.total == pytest.approx(floor.download + 0.06 + floor.upload)
    three = {**record, "used": [0, 1, 3]}
    assert link_floor(code, three, links, features).port == "master"
    ring = build("ring-allreduce", n=3)
    with pytest.raises(ValueError, match="flat and tree codes only"):
        link_floor(ring, record, links, features)
    with pytest.raises(ValueError, match="used no message"):
        link_floor(code, {**record, "used": []}, links, features)


def test_a_tree_floor_follows_the_earliest_decodable_child_at_every_parent():
    # CodedReduce (2, 2, 1): MASTER -> 0, 1; 0 -> 2, 3; 1 -> 4, 5; any one child will do
    code = build("coded-reduce", n=2, L=2, s=1)
    features, rate, latency = 1000, 12.5e6, 0.001
    links = LinksConfig(rate=rate, master_rate=rate, latency=latency)
    per_partition = [0.005, 0.005, 0.1, 0.02, 0.1, 0.1]  # injected, two partitions a node

    def record(top_delay: float) -> dict:  # node 0's injected delay
        return {
            "injected": {"start": [0.0] * 6, "compute": per_partition},
            "messages": [
                {"key": node, "worker": node, "compute": 0.002, "injected_compute": delay}
                for node, delay in ((0, top_delay), (1, 0.01))
            ],
        }

    payload = rate * PAYLOAD_FRACTION
    copy, hop = 8 * (features + 1) / payload, 8 * (features + H) / payload + latency
    deepest = 2 * latency + copy
    # node 3 (0.042 s: 0.02 x 2 injected, 0.001 x 2 measured, the median of the logged
    # nodes' per partition) is node 0's earliest child: two hops up after it
    floor = link_floor(code, record(0.01), links, features)
    assert (floor.download, floor.port) == (pytest.approx(deepest), "tree")
    assert floor.work == pytest.approx(0.042)
    assert floor.upload == pytest.approx(2 * hop)
    # node 0's own work (0.5 s) now decides its branch: the master takes node 1's, which
    # waited for node 4 (0.202 s); node 5, ready with it, queues behind it at node 1's port
    floor = link_floor(code, record(0.5), links, features)
    assert floor.work == pytest.approx(0.202)
    assert floor.total == pytest.approx(deepest + 0.202 + 2 * hop)


def test_a_tree_floor_sends_only_the_children_a_parent_needs_through_its_port():
    # CodedReduce (4, 1, 1): the master needs one leaf of {0, 1} and one of {2, 3}
    code = build("coded-reduce", n=4, L=1, s=1)
    features, rate, latency, work = 1000, 12.5e6, 0.001, 0.03
    links = LinksConfig(rate=rate, master_rate=rate, latency=latency)
    record = {
        "injected": {"start": [0.0] * 4, "compute": [0.0] * 4},
        "messages": [
            {"key": node, "worker": node, "compute": 0.0, "injected_compute": work}
            for node in range(4)
        ],
    }
    payload = rate * PAYLOAD_FRACTION
    size = 8 * (features + H) / payload
    floor = link_floor(code, record, links, features)
    # all four ready at once: leaves 0 and 2 cross the port, 1 and 3 never need to
    assert floor.work == pytest.approx(work)
    assert floor.upload == pytest.approx(2 * size + latency)


def test_the_cluster_smoke_run_file_is_valid_and_injects_no_communication():
    config = load_config(ROOT / "config" / "runs" / "cluster-smoke.yaml")
    plan = build_plan(config)
    assert config.network.links.rate == 12.5e6 and plan.bandwidth is None
    assert plan.delay_source().emulated_comm() is None and plan.world_size == 5


def _injected(n, start=0.0, per_partition=0.0):
    return {"start": [start] * n, "compute": [per_partition] * n, "comm": [0.0] * n}


def test_a_ring_iteration_is_predicted_as_its_slowest_worker_then_2_n_minus_1_chunk_steps():
    code = build("ring-allreduce", n=4)
    features, rate = 1000, 12.5e6
    links = LinksConfig(rate=rate, master_rate=rate, latency=0.0005)
    record = {
        "messages": [
            {"key": w, "worker": w, "compute": 0.001, "injected_compute": 0.004 * w}
            for w in range(4)
        ],
        "injected": _injected(4),
    }
    # 2,000-byte chunks: TCP's payload of the rate, a full frame's store-and-forward
    step = 0.0005 + 1514 / rate + 8 * features / 4 / (rate * PAYLOAD_FRACTION)
    assert predicted_links_time(code, record, links, features) == pytest.approx(
        0.001 + 0.012 + 6 * step
    )
    # 200-byte chunks: one frame of 200 + 66 header bytes waits at the switch, not a full one
    small = 0.0005 + (200 + 66) / rate + 200 / (rate * PAYLOAD_FRACTION)
    assert predicted_links_time(code, record, links, 100) == pytest.approx(
        0.001 + 0.012 + 6 * small
    )


def test_a_tree_iteration_is_predicted_level_by_level_on_shared_parent_links():
    # a (2, 2)-regular tree without stragglers: master -> nodes 0, 1 -> leaves 2..5
    code = build("coded-reduce", n=2, L=2, s=0)
    features, rate = 1000, 12.5e6
    links = LinksConfig(rate=rate, master_rate=rate, latency=0.0)
    model, result = 8 * (features + 1), 8 * features + 8 * H
    # the master logs its children's messages; the leaves' work is the injected delay
    # (1 partition x 3 ms) plus the logged nodes' median measured compute per partition
    record = {
        "messages": [
            {"key": v, "worker": v, "compute": 0.001, "injected_compute": 0.002} for v in (0, 1)
        ],
        "injected": _injected(6, per_partition=0.003),
    }
    work = node_work(code, record)
    assert work == pytest.approx([0.003, 0.003, 0.004, 0.004, 0.004, 0.004])
    # the model: two children share each sender's link on the way down (2 levels), the
    # leaves' results share their parent's link, the parents' results the master's
    payload, hop = rate * PAYLOAD_FRACTION, 1514 / rate  # (a frame at every hop)
    down = 2 * (2 * model / payload + hop)
    expected = down + 0.004 + 2 * (2 * result / payload + hop)
    assert predicted_links_time(code, record, links, features) == pytest.approx(expected)
