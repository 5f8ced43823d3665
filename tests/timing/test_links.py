"""The deterministic-link model (``links``): fair sharing of a receiver's link, incast at the
master, trees and rings, each against its closed form."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gradcode.codes import build
from gradcode.codes.tree import MASTER
from gradcode.rate import Rate
from gradcode.sim.montecarlo import simulate
from gradcode.sim.spec import load_spec
from gradcode.timing import TIMING_MODELS, LinksModel, model_from_spec
from gradcode.timing.links import (
    GreedyPulls,
    Pulls,
    fair_finish,
    fair_shares,
    message_time,
    rate_bytes,
)

R = 12.5e6  # 100mbit in bytes per second
L = 1000  # features: a full message is 8000 bytes
B = 8 * L


def _run(model, code, trials=1, seed=0):
    return model.prepare(code).run(model.sample(np.random.default_rng(seed), trials, code.n))


def test_registered_and_built_from_a_spec():
    assert TIMING_MODELS["shared-links"] is LinksModel
    model = model_from_spec(
        "shared-links", {"rate": "100mbit", "master_rate": "1gbit", "features": L}
    )
    assert model.rate.scalar == R and model.master_rate == 125e6
    assert model.params()["download"] is True and "mu" not in model.params()


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"rate": "1furlong", "features": 3}, "parameters.rate: unknown rate unit"),
        ({"rate": "100mbps", "features": 3}, "parameters.rate: '100mbps' is ambiguous: write"),
        ({"rate": ["1mbit", "1mbps"], "features": 3}, r"parameters.rate\[1\]: '1mbps' is amb"),
        (
            {"rate": {"counts": [1], "values": ["1Mb/s"]}, "features": 3},
            r"parameters.rate.values\[0\]: '1Mb/s' is ambiguous",
        ),
        ({"rate": 1e6, "master_rate": "2", "features": 3}, "parameters.master_rate: '2' has no"),
        ({"rate": -1, "features": 3}, "parameters.rate: must be a finite number > 0"),
        ({"rate": True, "features": 3}, "parameters.rate: must be a rate like 100mbit"),
        ({"rate": 1e6}, "parameters.features: missing"),
        ({"rate": 1e6, "features": 0}, "parameters.features: must be an integer >= 1"),
        ({"rate": [1e6, 2e6], "features": 3}, "parameters.master_rate: needed"),
        ({"rate": 1e6, "features": 3, "latency": -1}, "parameters.latency: must be a finite"),
        ({"rate": 1e6, "features": 3, "download": "no"}, "parameters.download: must be true"),
        ({"rate": 1e6, "features": 3, "tc": 1}, "parameters.tc: unknown parameter"),
    ],
)
def test_bad_parameters_name_the_key(params, expected):
    with pytest.raises(ValueError, match=expected):
        model_from_spec("shared-links", params)


def test_rates_in_the_one_grammar_or_numbers_of_bytes_per_second():
    assert rate_bytes("r", "100mbit") == R == rate_bytes("r", "12.5MB/s")
    assert rate_bytes("r", "8bit") == 1.0 and rate_bytes("r", 5) == 5.0
    assert rate_bytes("r", Rate(R)) == R
    exact = 11_960_123.456789  # a fitted rate, written as its canonical spelling
    assert rate_bytes("r", str(Rate(exact))) == exact


def test_rates_per_worker_and_per_type_may_be_spelt():
    model = model_from_spec(
        "shared-links",
        {"rate": ["100mbit", "12.5MB/s", 12.5e6], "master_rate": "1gbit", "features": L},
    )
    assert model.rate.values == (R, R, R) and model.params()["rate"] == [R, R, R]
    model = model_from_spec(
        "shared-links",
        {"rate": {"counts": [2, 1], "values": ["100mbit", "50mbit"]}, "master_rate": "1gbit",
         "features": L},
    )  # fmt: skip
    assert model.rate.for_workers(3).tolist() == [R, R, R / 2]


def test_one_message_on_idle_links():
    assert message_time(B, R, 10 * R, 0.001) == pytest.approx(0.001 + B / R)
    assert message_time(B, R, R / 2) == pytest.approx(2 * B / R)  # the master's link limits


def test_fair_shares_fill_the_link_and_respect_caps():
    assert fair_shares(np.array([10.0, 10.0, 10.0]), 3.0).tolist() == [1.0, 1.0, 1.0]
    # a flow capped below its share leaves the rest to the others
    np.testing.assert_allclose(fair_shares(np.array([0.5, 10.0, 10.0]), 3.0), [0.5, 1.25, 1.25])
    assert fair_shares(np.array([1.0, 1.0]), 10.0).tolist() == [1.0, 1.0]  # senders limit


@pytest.mark.parametrize("q", [1, 2, 5, 9])
def test_incast_of_q_equal_messages_finishes_together(q):
    # q b / M when the master's link is the bottleneck (M / q <= r), else b / r
    got = fair_finish(np.zeros(q), np.full(q, B), np.full(q, R), R)
    np.testing.assert_allclose(got, q * B / R)
    got = fair_finish(np.zeros(q), np.full(q, B), np.full(q, R), 4 * R)
    np.testing.assert_allclose(got, max(q / 4, 1) * B / R)


def test_staggered_and_chained_flows():
    # flow 0 alone for 0.5 s, then both share: 0 ends at 1.5, 1 at 2.0 (1 byte/s, 1 byte each)
    np.testing.assert_allclose(fair_finish([0.0, 0.5], [1, 1], [1, 1], 1.0), [1.5, 2.0])
    # a sender's second message waits for its first
    np.testing.assert_allclose(fair_finish([0.0, 0.0], [1, 1], [1, 1], 5.0, [-1, 0]), [1, 2])
    # never-ready flows never finish and take no share
    np.testing.assert_allclose(fair_finish([0.0, np.inf], [1, 1], [1, 1], 1.0), [1, np.inf])


def test_master_worker_incast_is_n_messages_through_the_masters_port():
    n, latency = 4, 0.002
    model = LinksModel(rate=R, features=L, latency=latency, download=False)
    outcome = _run(model, build("uncoded", n=n))
    assert outcome.times[0] == pytest.approx(latency + n * B / R)
    assert outcome.messages[0] == n
    # the master's link 4x faster: every worker's own link is the limit
    model = LinksModel(rate=R, master_rate=4 * R, features=L, download=False)
    assert _run(model, build("uncoded", n=n)).times[0] == pytest.approx(B / R)


def test_waiting_for_n_minus_s_does_not_help_when_all_messages_share_the_port():
    # fair sharing: the straggler's bytes slow the others; all n finish together at n b / M
    model = LinksModel(rate=R, features=L, download=False)
    sgd = build("ignore-stragglers", n=4, s=1)
    assert _run(model, sgd).times[0] == pytest.approx(4 * B / R)


def test_a_message_of_one_mth_of_the_gradient_takes_one_mth_of_the_time():
    model = LinksModel(rate=R, features=L, download=False)
    code = build("ye-abbe", n=4, d=2, s=0, m=2)
    assert _run(model, code).times[0] == pytest.approx(4 * 8 * math.ceil(L / 2) / R)


def test_download_then_compute_then_upload():
    n, a, data, header = 4, 1e-4, 480, 72
    model = LinksModel(rate=R, features=L, a=a, data=data, header_bytes=header)
    outcome = _run(model, build("uncoded", n=n))
    download = n * 8 * (L + 1) / R  # the model to 4 workers through the master's link
    compute = a * data / n  # each worker 120 points
    upload = n * (B + header) / R
    assert outcome.times[0] == pytest.approx(download + compute + upload)


@pytest.mark.parametrize(("master", "latency"), [(2 * R, 0.0), (2 * R, 0.002), (R / 4, 0.0)])
def test_a_scattered_model_is_pipelined_through_the_busiest_link(master, latency):
    n = 8
    model = LinksModel(
        rate=R, master_rate=master, features=L, latency=latency, distribution="scatter"
    )
    run = model.prepare(build("uncoded", n=n))
    size = 8 * (L + 1)
    chunks = size / master  # n chunks of size / n share the master's link (each under R)
    forwards = (n - 1) * size / (n * R)  # a forwarder's link sends its chunk n - 1 times
    whole = size / R  # a worker's link receives the whole model
    expected = 2 * latency + max(chunks, forwards, whole)
    assert run.downloads() == pytest.approx(np.full(n, expected))
    # on fast links the master's is the bottleneck, with a slow one its chunks
    assert expected == pytest.approx(2 * latency + (whole if master >= R else chunks))


def test_spread_out_readiness_sends_each_message_alone():
    # per-worker a: ready at 1, 2, 3, 4 ms (400 points each... of 1600), far apart
    gap = 0.01
    model = LinksModel(
        rate=R, features=L, download=False, a=[gap * (i + 1) / 400 for i in range(4)], data=1600
    )
    assert _run(model, build("uncoded", n=4)).times[0] == pytest.approx(4 * gap + B / R)


def test_tree_parents_share_their_own_links():
    # coded-reduce n=2, L=2: 6 nodes; leaves ready at 0, each parent takes its 2 children
    # through its link (2 b / r), then the root takes the 2 parents' messages (2 b / r)
    code = build("coded-reduce", n=2, L=2, s=1)
    latency = 0.001
    model = LinksModel(rate=R, features=L, latency=latency, download=False)
    outcome = _run(model, code)
    size = 8 * code.message_length(L)
    assert outcome.times[0] == pytest.approx(2 * (latency + 2 * size / R))


def test_tree_download_forwards_the_model_down():
    code = build("coded-reduce", n=2, L=2, s=1)
    model = LinksModel(rate=R, features=L)
    no_download = LinksModel(rate=R, features=L, download=False)
    extra = _run(model, code).times[0] - _run(no_download, code).times[0]
    assert extra == pytest.approx(2 * 2 * 8 * (L + 1) / R)  # two levels, two children each


def test_a_trees_scattered_model_reaches_every_node_at_once_not_level_by_level():
    code = build("coded-reduce", n=2, L=2, s=1)
    model = LinksModel(rate=R, master_rate=2 * R, features=L, distribution="scatter")
    no_download = LinksModel(rate=R, master_rate=2 * R, features=L, download=False)
    extra = _run(model, code).times[0] - _run(no_download, code).times[0]
    assert extra == pytest.approx(8 * (L + 1) / R)  # one copy through a node's link


def test_ring_takes_two_n_minus_one_chunk_steps_after_the_slowest_worker():
    n, latency = 4, 0.0005
    ring = build("ring-allreduce", n=n)
    model = LinksModel(rate=R, features=L, latency=latency, a=[1e-5, 2e-5, 3e-5, 4e-5], data=400)
    outcome = _run(model, ring)
    slowest = 4e-5 * 400 / ring.k
    assert outcome.times[0] == pytest.approx(slowest + 2 * (n - 1) * (latency + B / n / R))


def test_random_computation_uses_single_ports_draws():
    model = LinksModel(rate=R, features=L, a=1e-5, mu=1e4, data=400)
    same = model_from_spec("single-port", {"a": 1e-5, "mu": 1e4, "tc": 0.1, "data": 400})
    rng = np.random.default_rng
    np.testing.assert_array_equal(
        model.sample(rng(3), 5, 4)["unit"], same.sample(rng(3), 5, 4)["unit"]
    )
    outcome = _run(model, build("frc", n=4, s=1), trials=50)
    assert np.isfinite(outcome.times).all() and (outcome.times > 0).all()


def test_the_simulator_runs_it():
    spec = load_spec(
        {
            "name": "links",
            "model": "shared-links",
            "parameters": {"rate": "100mbit", "features": L, "a": 1e-5, "mu": 1e4, "data": 400},
            "schemes": [
                {"scheme": "uncoded", "params": {"n": 4}},
                {"scheme": "coded-reduce", "params": {"n": 2, "L": 2, "s": 1}},
            ],
        },
        origin="test",
    )
    rows = simulate(spec, trials=20, seed=1)
    assert len(rows) == 2 and all(np.isfinite(row.mean_time) for row in rows)


def test_measured_starts_replace_the_download_dealt_in_a_random_order():
    """``starts``: when each worker had the model, as measured; which worker got which time
    changes every trial (TCP served the copies in no fixed order)."""
    starts = [0.1, 0.2, 0.3, 0.4]
    model = LinksModel(
        rate=1e6, features=1000, download=False, starts=starts, a=0.01, data=4, overhead=0.5
    )
    code = build("uncoded", n=4)
    draws = model.sample(np.random.default_rng(0), 200, 4)
    assert np.array_equal(np.sort(draws["start"], axis=1), np.tile(starts, (200, 1)))
    assert len({tuple(row) for row in draws["start"]}) > 10  # dealt anew each trial
    outcome = model.prepare(code).run(draws)
    # the last worker starts at 0.4, computes one subset (0.01 s), sends 8000 bytes alone
    expected = 0.4 + 0.01 + 8000 / 1e6 + 0.5
    assert outcome.times == pytest.approx(np.full(200, expected))
    assert model.params()["starts"] == starts and model.params()["overhead"] == 0.5
    with pytest.raises(ValueError, match=r"parameters\.starts: replaces the download"):
        LinksModel(rate=1e6, features=10, starts=starts)
    with pytest.raises(ValueError, match=r"parameters\.starts: describes 4 workers but"):
        model.check(build("uncoded", n=5))


# -- collection: pull ---------------------------------------------------------------------
# identical deterministic workers: each computes ``A * DATA * fraction`` seconds; the model
# (8 (L + 1) bytes) to all n workers shares the master's link (each capped at its own)
A, DATA = 1e-5, 800
MODEL = 8 * (L + 1)


def _download(n, latency, master):
    """When every worker holds the model: n copies share ``master``, each at most R."""
    return latency + MODEL / min(R, master / n)


@pytest.mark.parametrize("latency", [0.0, 0.003])
@pytest.mark.parametrize("download", [False, True])
def test_pull_moves_one_result_per_frc_group_through_the_masters_port(latency, download):
    code = build("frc", n=8, s=1)  # groups of 2 workers, 1 needed each; 2/8 of the data
    start = _download(8, latency, R) if download else 0.0
    ready = start + A * DATA * 2 / 8
    pull = LinksModel(
        rate=R, features=L, latency=latency, download=download, a=A, data=DATA, collection="pull"
    )
    push = LinksModel(rate=R, features=L, latency=latency, download=download, a=A, data=DATA)
    pulled, pushed = _run(pull, code), _run(push, code)
    # notice (latency), PULL back (latency), 4 payloads share the port, received (latency)
    assert pulled.times[0] == pytest.approx(ready + 3 * latency + 4 * B / R)
    assert pulled.messages[0] == 4
    assert pushed.times[0] == pytest.approx(ready + latency + 8 * B / R)
    assert pushed.messages[0] == 8
    # ties go to the first key of every group: workers 0, 2, 4, 6
    arrivals = pull.prepare(code).message_arrivals(pull.sample(np.random.default_rng(0), 1, 8))
    assert np.isfinite(arrivals[0]).tolist() == [True, False] * 4


@pytest.mark.parametrize("latency", [0.0, 0.003])
@pytest.mark.parametrize("download", [False, True])
@pytest.mark.parametrize("master", [R / 2, 4 * R])
def test_pull_moves_one_ye_abbe_result_when_any_one_decodes(latency, download, master):
    code = build("ye-abbe", n=8, d=8, s=7, m=1)  # any 1 of 8; every worker all the data
    model = LinksModel(
        rate=R,
        master_rate=master,
        features=L,
        latency=latency,
        download=download,
        a=A,
        data=DATA,
        collection="pull",
    )
    start = _download(8, latency, master) if download else 0.0
    outcome = _run(model, code)
    expected = start + A * DATA + 3 * latency + B / min(R, master)
    assert outcome.times[0] == pytest.approx(expected)
    assert outcome.messages[0] == 1


@pytest.mark.parametrize("latency", [0.0, 0.003])
def test_a_tree_parent_pulls_only_the_children_its_rule_needs(latency):
    code = build("coded-reduce", n=8, L=1, s=1)  # the master needs one leaf of every pair
    common = dict(rate=R, master_rate=2 * R, features=L, latency=latency, download=False)
    size = 8 * code.message_length(L)
    pulled = _run(LinksModel(**common, collection="pull"), code)
    pushed = _run(LinksModel(**common), code)
    # all ready at once: pushed, eight share the master's port; pulled, only four cross it
    assert pushed.times[0] == pytest.approx(latency + 8 * size / (2 * R))
    assert pulled.times[0] == pytest.approx(3 * latency + 4 * size / (2 * R))
    assert (pushed.messages[0], pulled.messages[0]) == (8, 4)
    notices = np.array([[0.0, 1, 2, 3, 9, 4, 5, 6]])
    # by the declared rule: the first of every pair
    by_rule = Pulls.of(code, MASTER).select(notices)
    assert np.flatnonzero(by_rule[0]).tolist() == [0, 2, 5, 6]
    # without one: by notice, until those pulled decode (the last leaf is never asked)
    leaves = tuple(code.children(MASTER))
    by_notice = GreedyPulls(leaves, lambda kids: code.children_decodable(MASTER, kids))
    assert np.flatnonzero(by_notice.select(notices)[0]).tolist() == [0, 1, 2, 3, 5, 6]


def test_a_flat_code_without_a_rule_is_pulled_until_what_it_pulled_decodes():
    code = build("binary", n=4, s=1)  # decodes from {0, 2}, {1, 3} and any three
    assert code.completion_rule() is None
    pulls = Pulls.of(code)
    assert isinstance(pulls, GreedyPulls)
    notices = np.array([[0.0, 1, 2, 3], [0.0, 2, 1, 3], [np.inf, 0, np.inf, 1]])
    chosen = pulls.select(notices)
    assert chosen.tolist() == [
        [True, True, True, False],
        [True, False, True, False],
        [False, True, False, True],
    ]
    common = dict(rate=R, master_rate=2 * R, features=L, download=False)
    pulled = _run(LinksModel(**common, collection="pull"), code, trials=50)
    pushed = _run(LinksModel(**common), code, trials=50)
    assert set(pulled.messages) <= {2, 3} and np.all(pulled.times <= pushed.times + 1e-12)


@pytest.mark.parametrize("latency", [0.0, 0.003])
@pytest.mark.parametrize("download", [False, True])
def test_pulling_every_uncoded_result_costs_one_round_trip_more(latency, download):
    # the master needs all of them: every payload flows as pushed, 2 latencies later
    code = build("uncoded", n=4)
    common = dict(rate=R, features=L, latency=latency, download=download, a=A, mu=1e4, data=400)
    pull = LinksModel(**common, collection="pull")
    push = LinksModel(**common)
    pulled, pushed = _run(pull, code, trials=20), _run(push, code, trials=20)
    np.testing.assert_allclose(pulled.times, pushed.times + 2 * latency)
    assert pulled.messages.tolist() == pushed.messages.tolist() == [4] * 20


@pytest.mark.parametrize("latency", [0.0, 0.003])
@pytest.mark.parametrize("download", [False, True])
def test_pull_does_not_wait_for_nor_share_the_port_with_a_crc_straggler(latency, download):
    # CRC n=8 s=1: any 7 of 8, each worker 2/8 of the data (200 points); worker 7 is ready
    # 2 b / R after the others (pushed, when each of theirs has 2 b / 7 through at R / 7)
    fast = A * DATA * 2 / 8
    slow = fast + 2 * B / R
    code = build("crc", n=8, s=1)
    common = dict(
        rate=R,
        features=L,
        latency=latency,
        download=download,
        a=[A] * 7 + [slow / (DATA * 2 / 8)],
        data=DATA,
    )
    start = _download(8, latency, R) if download else 0.0
    pull = LinksModel(**common, collection="pull")
    outcome = _run(pull, code)
    # the 7 fast notices come first: their payloads share the port alone (7 b / R)
    assert outcome.times[0] == pytest.approx(start + fast + 3 * latency + 7 * B / R)
    assert outcome.messages[0] == 7
    arrivals = pull.prepare(code).message_arrivals(pull.sample(np.random.default_rng(0), 1, 8))
    assert np.isfinite(arrivals[0]).tolist() == [True] * 7 + [False]
    # pushed, the straggler's flow joins after 2 b / R: each fast one then has 5 b / 7 left
    # at R / 8, done after 40 b / (7 R) more
    pushed = _run(LinksModel(**common), code)
    assert pushed.times[0] == pytest.approx(start + fast + latency + (2 + 40 / 7) * B / R)


def test_a_pulled_message_does_not_wait_for_its_workers_unpulled_one():
    from gradcode.timing.links import Pulls, collect

    # worker 0 sends messages 0 then 1, worker 1 message 2; groups (0, 2) and (1,), 1 each
    pulls = Pulls((np.array([0, 2]), np.array([1])), (1, 1))
    ready = np.array([[1.0, 2.0, 0.5]])  # message 2's notice beats message 0's
    got = collect(ready, [1, 1, 1], [1, 1, 1], 10.0, [-1, 0, -1], 0.0, pulls)
    np.testing.assert_allclose(got, [[np.inf, 3.0, 1.5]])
    # both of worker 0's pulled: one after the other through its own link
    pulls = Pulls((np.array([0]), np.array([1])), (1, 1))
    got = collect(np.zeros((1, 2)), [1, 1], [1, 1], 10.0, [-1, 0], 0.5, pulls)
    np.testing.assert_allclose(got, [[1.0 + 1.5, 2.0 + 1.5]])
    # ties in a group go to the first key, whatever the group's order
    pulls = Pulls((np.array([0, 1]),), (1,))
    got = collect(np.zeros((1, 2)), [1, 1], [1, 1], 10.0, None, 0.0, pulls)
    np.testing.assert_allclose(got, [[1.0, np.inf]])


def test_collection_is_validated_and_kept():
    model = model_from_spec("shared-links", {"rate": R, "features": L, "collection": "pull"})
    assert model.collection == "pull" and model.params()["collection"] == "pull"
    assert LinksModel(rate=R, features=L).params()["collection"] == "push"
    assert LinksModel.collection == "push"  # for subclasses that skip the constructor
    with pytest.raises(ValueError, match=r"parameters\.collection: must be one of push, pull"):
        model_from_spec("shared-links", {"rate": R, "features": L, "collection": "poll"})
    binary = build("binary", n=8, s=1)
    assert binary.completion_rule() is None
    model.check(binary)  # pulled while what it pulled does not decode
    with pytest.raises(ValueError, match=r"parameters\.collection: pull is for flat and tree"):
        model.prepare(build("ring-allreduce", n=4))
    model.prepare(build("coded-reduce", n=2, L=2, s=1))  # every parent pulls by its rule
    # push takes them all, as before
    LinksModel(rate=R, features=L).check(binary)
