"""Paper 000/002's master-worker model: arrivals, units, multi-message links, validation."""

from collections.abc import Iterable

import numpy as np
import pytest

from gradcode.codes import GradientCode, build
from gradcode.timing import MasterWorkerModel, model_from_spec


def test_flat_arrivals_are_load_times_t1_plus_t2_over_m():
    model = MasterWorkerModel(lambda1=0.8, t1=1.6, lambda2=0.1, t2=6)
    code = build("ye-abbe", n=8, d=4, s=1, m=3)
    draws = model.sample(np.random.default_rng(0), 1000, 8)
    run = model.prepare(code)
    expected = 4 * draws["compute"] + draws["comm"] / 3
    arrivals = run.arrivals(draws)
    np.testing.assert_allclose(arrivals, expected, rtol=1e-14)
    outcome = run.run(draws)
    np.testing.assert_array_equal(outcome.times, np.sort(arrivals, axis=1)[:, 6])  # n - s = 7th
    assert (outcome.messages == 7).all()
    assert draws["compute"].min() >= 1.6 and draws["comm"].min() >= 6


def test_partitions_of_codes_with_k_not_n_count_as_n_over_k_subsets():
    model = MasterWorkerModel(lambda1=1, t1=0)
    code = build("binary", n=4, s=1, k=8)  # partitions half a subset each, loads 4
    draws = {"compute": np.ones((1, 4))}
    np.testing.assert_allclose(model.prepare(code).arrivals(draws), [[2.0, 2.0, 2.0, 2.0]])


class _Prefixes(GradientCode):
    """A toy multi-message code: worker i sends (i, j) after j + 1 partials; any q decode."""

    name = "toy"

    def __init__(self, n: int, r: int, q: int) -> None:
        self.n, self.k, self.s, self.r, self.q = n, n, 0, r, q

    def partitions(self, worker: int) -> tuple[int, ...]:
        return tuple((worker + t) % self.n for t in range(self.r))

    def message_keys(self, worker: int) -> tuple:
        return tuple((worker, j) for j in range(self.r))

    def message_prefix(self, key) -> int:
        return key[1] + 1

    def encode(self, worker, partials):
        raise NotImplementedError

    def is_decodable(self, keys: Iterable) -> bool:
        return len(set(keys)) >= self.q

    def decode_result(self, messages, length):
        raise NotImplementedError


def test_a_workers_messages_share_its_link_in_order():
    code = _Prefixes(n=3, r=3, q=5)
    model = MasterWorkerModel(lambda1=1.0, t1=0.1, lambda2=2.0, t2=0.5)
    draws = model.sample(np.random.default_rng(1), 200, 3)
    arrivals = model.prepare(code).arrivals(draws)
    for trial in range(200):
        for worker in range(3):
            free = -np.inf
            for j in range(3):
                ready = (j + 1) * draws["compute"][trial, worker]
                free = max(free, ready) + draws["comm"][trial, worker]
                assert arrivals[trial, 3 * worker + j] == pytest.approx(free, rel=1e-12)
    outcome = model.prepare(code).run(draws)
    np.testing.assert_array_equal(outcome.times, np.sort(arrivals, axis=1)[:, 4])
    assert (outcome.messages == 5).all()


def test_without_communication_message_j_is_ready_at_j_times_x():
    """Paper 002's model: the j-th computation finishes at j * X."""
    model = MasterWorkerModel(lambda1=10, t1=0.01)
    draws = model.sample(np.random.default_rng(2), 5, 3)
    arrivals = model.prepare(_Prefixes(n=3, r=2, q=2)).arrivals(draws)
    np.testing.assert_allclose(arrivals[:, 1::2], 2 * arrivals[:, 0::2])
    np.testing.assert_allclose(arrivals[:, 0::2], draws["compute"])


def test_per_type_rates_reach_the_right_workers():
    model = MasterWorkerModel(lambda1={"counts": [2, 2], "values": [100, 1]}, t1=[0, 0, 5, 5])
    draws = model.sample(np.random.default_rng(3), 20000, 4)
    np.testing.assert_allclose(draws["compute"].mean(axis=0), [0.01, 0.01, 6, 6], rtol=0.05)
    with pytest.raises(ValueError, match=r"parameters\.t1: describes 4 workers but crc has 5"):
        model.check(build("crc", n=5, s=1))


@pytest.mark.parametrize(
    "params, message",
    [
        ({"lambda1": 1}, r"parameters.t1: missing \(model master-worker needs it\)"),
        ({"lambda1": 1, "t1": 0, "mu": 3}, r"parameters.mu: unknown parameter of model"),
        ({"lambda1": 1, "t1": 0, "lambda2": 1}, "lambda2 and parameters.t2 must be given"),
        ({"lambda1": -1, "t1": 0}, r"parameters.lambda1: must be a finite number > 0"),
        ([1, 2], "parameters: must be a mapping"),
    ],
)
def test_parameters_are_validated_with_the_key(params, message):
    with pytest.raises(ValueError, match=message):
        model_from_spec("master-worker", params)


def test_ring_allreduce_needs_the_single_port_model():
    with pytest.raises(ValueError, match="simulates gradient codes, not ring-allreduce"):
        MasterWorkerModel(lambda1=1, t1=0).check(build("ring-allreduce", n=4))


class _CodedData(_Prefixes):
    """Like LCC: every worker computes on one coded part, a quarter of the data."""

    def data_fraction(self, key) -> float:
        return 0.25


def test_codes_of_the_data_declare_the_work_before_each_message():
    model = MasterWorkerModel(lambda1=1, t1=0)
    draws = {"compute": np.full((1, 8), 2.0)}
    # a quarter of the data is 2 of the 8 subsets: ready at 2 * T1 = 4
    np.testing.assert_allclose(model.prepare(_CodedData(n=8, r=1, q=3)).arrivals(draws), 4.0)
    np.testing.assert_allclose(model.prepare(_Prefixes(n=8, r=1, q=3)).arrivals(draws), 2.0)


def test_overhead_adds_a_constant_to_every_completion_and_is_not_a_delay_to_inject():
    from gradcode.runfile.stragglers import build_source

    code = build("ye-abbe", n=8, d=4, s=1, m=3)
    plain = MasterWorkerModel(lambda1=0.8, t1=1.6, lambda2=0.1, t2=6)
    fitted = MasterWorkerModel(lambda1=0.8, t1=1.6, lambda2=0.1, t2=6, overhead=0.5)
    draws = plain.sample(np.random.default_rng(0), 1000, 8)
    base, shifted = plain.prepare(code).run(draws), fitted.prepare(code).run(draws)
    assert np.allclose(shifted.times, base.times + 0.5)
    assert np.array_equal(shifted.messages, base.messages)  # received before decoding
    assert fitted.params()["overhead"] == 0.5 and "overhead" not in plain.params()
    with pytest.raises(ValueError, match=r"parameters\.overhead: must be a finite number >= 0"):
        MasterWorkerModel(lambda1=1, t1=1, overhead=-1)
    with pytest.raises(ValueError, match=r"stragglers\.params\.overhead: is the runtime"):
        build_source(
            "master-worker",
            {"lambda1": 1, "t1": 1, "overhead": 0.1},
            workers=4,
            partitions=4,
            seed=0,
            time_unit=0.01,
        )


def test_a_subclass_that_sets_its_own_attributes_needs_no_overhead():
    """Plug-in models written before ``overhead`` existed (the example plug-in's Pareto model
    sets ``compute``/``comm`` itself) keep working: the class default is 0."""

    class Own(MasterWorkerModel):
        name = "own"

        def __init__(self) -> None:
            self.compute = MasterWorkerModel(lambda1=1, t1=1).compute
            self.comm = None

    code = build("frc", n=4, s=1)
    model = Own()
    outcome = model.prepare(code).run(model.sample(np.random.default_rng(0), 10, 4))
    assert np.all(np.isfinite(outcome.times)) and "overhead" not in model.params()
