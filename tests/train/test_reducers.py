"""The master's reducer (``gradcode.train.reducers``): which one a plan yields, and that each
reduces the messages workers would send to the sum of the partial gradients, computed here
independently. MPI runs of every kind are the other tests of ``tests/train``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from mpi4py import MPI

from gradcode.codes.tree import MASTER
from gradcode.runfile.config import parse_config
from gradcode.runfile.plan import build_plan
from gradcode.train.faults.roster import Roster
from gradcode.train.protocol import H
from gradcode.train.reducers.aggregating import AggregatingReducer
from gradcode.train.reducers.base import Reducer
from gradcode.train.reducers.choice import reducer_for
from gradcode.train.reducers.decoding import DecodingReducer
from gradcode.train.reducers.parent import TreeReduction
from gradcode.train.reducers.tree import TreeReducer
from gradcode.train.runtime import Links, RankContext
from gradcode.train.transport import Result

FEATURES = 5
REPETITION = {"name": "draco-repetition", "params": {"n": 4, "a": 1, "s": 1}}
UNCODED = {"name": "uncoded", "params": {"n": 4}}
DETOX = {"name": "detox", "params": {"n": 6, "r": 3}}
CODED_REDUCE = {"name": "coded-reduce", "params": {"n": 2, "L": 2, "s": 1}}


def _master(scheme: dict[str, Any], **overrides: Any) -> tuple[RankContext, Reducer]:
    run = {
        "iterations": 2,
        "data": {"prepared": "/nowhere"},
        "model": {"kind": "logistic"},
        "scheme": scheme,
        "optimizer": {"step": 0.5},
    } | overrides
    config = parse_config(run)
    plan = build_plan(config)
    ctx = RankContext(
        world=MPI.COMM_SELF,
        plan=plan,
        model=config.model.build(),
        features=FEATURES,
        rows=100,
        l2=0.0,
        parts={},
        poll=0.001,
    )
    tree = plan.topology.tree(plan.code)
    children = list(tree.children(MASTER)) if tree is not None else list(range(plan.workers))
    links = Links(MPI.COMM_SELF, down_comm=MPI.COMM_SELF, children=children)
    return ctx, reducer_for(ctx, links, Roster(ctx, links))


def _result(source: int, key: int, message: np.ndarray) -> Result:
    return Result(source, 0, key, np.zeros(H), message, message, message.nbytes, 0.0, 0.0)


def _flat_held(ctx: RankContext, partials: np.ndarray) -> dict[Any, Result]:
    """Every worker's messages, as its loop encodes them (``gradcode.train.worker``)."""
    code, plan = ctx.plan.code, ctx.plan
    keys = code.all_message_keys()
    held = {}
    for worker in range(code.n):
        mine = partials[list(plan.partitions_of(worker))]
        for key in code.message_keys(worker):
            message = code.encode_message(key, mine[: int(code.message_prefix(key))])
            held[key] = _result(worker + 1, keys.index(key), message)
    return held


@pytest.mark.parametrize(
    ("scheme", "overrides", "kind", "erasure", "names"),
    [
        (REPETITION, {}, DecodingReducer, "correct", True),
        (UNCODED, {}, DecodingReducer, None, False),
        (UNCODED, {"aggregator": {"name": "median"}}, AggregatingReducer, "aggregate", False),
        (DETOX, {"aggregator": {"name": "median"}}, AggregatingReducer, "aggregate", False),
        (CODED_REDUCE, {}, TreeReducer, None, False),
    ],
)
def test_the_plan_chooses_one_reducer(scheme, overrides, kind, erasure, names):
    """The tree where there is one, else the aggregator where there is one, else the code's
    decoder; liars are named (and ``Caught`` built) only where the plan says so."""
    _, reducer = _master(scheme, **overrides)
    assert type(reducer) is kind
    assert reducer.erasure == erasure
    assert (reducer.roster.caught is not None) is names


def test_a_detox_vote_names_the_workers_it_outvoted_under_an_aggregator():
    _, reducer = _master(DETOX, aggregator={"name": "median"})
    assert isinstance(reducer, AggregatingReducer) and reducer.votes
    _, plain = _master(UNCODED, aggregator={"name": "median"})
    assert isinstance(plain, AggregatingReducer) and not plain.votes


@pytest.mark.parametrize("scheme", [UNCODED, REPETITION])
def test_a_decoder_reduces_every_workers_messages_to_the_sum(scheme):
    ctx, reducer = _master(scheme)
    partials = np.random.default_rng(3).normal(size=(ctx.plan.partitions, FEATURES))
    held = _flat_held(ctx, partials)
    reducer.start(0)
    assert reducer.decodable(held)
    gradient, extras = reducer.reduce(held)
    np.testing.assert_allclose(gradient, partials.sum(axis=0), rtol=1e-10, atol=1e-12)
    assert extras.get("adversaries", []) == []


def test_an_aggregator_of_equal_values_gives_their_sum():
    """Every partition's gradient alike: the median is it, and the update the exact sum."""
    ctx, reducer = _master(UNCODED, aggregator={"name": "median"})
    row = np.random.default_rng(4).normal(size=FEATURES)
    partials = np.tile(row, (ctx.plan.partitions, 1))
    reducer.start(0)
    gradient, extras = reducer.reduce(_flat_held(ctx, partials))
    np.testing.assert_allclose(gradient, partials.sum(axis=0), rtol=1e-12)
    assert "aggregate_time" in extras


def test_a_tree_reduces_up_through_every_parent_to_the_sum():
    """Every node encodes as a worker does (``TreeReduction``, the object a tree node asks),
    the root's reducer decodes its children's messages."""
    ctx, reducer = _master(CODED_REDUCE)
    plan = ctx.plan
    tree = plan.topology.tree(plan.code)
    partials = np.random.default_rng(5).normal(size=(plan.partitions, FEATURES))
    sent: dict[int, np.ndarray] = {}
    for node in sorted(range(tree.n), key=tree.depth, reverse=True):
        own = partials[list(plan.partitions_of(node))]
        kids = list(tree.children(node))
        reduction = TreeReduction(tree, node)
        assert not kids or reduction.ready(kids)
        sent[node] = reduction.encode(own, {kid: sent[kid] for kid in kids} if kids else None)
    roots = list(tree.children(MASTER))
    held = {node: _result(j + 1, node, sent[node]) for j, node in enumerate(roots)}
    reducer.start(0)
    assert reducer.decodable(held)
    gradient, _ = reducer.reduce(held)
    np.testing.assert_allclose(gradient, partials.sum(axis=0), rtol=1e-10, atol=1e-12)
