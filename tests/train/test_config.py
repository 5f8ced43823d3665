"""The run YAML is validated strictly where it enters (no MPI needed here)."""

from __future__ import annotations

import numpy as np
import pytest

from gradcode.runfile.config import ConfigError, NodeLoss, parse_config
from gradcode.runfile.plan import build_plan, check_world
from gradcode.runfile.stragglers import DrawnAhead, build_source


def minimal(**overrides):
    run = {
        "iterations": 3,
        "data": {"prepared": "/nowhere"},
        "model": {"kind": "logistic"},
        "scheme": {"name": "frc", "params": {"n": 4, "s": 1}},
        "optimizer": {"step": 0.5},
    }
    run.update(overrides)
    return run


def error_of(run) -> str:
    with pytest.raises(ConfigError) as caught:
        build_plan(parse_config(run))
    message = str(caught.value)
    assert "\n" not in message
    return message


def test_minimal_run_gets_the_documented_defaults():
    config = parse_config(minimal())
    assert config.seed == 0
    assert config.optimizer.kind == "gd" and config.optimizer.step == 0.5
    assert config.stragglers.model == "none" and config.stragglers.persistent == ()
    assert config.checkpoint.every == 0 and config.log.metrics_every == 1
    assert config.bandwidth is None
    plan = build_plan(config)
    assert (plan.topology.name, plan.workers, plan.partitions, plan.world_size) == ("flat", 4, 4, 5)


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"bogus": 1}, "bogus: unknown key (allowed: name, output"),
        ({"iterations": 0}, "iterations: must be >= 1"),
        ({"iterations": "ten"}, "iterations: must be an integer (got 'ten')"),
        ({"data": {"prepared": "/x", "dataset": "amazon"}}, "data: give exactly one of"),
        ({"data": {"prepared": "/x", "variant": "tandon"}}, "data.variant: only with data.dataset"),
        ({"data": {"prepared": "/x", "colour": 1}}, "data.colour: unknown key"),
        ({"model": {"kind": "svm"}}, "model.kind: unknown model 'svm' (available: "),
        ({"model": {"kind": "mlp", "params": {"hidden": [0]}}}, "model.params: model mlp: hidden"),
        (
            {"model": {"kind": "logistic", "params": {"hidden": [3]}}},
            "model.params: model logistic",
        ),
        ({"model": {"kind": "linear", "l2": "1/n"}}, "model.l2: must be a number >= 0 or"),
        ({"optimizer": {"kind": "adam", "step": 1}}, "optimizer.kind: must be one of gd,"),
        ({"optimizer": {"step": -1}}, "optimizer.step: must be a finite number > 0"),
        ({"optimizer": {"step": {"c1": 1}}}, "optimizer.step.c2: missing"),
        ({"scheme": {"name": "frcx"}}, "scheme.name: unknown scheme 'frcx'"),
        (
            {"scheme": {"name": "frc", "params": {"n": 4, "s": 2}}},
            "scheme.params: frc needs (s + 1) | n",
        ),
        ({"scheme": {"name": "frc", "params": {"n": 4, "t": 2}}}, "scheme.params: frc:"),
        (
            {"scheme": {"name": "ring-allreduce", "params": {"n": 4, "k": 1}}},
            "scheme.params: ring-allreduce:",
        ),
        ({"stragglers": {"model": "gamma"}}, "stragglers.model: unknown model 'gamma'"),
        (
            {"stragglers": {"model": "fixed", "params": {"compute": [1, 2]}}},
            "stragglers.params.compute: has 2 entries",
        ),
        (
            {"stragglers": {"model": "random-set", "params": {"count": 1}}},
            "stragglers.params.delay: missing",
        ),
        (
            {"stragglers": {"model": "master-worker", "params": {"t1": 1, "lambda1": 1, "t2": 1}}},
            "stragglers.params.lambda2",
        ),
        ({"stragglers": {"persistent": [0, 0]}}, "stragglers.persistent: lists a worker twice"),
        ({"stragglers": {"persistent": [9]}}, "stragglers.persistent: worker 9 does not exist"),
        (
            {"stragglers": {"persistent": [0, 1]}},
            "stragglers.persistent: frc {'n': 4, 's': 1} cannot decode without workers [0, 1]",
        ),
        (
            {"adversaries": {"workers": [1]}},
            "adversaries.workers: only scheme byzshield, detox, draco-cyclic, ",
        ),
        (
            {"scheme": {"name": "lcc", "params": {"n": 5, "k": 2}}},
            "scheme.name: lcc codes the data and is exact for linear regression only",
        ),
        (
            {"bandwidth": {"bytes_per_second": 0}},
            "bandwidth.bytes_per_second: must be a finite number > 0",
        ),
        ({"checkpoint": {"every": -1}}, "checkpoint.every: must be >= 0"),
        ({"runtime": {"poll": 1}}, "runtime.poll: unknown key"),
    ],
)
def test_bad_configuration_is_one_line_naming_the_key(change, expected):
    assert expected in error_of(minimal(**change))


def test_ring_cannot_lose_a_worker_and_needs_n_plus_one_ranks():
    ring = minimal(scheme={"name": "ring-allreduce", "params": {"n": 3}})
    plan = build_plan(parse_config(ring))
    implementation = plan.scheme_params()["implementation"]
    assert (plan.topology.name, plan.world_size, implementation) == ("ring", 4, "explicit")
    assert "ring-allreduce cannot finish" in error_of(ring | {"stragglers": {"persistent": [1]}})
    with pytest.raises(ConfigError, match=r"needs n \+ 1 = 4 MPI ranks \(got 5\)"):
        check_world(plan, 5)


def test_tree_counts_its_nodes():
    plan = build_plan(
        parse_config(minimal(scheme={"name": "coded-reduce", "params": {"n": 2, "L": 2, "s": 1}}))
    )
    assert (plan.topology.name, plan.workers, plan.world_size) == ("tree", 6, 7)


def test_l2_one_over_n_resolves_against_the_training_rows():
    config = parse_config(minimal(model={"kind": "logistic", "l2": "1/N"}))
    assert config.model.l2_value(26210) == 1 / 26210


def test_fingerprint_ignores_length_and_outputs_but_not_the_trajectory():
    base = parse_config(minimal())
    assert (
        parse_config(minimal(iterations=50, output="/elsewhere")).fingerprint()
        == base.fingerprint()
    )
    assert parse_config(minimal(seed=1)).fingerprint() != base.fingerprint()
    assert parse_config(minimal(optimizer={"step": 0.6})).fingerprint() != base.fingerprint()


def test_injected_delays_depend_only_on_seed_and_iteration():
    params = {"lambda1": 0.8, "t1": 1.6, "lambda2": 0.1, "t2": 6}
    source = build_source("master-worker", params, workers=8, partitions=8, seed=3, time_unit=0.01)
    again = build_source("master-worker", params, workers=8, partitions=8, seed=3, time_unit=0.01)
    late = again.delays(7)  # asked out of order, after nothing else
    for t in range(8):
        first = source.delays(t)
    np.testing.assert_array_equal(source.delays(7).compute, late.compute)
    assert not np.array_equal(first.compute, source.delays(6).compute)
    assert (late.compute >= 0.016 - 1e-12).all() and (late.comm >= 0.06 - 1e-12).all()
    other = build_source("master-worker", params, workers=8, partitions=8, seed=4, time_unit=0.01)
    assert not np.array_equal(other.delays(7).compute, late.compute)


def test_delays_drawn_ahead_are_the_sources_whether_drawn_ahead_or_not():
    def source():
        params = {"lambda1": 0.8, "t1": 1.6}
        return build_source("master-worker", params, workers=5, partitions=5, seed=2, time_unit=1)

    plain, ahead = source(), DrawnAhead(source())
    ahead.draw(3)
    for t in (3, 4, 3, 2):  # drawn ahead, not drawn, drawn again, skipped back
        np.testing.assert_array_equal(ahead.delays(t).compute, plain.delays(t).compute)
    ahead.draw(6)
    ahead.draw(6)  # drawn once
    np.testing.assert_array_equal(ahead.delays(6).compute, plain.delays(6).compute)
    assert not np.array_equal(ahead.delays(7).compute, ahead.delays(6).compute)


def test_single_port_model_sets_the_receivers_port_from_its_tc():
    single_port = {"model": "single-port", "params": {"a": 0.1, "mu": 2, "tc": 3, "data": 100}}
    plan = build_plan(parse_config(minimal(stragglers=single_port | {"time_unit": 0.01})))
    assert plan.bandwidth.vector_seconds == pytest.approx(0.03)
    assert plan.bandwidth.rate(16) == pytest.approx(16 * 8 / 0.03)
    delays = plan.delay_source().delays(0)
    # X = a + Exp(mu) per point, 100 / 4 points per partition, 10 ms per unit
    assert (delays.compute >= 0.1 * 25 * 0.01 - 1e-12).all() and not delays.comm.any()
    both = minimal(stragglers=single_port, bandwidth={"bytes_per_second": 1e6})
    assert "bandwidth: the single-port straggler model emulates its own tc" in error_of(both)
    wrong = minimal(stragglers={"model": "master-worker", "params": {"t1": [1, 2], "lambda1": 1}})
    assert error_of(wrong) == "stragglers.params.t1: describes 2 workers but the scheme has 4"


def test_random_set_delays_exactly_count_workers():
    source = build_source(
        "random-set", {"count": 2, "delay": 0.3}, workers=6, partitions=6, seed=0, time_unit=1.0
    )
    for t in range(20):
        start = source.delays(t).start
        assert sorted(start.tolist()) == [0.0] * 4 + [0.3] * 2


@pytest.mark.parametrize(
    ("faults", "expected"),
    [
        ({"kill": [{"worker": 9, "iteration": 1}]}, "faults.kill: worker 9 does not exist"),
        ({"kill": [{"worker": 1}]}, "faults.kill[0].iteration: missing"),
        ({"kill": [{"worker": 1, "iteration": 2, "x": 1}]}, "faults.kill[0].x: unknown key"),
        ({"tolerate": False, "kill": [{"worker": 1, "iteration": 2}]}, "needs faults.tolerate"),
        (
            {"silent": [{"worker": 0, "iteration": 1}, {"worker": 1, "iteration": 1}]},
            "faults.silent: frc {'n': 4, 's': 1} cannot decode without workers [0, 1]",
        ),
        (
            {"kill": [{"worker": 1, "iteration": 2}], "silent": [{"worker": 1, "iteration": 3}]},
            "faults.silent: worker 1 is also in faults.kill",
        ),
        ({"retry": 1}, "faults.retry: unknown key"),
        ({"spares": -1}, "faults.spares: must be >= 0"),
        ({"spares": 1.5}, "faults.spares: must be an integer"),
        ({"tolerate": False, "spares": 1}, "faults.spares: needs faults.tolerate"),
        (
            {"lose_node": {"worker": 1, "iteration": 3, "how": "melt"}},
            "faults.lose_node.how: must be one of kill, link (got 'melt')",
        ),
        ({"lose_node": {"worker": 1, "how": "kill"}}, "faults.lose_node.iteration: missing"),
        (
            {"lose_node": {"worker": 1, "iteration": 0, "how": "kill"}},
            "faults.lose_node.iteration: must be >= 1",
        ),
        (
            {"lose_node": {"worker": 4, "iteration": 3, "how": "kill"}},
            "faults.lose_node.worker: worker 4 does not exist",
        ),
        (
            {"tolerate": False, "lose_node": {"worker": 1, "iteration": 3, "how": "link"}},
            "faults.lose_node: needs faults.tolerate",
        ),
        (
            {
                "kill": [{"worker": 1, "iteration": 2}],
                "lose_node": {"worker": 1, "iteration": 3, "how": "kill"},
            },
            "faults.lose_node: worker 1 is also in faults.kill",
        ),
        (
            {"spares": 1, "lose_node": {"worker": 1, "iteration": 3, "how": "kill"}},
            "faults.lose_node: not with faults.spares",
        ),
    ],
)
def test_faults_are_validated_where_they_enter(faults, expected):
    assert expected in error_of(minimal(faults=faults))


def test_spares_add_ranks_and_replace_master_worker_workers_only():
    plan = build_plan(parse_config(minimal(faults={"spares": 2})))
    assert plan.spares == 2 and plan.world_size == plan.workers + 3
    with pytest.raises(ConfigError, match=r"job needs n \+ 1 \+ 2 spares = 7 MPI ranks \(got 5\)"):
        check_world(plan, 5)
    ring = {"name": "ring-allreduce", "params": {"n": 3}}
    assert (
        "faults.spares: a spare replaces a master-worker code's worker; ring-allreduce is a "
        "ring code" in error_of(minimal(scheme=ring, faults={"spares": 1}))
    )


def test_kills_beyond_what_the_code_tolerates_are_allowed_and_change_no_fingerprint():
    # the run then stops in one line (what such a run shows): not a configuration error
    run = minimal(faults={"kill": [{"worker": 0, "iteration": 1}, {"worker": 1, "iteration": 1}]})
    config = parse_config(run)
    build_plan(config)
    assert config.fingerprint() == parse_config(minimal()).fingerprint()


def test_a_lost_nodes_worker_is_lost_for_good():
    loss = {"worker": 2, "iteration": 5, "how": "link"}
    config = parse_config(
        minimal(faults={"silent": [{"worker": 0, "iteration": 1}]} | {"lose_node": loss})
    )
    assert config.faults.lose_node == NodeLoss(2, 5, "link")
    assert config.lost_workers() == [0, 2] and config.faults.failing_workers() == [0, 2]
    build_plan(config)
