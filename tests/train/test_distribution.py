"""How the model reaches the workers (``runtime.distribution``): the chunks, the choice, and
real MPI jobs that scatter it and stay exact."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from gradcode.codes import build
from gradcode.runfile.config import load_config
from gradcode.runfile.reference import serial_trajectory
from gradcode.topology import topology_named
from gradcode.train.distribution import (
    ChunkSplitter,
    Covering,
    ModelAssembler,
    choose,
    scatter_pieces,
)
from tests.helpers.mpi import LATE, base_run, relative_errors, run_config


def _model(t: int, features: int) -> np.ndarray:
    return np.concatenate([[t], np.arange(features, dtype=float) + 0.5 * t])


def test_chunks_reassemble_the_model_in_any_order_and_the_newest_wins():
    features, workers = 11, 4
    splitter = ChunkSplitter(features, workers)
    first = [chunk for _, chunk in splitter.chunks(_model(3, features), covered=[2])]
    assert [c[2] for c in first] == [1.0, 1.0, 0.0, 1.0]  # a covered chunk is not forwarded
    assert sum(c.size - 3 for c in first) == features
    assembler = ModelAssembler(features, workers)
    for chunk in (first[2], first[0], first[3]):
        assert assembler.take(chunk, latest=2, now=0.0) is None
    assert assembler.assembling
    done = assembler.take(first[1], latest=2, now=0.0)
    np.testing.assert_array_equal(done, _model(3, features))
    assert assembler.take(first[1], latest=3, now=0.0) is None  # a duplicate: 3 began
    # iteration 5 starts before 4 is complete: 4 is abandoned, and a late chunk of 4 dropped
    fourth, fifth = (
        [chunk for _, chunk in splitter.chunks(_model(4, features), [])],
        [chunk for _, chunk in splitter.chunks(_model(5, features), [])],
    )
    assert assembler.take(fourth[0], latest=3, now=0.0) is None
    assert assembler.take(fifth[3], latest=3, now=0.0) is None
    assert assembler.take(fourth[1], latest=3, now=0.0) is None
    for chunk in fifth[:2]:
        assert assembler.take(chunk, latest=3, now=0.0) is None
    np.testing.assert_array_equal(assembler.take(fifth[2], latest=3, now=0.0), _model(5, features))
    np.testing.assert_array_equal(done, _model(3, features))  # the earlier model was not reused


def test_pieces_go_every_workers_first_then_every_workers_second_and_report_their_chunk():
    features, workers, pieces = 50, 4, 3
    assert scatter_pieces(125_000, 8) == 7  # 125 KB chunks in pieces of 16 KiB or more
    assert scatter_pieces(40, 8) == 1 and scatter_pieces(10**7, 2) == 8
    splitter = ChunkSplitter(features, workers, pieces)
    sent = splitter.chunks(_model(2, features), covered=[1])
    assert [owner for owner, _ in sent] == [0, 1, 2, 3] * 3
    assert [c[2] for owner, c in sent] == [0.0 if owner == 1 else 1.0 for owner, _ in sent]
    assert sum(c.size - 3 for _, c in sent) == features
    assembler = ModelAssembler(features, workers, pieces)
    order = [5, 0, 11, 3, 7, 1, 9, 2, 10, 4, 8, 6]  # piece 6 (worker 2's chunk) comes last
    for c in order[:-1]:
        assert assembler.take(sent[c][1], latest=1, now=float(c)) is None
    done = assembler.take(sent[6][1], latest=1, now=20.0)
    np.testing.assert_array_equal(done, _model(2, features))
    # chunks, not pieces: the others were complete when their last pieces came, the latest
    # at "9" (piece 9; the first piece came at "5")
    assert assembler.last == 2 and assembler.wait == 20.0 - 9.0 and assembler.span == 4.0
    # a slow forwarder's pieces come spread out between the others': its chunk still stands out
    assembler = ModelAssembler(features, workers, pieces)
    spread = {2: 1.0, 6: 50.0, 10: 100.0}
    for c in sorted(range(12), key=lambda c: spread.get(c, c / 10)):
        done = assembler.take(sent[c][1], latest=1, now=spread.get(c, c / 10))
    assert done is not None and assembler.last == 2
    assert (assembler.wait, assembler.span) == (100.0 - 1.1, 1.1)
    covering = Covering(workers, never=lambda worker, t: False)
    assert covering.observe(2, [(assembler.last, assembler.wait, assembler.span)]) == [2]


def test_a_slow_chunk_is_covered_for_a_while_and_a_silent_workers_from_its_silence():
    covering = Covering(4, never=lambda worker, t: worker == 3 and t >= 5)
    assert covering.chunks(0) == []
    # (last chunk, seconds the worker waited for it, seconds the others took)
    normal = [(1, 0.02, 0.05), (2, 0.04, 0.03), (-1, 0.0, 0.0)]
    assert covering.observe(0, normal) == []
    assert covering.observe(1, [(2, 0.9, 0.1), (2, 0.8, 0.1), (0, 0.06, 0.01)]) == [0, 2]
    assert covering.chunks(2) == [0, 2]
    assert covering.chunks(4) == [0, 2] and covering.chunks(21) == [0, 2, 3]
    assert covering.chunks(22) == [3]


def test_auto_scatters_only_where_the_links_say_it_is_faster():
    links = {"master_rate": 25e6, "worker_rate": 12.5e6}
    common = {"features": 125_000, "tolerant": False}
    flat8, flat3, flat2 = (build("uncoded", n=n) for n in (8, 3, 2))
    chosen = choose("auto", flat8, **links, **common)
    assert chosen.way == "scatter"
    assert chosen.predicted["isend"] == pytest.approx(8 * 8 * 125_001 / 25e6)
    assert choose("auto", flat8, master_rate=None, worker_rate=None, **common).way == "isend"
    assert choose("auto", flat3, **links, **common).way == "isend"
    # no upper bound on the workers (the stall above 32 was the emulated cluster's ARP table)
    for many in (20, 39, 156):
        assert choose("auto", build("uncoded", n=many), **links, **common).way == "scatter"
    # a 39-node tree scatters too (measured on the cluster: 0.24 s an iteration, copies 0.32)
    wide = build("coded-reduce", n=3, L=3, s=1)
    assert choose("auto", wide, **links, **common).way == "scatter"
    # the master's port much faster than a worker's link: n copies beat a relay
    fast = choose("auto", flat8, master_rate=1e9, worker_rate=1e6, **common)
    assert fast.way == "isend"
    ring = build("ring-allreduce", n=8)
    assert choose("scatter", ring, **links, **common).way == "isend"
    # a flat code's dead worker's chunk is covered by the master; a tree's is not scattered
    assert choose("auto", flat8, **links, **{**common, "tolerant": True}).way == "scatter"
    tree = build("coded-reduce", n=8, L=1, s=1)
    assert choose("scatter", tree, **links, **{**common, "tolerant": True}).way == "isend"
    assert choose("scatter", flat2, master_rate=None, worker_rate=None, **common).way == ("scatter")
    assert choose("isend", flat8, **links, **common).way == "isend"


def test_a_trees_isend_stores_and_forwards_a_copy_per_child_at_every_level():
    copies = topology_named("tree").copies_seconds
    size, master, worker = 1e6, 25e6, 12.5e6
    wide, deep = build("coded-reduce", n=8, L=1, s=1), build("coded-reduce", n=2, L=3, s=1)
    assert copies(wide, size, master, worker) == pytest.approx(8 * size / master)
    assert copies(deep, size, master, worker) == pytest.approx(
        2 * size / master + 2 * 2 * size / worker
    )
    common = {"features": 125_000, "master_rate": master, "worker_rate": worker}
    for tree in (wide, deep):
        chosen = choose("auto", tree, tolerant=False, **common)
        assert chosen.way == "scatter"
        assert chosen.predicted["isend"] == pytest.approx(copies(tree, 8 * 125_001, master, worker))


@pytest.mark.mpi
@pytest.mark.parametrize(
    ("scheme", "params", "ranks"),
    [
        ("ye-abbe", {"n": 4, "d": 3, "s": 1, "m": 2}, 5),
        ("uncoded", {"n": 4}, 5),
        ("coded-reduce", {"n": 2, "L": 2, "s": 1}, 7),
    ],
    ids=["ye-abbe", "uncoded", "coded-reduce"],
)
def test_a_scattered_model_keeps_the_run_exact_and_a_straggler_forwards_all_the_same(
    tmp_path, logistic_data, scheme, params, ranks
):
    run = base_run(
        logistic_data,
        scheme={"name": scheme, "params": params},
        stragglers=LATE,
        runtime={"distribution": "scatter"},
        iterations=8,
    )
    job = run_config(tmp_path, run, ranks=ranks).check()
    reference = serial_trajectory(load_config(job.run_file))
    assert relative_errors(job.trajectory(), reference).max() <= 1e-9
    assert job.summary()["distribution"]["way"] == "scatter"
    log = job.log()
    assert log[0]["covered"] == []  # nobody is known slow before the first iteration
    # a straggler naps through its injected delay, polling: it forwards its chunk at once, so
    # the master covers only chunks a worker reported slow (here, on one machine: hardly any)
    slow_until: dict[int, int] = {}
    for before, record in itertools.pairwise(log):
        for chunk in before["slow_chunks"]:
            slow_until[chunk] = before["iteration"] + 20
        recent = {c for c, until in slow_until.items() if until >= record["iteration"]}
        assert set(record["covered"]) == recent
    workers = params["n"] if scheme != "coded-reduce" else 6
    for record in log:
        for message in record["messages"]:
            assert 0 <= message["model_last"] < workers  # every worker assembled its model


@pytest.mark.mpi
def test_a_persistent_straggler_never_forwards_and_never_holds_the_others(tmp_path, logistic_data):
    run = base_run(
        logistic_data,
        scheme={"name": "frc", "params": {"n": 4, "s": 1}},
        stragglers={"model": "none", "persistent": [2]},
        runtime={"distribution": "scatter"},
        iterations=6,
    )
    job = run_config(tmp_path, run, ranks=5).check()
    reference = serial_trajectory(load_config(job.run_file))
    assert relative_errors(job.trajectory(), reference).max() <= 1e-9
    assert all(2 in record["covered"] for record in job.log())
