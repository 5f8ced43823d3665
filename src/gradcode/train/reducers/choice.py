"""The master's reducer, chosen once from the plan: the topology's tree where results go up
one (``TreeReducer``), else the run's robust aggregator where it has one
(``AggregatingReducer``), else the code's own decoder (``DecodingReducer``)."""

from __future__ import annotations

from gradcode.runfile.plan import corrects, names_liars
from gradcode.train.faults.roster import Roster
from gradcode.train.reducers.aggregating import AggregatingReducer
from gradcode.train.reducers.base import Reducer
from gradcode.train.reducers.decoding import DecodingReducer
from gradcode.train.reducers.flat import FlatParts
from gradcode.train.reducers.forgery import Forgery
from gradcode.train.reducers.tree import TreeReducer
from gradcode.train.runtime import Links, RankContext
from gradcode.train.tolerance import run_tolerance


def reducer_for(ctx: RankContext, links: Links, roster: Roster) -> Reducer:
    """The reducer of the master of ``ctx.plan`` (module docstring)."""
    plan = ctx.plan
    code, config = plan.code, plan.config
    attacks = config.adversaries.plan()
    liars = bool(attacks.workers)
    tree = plan.topology.tree(code)
    if tree is not None:
        return TreeReducer(
            tree, roster, links.children, ctx.features, one_clock=ctx.one_clock, liars=liars
        )
    forgery = Forgery(
        code,
        attacks,
        attacks.attack() if liars else None,
        config.seed,
        roster.replaced,
        lambda worker: roster.child_ranks[worker][0],
    )
    parts = FlatParts(code, roster, forgery, ctx.features, liars)
    if config.aggregator is None:
        return DecodingReducer(parts, names=names_liars(plan))
    aggregator = config.aggregator.build()
    tolerance = run_tolerance(config, code, aggregator, attacks.lies)
    # the code's vote names the workers it outvoted, as its decoder would (an aggregator in
    # its place: the plan's ``names_liars`` is false, no liar is dropped for it)
    votes = corrects(code)
    return AggregatingReducer(parts, aggregator, tolerance, votes=votes)
