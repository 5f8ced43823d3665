"""How results reach the master (``runtime.collection``): the choice, the puller, and real MPI
jobs that pull only the results the code needs and stay exact."""

from __future__ import annotations

from functools import partial

import pytest
import yaml

from gradcode.codes import build
from gradcode.codes.tree import MASTER
from gradcode.runfile.collection import choose
from gradcode.runfile.config import ConfigError, load_config
from gradcode.runfile.plan import build_plan
from gradcode.runfile.reference import serial_trajectory
from gradcode.topology.tree import spared_children
from gradcode.train.pulling import (
    DecodablePuller,
    Puller,
    collector_puller,
)
from tests.helpers.mpi import LATE, base_run, relative_errors, run_config

LINKS = {"links": {"rate": "100mbit", "master_rate": "200mbit"}}


def test_the_puller_asks_for_the_first_needed_of_every_group_and_no_more():
    code = build("frc", n=6, s=2)  # groups {0, 1, 2}, {3, 4, 5}: one of each
    rule = code.completion_rule()
    puller = Puller(rule)
    keys = code.all_message_keys()
    assert [puller.wants(keys[i]) for i in (1, 0, 4, 2, 3, 5)] == [
        True, False, True, False, False, False
    ]  # fmt: skip
    puller.start()
    assert puller.wants(keys[2]) and puller.wants(keys[5])
    # the decoder refused the set the rule asked for: everything is wanted from then on
    assert not puller.wants(keys[0])
    puller.widen()
    assert puller.wants(keys[0]) and puller.wants(keys[1])
    puller.start()
    assert not puller.wide
    crc = build("crc", n=5, s=2)  # any 3 of 5
    puller = Puller(crc.completion_rule())
    assert [puller.wants(key) for key in crc.all_message_keys()] == [True] * 3 + [False] * 2


def _choose(requested: str, code, **kw):
    args = {"links_stated": True, "tolerant": False, "adversaries": False} | kw
    return choose(requested, code, **args)


def test_auto_pulls_only_on_real_links_where_some_results_go_unused():
    frc = build("frc", n=8, s=1)
    assert _choose("auto", frc).way == "pull"
    assert "4 of 8" in _choose("auto", frc).reason
    assert _choose("auto", frc, links_stated=False).way == "push"
    assert _choose("auto", build("uncoded", n=8)).way == "push"  # every result is used
    assert _choose("auto", frc, tolerant=True).way == "pull"  # widened after a failure
    assert _choose("auto", frc, adversaries=True).way == "push"
    # without a declared rule: the fewest of the first keys that decode
    binary = build("binary", n=8, s=1)
    assert binary.completion_rule() is None
    assert _choose("auto", binary).way == "pull"
    assert "7 of 8" in _choose("auto", binary).reason
    assert _choose("push", frc).way == "push"
    # explicit pull: wherever it is possible, even without links or with nothing to spare
    assert _choose("pull", build("uncoded", n=8), links_stated=False).way == "pull"
    with pytest.raises(ValueError, match="is a ring code"):
        _choose("pull", build("ring-allreduce", n=4))
    with pytest.raises(ValueError, match=r"faults\.tolerate: a tree parent would wait"):
        _choose("pull", build("coded-reduce", n=2, L=2, s=1), tolerant=True)


def test_a_tree_pulls_where_some_parent_decodes_without_a_child():
    tree = build("coded-reduce", n=2, L=2, s=1)  # three parents, each needs 1 of its 2
    assert spared_children(tree) == 3
    chosen = _choose("auto", tree)
    assert chosen.way == "pull" and "3 children's results" in chosen.reason
    assert spared_children(build("coded-reduce", n=2, L=2, s=0)) == 0
    assert _choose("auto", build("coded-reduce", n=2, L=2, s=0)).way == "push"
    assert _choose("auto", tree, links_stated=False).way == "push"
    assert _choose("auto", tree, tolerant=True).way == "push"
    wide = build("coded-reduce", n=4, L=1, s=1)  # the master needs one of {0, 1}, one of {2, 3}
    by_rule = collector_puller(wide, MASTER)  # the code declares its rule: the first of each pair
    assert [by_rule.wants(child) for child in (0, 1, 3, 2)] == [True, False, True, False]
    # without a declared rule: asked while those asked do not decode
    by_notice = DecodablePuller(partial(wide.children_decodable, MASTER))
    assert [by_notice.wants(child) for child in (0, 1, 3, 2)] == [True, True, True, False]
    by_notice.start()
    assert by_notice.wants(1) and not by_notice.wants(1)
    by_notice.widen()
    assert by_notice.wants(1)


def test_a_code_without_a_rule_is_pulled_while_what_it_pulled_does_not_decode():
    binary = build("binary", n=4, s=1)  # decodes from {0, 2}, {1, 3} and any three
    assert binary.completion_rule() is None
    puller = collector_puller(binary)
    keys = binary.all_message_keys()
    assert [puller.wants(keys[i]) for i in (0, 1, 2, 3)] == [True, True, True, False]
    puller.start()
    assert [puller.wants(keys[i]) for i in (0, 2, 1, 3)] == [True, True, False, False]
    puller.widen()
    assert puller.wants(keys[1])
    assert isinstance(collector_puller(build("frc", n=4, s=1)), Puller)


def test_an_impossible_pull_is_refused_where_the_run_is_planned(tmp_path, logistic_data):
    run = base_run(
        logistic_data,
        scheme={"name": "ring-allreduce", "params": {"n": 4}},
        runtime={"collection": "pull"},
    )
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(run))
    with pytest.raises(ConfigError, match=r"^runtime.collection: pull is not possible here: "):
        build_plan(load_config(path))
    path.write_text(yaml.safe_dump(run | {"runtime": {"collection": "sometimes"}}))
    with pytest.raises(ConfigError, match=r"runtime\.collection"):
        load_config(path)


@pytest.mark.mpi
@pytest.mark.parametrize(
    ("scheme", "params", "per_iteration"),
    [
        ("frc", {"n": 4, "s": 1}, 2),  # one of each group of 2
        ("ye-abbe", {"n": 4, "d": 4, "s": 3, "m": 1}, 1),  # any one worker
        ("crc", {"n": 4, "s": 1}, 3),
        ("binary", {"n": 4, "s": 1}, None),  # no rule: {0, 2}, {1, 3} or any three
        # no rule, two messages a worker (keys (worker, j)): 3 or 4 of the 8
        ("gc-mmc", {"n": 4, "r": 3, "design": "correlated", "order": 2}, None),
    ],
    ids=["frc", "ye-abbe-n-1", "crc", "binary", "gc-mmc"],
)
def test_a_pulled_run_takes_only_the_results_it_uses_and_stays_exact(
    tmp_path, logistic_data, scheme, params, per_iteration
):
    run = base_run(
        logistic_data,
        scheme={"name": scheme, "params": params},
        stragglers=LATE,
        runtime={"collection": "pull"},
        iterations=8,
    )
    job = run_config(tmp_path, run, ranks=5).check()
    reference = serial_trajectory(load_config(job.run_file))
    assert relative_errors(job.trajectory(), reference).max() <= 1e-9
    summary = job.summary()
    assert summary["collection"]["way"] == "pull"
    # nothing but the pulled results left any worker: the stragglers' never did
    log = job.log()
    pulled = [[n["key"] for n in record["notices"] if n["pulled"]] for record in log]
    used_total = sum(len(record["used"]) for record in log)
    assert used_total <= summary["messages_sent"] <= sum(map(len, pulled))
    if per_iteration is not None:
        assert summary["messages_sent"] == used_total
    for record, asked in zip(log, pulled, strict=True):
        used = sorted(map(str, record["used"]))
        if per_iteration is not None:  # a rule's groups: every result pulled is needed
            assert sorted(map(str, asked)) == used
            assert len(record["messages"]) == per_iteration
        else:
            # pulled while the first ones did not decode; a subset of them, not in notice
            # order, may decode before the last comes (binary: 0, 1, 2 pulled, 0 and 2 decode)
            assert set(used) <= set(map(str, asked))
        assert len(record["notices"]) >= len(record["messages"])
        arrived = {str(notice["key"]): notice["arrival"] for notice in record["notices"]}
        for message in record["messages"]:
            assert message["arrival"] >= arrived[str(message["key"])]  # after its notice


@pytest.mark.mpi
def test_every_tree_parent_pulls_only_what_its_rule_needs_and_the_run_stays_exact(
    tmp_path, logistic_data
):
    # scattered, as on links by default: a child may announce before its parent has begun
    run = base_run(
        logistic_data,
        scheme={"name": "coded-reduce", "params": {"n": 2, "L": 2, "s": 1}},
        stragglers=LATE,
        runtime={"collection": "pull", "distribution": "scatter"},
        iterations=8,
    )
    job = run_config(tmp_path, run, ranks=7).check()
    reference = serial_trajectory(load_config(job.run_file))
    assert relative_errors(job.trajectory(), reference).max() <= 1e-9
    summary = job.summary()
    assert summary["collection"]["way"] == "pull"
    assert summary["distribution"]["way"] == "scatter"
    # every parent asks one of its two children: 3 messages an iteration, not 6
    assert summary["messages_sent"] <= 3 * summary["iterations"] + 3  # + a stale one each
    for record in job.log():
        pulled = [notice["key"] for notice in record["notices"] if notice["pulled"]]
        assert pulled == record["used"] and len(pulled) == 1


@pytest.mark.mpi
def test_a_persistent_straggler_is_never_waited_for_under_pull(tmp_path, logistic_data):
    run = base_run(
        logistic_data,
        scheme={"name": "frc", "params": {"n": 4, "s": 1}},
        stragglers={"model": "none", "persistent": [2]},
        runtime={"collection": "pull", "distribution": "scatter"},
        iterations=6,
    )
    job = run_config(tmp_path, run, ranks=5).check()
    reference = serial_trajectory(load_config(job.run_file))
    assert relative_errors(job.trajectory(), reference).max() <= 1e-9
    for record in job.log():
        assert all(notice["worker"] != 2 for notice in record["notices"])
        assert len(record["messages"]) == 2
