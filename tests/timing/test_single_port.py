"""Paper 001's model: single-port master, CodedReduce trees, Ring-AllReduce, Theorem 2."""

import numpy as np
import pytest

from gradcode.codes import GradientCode, build, scheme_class
from gradcode.codes.coded_reduce import MASTER, theorem2_bounds
from gradcode.timing import SinglePortModel


def _model(tc=0.05, data=1200, a=5e-5, mu=2e4):
    return SinglePortModel(a=a, mu=mu, tc=tc, data=data)


def test_master_takes_messages_one_at_a_time():
    code = build("uncoded", n=3)
    unit = np.array([[1.0, 3.0, 2.0]]) / 400  # 400 data points each: ready at 1, 3, 2
    outcome = _model(tc=0.5).prepare(code).run({"unit": unit})
    assert outcome.times.tolist() == [3.5]  # 1 -> 1.5, 2 -> 2.5, 3 -> 3.5
    sgd = build("ignore-stragglers", n=3, s=1)
    outcome = _model(tc=2.0).prepare(sgd).run({"unit": unit})
    assert outcome.times.tolist() == [5.0] and outcome.messages.tolist() == [2]  # 1 -> 3, 2 -> 5


def test_gc_message_of_reduced_length_takes_tc_over_m():
    code = build("ye-abbe", n=4, d=2, s=0, m=2)
    unit = np.full((1, 4), 1 / 600)  # load 2 of 4 partitions: 600 points, all ready at 1
    outcome = _model(tc=1.0).prepare(code).run({"unit": unit})
    assert outcome.times == pytest.approx([3.0])  # four messages of tc / 2


def _tree_by_events(code, compute, tc):
    """Per trial, per parent: receive in order, decode by the inner code's is_decodable."""
    inner = code.inner_code
    times = []
    for row in compute:
        usable = {}

        def decode(parent, row=row, usable=usable):
            kids = list(code.children(parent))
            ready = [usable[c] for c in kids]
            free, held = -np.inf, []
            for j in np.argsort(ready, kind="stable"):
                free = max(free, ready[j]) + tc
                held.append(int(j))
                if inner.is_decodable(held):
                    return free
            return np.inf

        for depth in range(code.L, 0, -1):
            for node in code.nodes_at_depth(depth):
                own = row[node]
                usable[node] = own if depth == code.L else max(own, decode(node))
        times.append(decode(MASTER))
    return np.array(times)


@pytest.mark.parametrize(
    "params",
    [
        dict(n=3, L=2, s=1),
        dict(n=4, L=2, s=1),
        dict(n=4, L=2, s=1, inner="crc"),
        dict(n=2, L=3, s=1),
        dict(n=3, L=2, s=0),
    ],
)
def test_tree_matches_an_event_by_event_simulation(params):
    code = build("coded-reduce", **params)
    model = _model(tc=0.3, data=code.k * 10)
    draws = model.sample(np.random.default_rng(4), 60, code.n)
    outcome = model.prepare(code).run(draws)
    compute = draws["unit"] * 10 * code.load(0)
    np.testing.assert_allclose(outcome.times, _tree_by_events(code, compute, 0.3), rtol=1e-12)


def test_tree_without_transfer_time_is_the_codes_decodability_rule():
    rng = np.random.default_rng(5)
    for params in scheme_class("coded-reduce").parameter_grid(21):
        code = build("coded-reduce", **params)
        model = _model(tc=0.0, data=code.k)
        draws = model.sample(rng, 30, code.n)
        times = model.prepare(code).run(draws).times
        compute = draws["unit"] * code.load(0)
        np.testing.assert_array_equal(times, GradientCode.completion_times(code, compute))


def test_vectorised_tree_completion_matches_is_decodable():
    """``CodedReduce.completion_times`` (added for timing) against the generic rule."""
    rng = np.random.default_rng(6)
    checked = 0
    for params in scheme_class("coded-reduce").parameter_grid(21):
        code = build("coded-reduce", **params)
        arrivals = rng.exponential(size=(40, code.n))
        arrivals[rng.random(arrivals.shape) < 0.15] = np.inf
        arrivals[:5] = np.round(arrivals[:5], 1)
        fast = code.completion_times(arrivals)
        np.testing.assert_array_equal(fast, GradientCode.completion_times(code, arrivals))
        checked += 1
    assert checked > 50


def test_tree_counts_messages_received_by_all_parents():
    code = build("coded-reduce", n=3, L=2, s=1, inner="crc")  # 12 nodes, 4 parents
    model = _model(tc=1e-9, data=code.k / code.load(0))  # one data point per node
    unit = np.arange(1.0, 13.0)[None, :]  # compute times, increasing by node index
    outcome = model.prepare(code).run({"unit": unit})
    # nodes 0-2 (layer 1) compute in 1, 2, 3; leaves 3-11 in 4..12. Parents 0 and 1 decode
    # after n - s = 2 children (at 5 and 8), so does the master (at 8, from nodes 0 and 1);
    # parent 2's children are still on their way at 8 and are not counted: 2 + 2 + 0 + 2
    assert outcome.times == pytest.approx([8.0]) and outcome.messages.tolist() == [6]


def _ring_by_rounds(compute, tc):
    n = compute.shape[1]
    c = tc / n
    sent = compute + c
    for _ in range(2 * (n - 1) - 1):
        sent = np.maximum(sent, np.roll(sent, 1, axis=1)) + c
    return sent.max(axis=1)


def test_ring_allreduce_closed_form_matches_its_rounds():
    rng = np.random.default_rng(7)
    for n in (2, 3, 5, 12):
        ring = build("ring-allreduce", n=n)
        compute = rng.exponential(size=(50, n))
        np.testing.assert_allclose(ring.completion(compute, 0.7), _ring_by_rounds(compute, 0.7))
        assert ring.messages() == 2 * n * (n - 1)
    outcome = (
        _model(tc=1.0, data=80).prepare(build("ring-allreduce", n=4)).run({"unit": np.ones((1, 4))})
    )
    assert outcome.times == pytest.approx([20 + 6 / 4])


def test_theorem2_bounds_hold_as_n_grows():
    """E[T_CR] lies between eqs. (7) and (8) (o-terms dropped) once n is moderately large,
    and below the proof's bound before its last relaxation; at n = 8 the dropped o(n) term
    still matters (the mean sits below the asymptotic lower bound)."""
    params = dict(a=5e-5, mu=2e4, tc=0.05, d=49920)
    model = _model(tc=0.05, data=49920)
    rng = np.random.default_rng(8)
    means = {}
    for n in (8, 16, 24, 32):
        code = build("coded-reduce", n=n, L=2, s=n // 4, inner="crc")
        draws = model.sample(rng, 1500, code.n)
        means[n] = model.prepare(code).run(draws).times.mean()
        bounds = theorem2_bounds(n, 2, n // 4, **params)
        assert model.extras(code)["theorem2_lower"] == bounds.lower
        if n >= 16:
            assert bounds.lower < means[n] < bounds.upper, (n, means[n], bounds)
            assert bounds.computation < means[n] < bounds.upper_proof
    assert means[8] < theorem2_bounds(8, 2, 2, **params).lower
    # the communication term grows linearly in n: successive differences are near L (n - s) tc
    assert means[32] - means[24] == pytest.approx(2 * 6 * 0.05, rel=0.15)


def test_per_worker_parameters_and_scalars_are_checked():
    with pytest.raises(ValueError, match=r"parameters\.tc: must be a single number"):
        SinglePortModel(a=0, mu=1, tc=[1, 2], data=10)
    with pytest.raises(ValueError, match=r"parameters\.data: must be a finite number > 0"):
        SinglePortModel(a=0, mu=1, tc=1, data=0)
    model = SinglePortModel(a=0, mu=[1, 2, 3], tc=1, data=10)
    with pytest.raises(ValueError, match=r"parameters\.mu: describes 3 workers but uncoded has 4"):
        model.check(build("uncoded", n=4))
    assert model.extras(build("coded-reduce", n=3, L=1, s=1)) == {}
