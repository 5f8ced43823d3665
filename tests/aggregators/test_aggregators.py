"""Robust aggregators: each against an independent computation on hand-made inputs, their
stated bound under every attack, their refusals, the run file's checks and the scaling from
the aggregator's mean to the gradient sum."""

from __future__ import annotations

import math
import statistics

import numpy as np
import pytest

from gradcode import aggregators, attacks
from gradcode.aggregators import AggregatorError
from gradcode.codes import build as build_code
from gradcode.errors import ParameterError, UnknownNameError
from gradcode.runfile.config import ConfigError, parse_config
from gradcode.runfile.plan import build_plan

RNG = np.random.default_rng(41)


def by_coordinate(inputs: np.ndarray, reduce) -> np.ndarray:
    """``reduce`` applied to each column as a Python list (no numpy in the reduction)."""
    return np.array([reduce([float(v) for v in inputs[:, j]]) for j in range(inputs.shape[1])])


# -- each aggregator against an independent computation -------------------------------------
def test_median_is_the_middle_value_of_each_coordinate():
    inputs = np.array([[1.0, 5.0, -2.0], [3.0, 1.0, 0.0], [2.0, 9.0, 7.0], [100.0, -4.0, 1.0]])
    got = aggregators.build("median").aggregate(inputs).value
    assert np.array_equal(got, [2.5, 3.0, 0.5])
    wide = RNG.standard_normal((9, 6))
    assert np.allclose(
        aggregators.build("median").aggregate(wide).value, by_coordinate(wide, statistics.median)
    )


def test_trimmed_mean_drops_floor_beta_n_at_each_end():
    inputs = np.array([[0.0], [1.0], [2.0], [3.0], [100.0]])
    # beta 0.2 of 5: one value off each end, (1 + 2 + 3) / 3
    assert aggregators.build("trimmed-mean", {"beta": 0.2}).aggregate(inputs).value[0] == 2.0
    assert aggregators.build("trimmed-mean", {"beta": 0.0}).aggregate(inputs).value[0] == 21.2
    wide = RNG.standard_normal((10, 4))

    def trimmed(values: list[float]) -> float:
        kept = sorted(values)[2:-2]  # beta 0.25 of 10: two off each end
        return sum(kept) / len(kept)

    got = aggregators.build("trimmed-mean", {"beta": 0.25}).aggregate(wide).value
    assert np.allclose(got, by_coordinate(wide, trimmed))


def brute_krum(inputs: np.ndarray, f: int, m: int) -> tuple[np.ndarray, tuple[int, ...]]:
    """Multi-Krum by its definition, with Python loops."""
    n = len(inputs)
    scores = []
    for i in range(n):
        distances = sorted(
            sum((a - b) ** 2 for a, b in zip(inputs[i], inputs[j], strict=True))
            for j in range(n)
            if j != i
        )
        scores.append(sum(distances[: n - f - 2]))
    chosen = sorted(sorted(range(n), key=lambda i: (scores[i], i))[:m])
    return inputs[chosen].mean(axis=0), tuple(chosen)


@pytest.mark.parametrize(("f", "m"), [(1, 1), (2, 1), (2, 4), (3, 6)])
def test_multi_krum_matches_the_brute_force_score(f, m):
    inputs = RNG.standard_normal((11, 5))
    inputs[:f] += 20.0  # the far ones
    got = aggregators.build("multi-krum", {"f": f, "m": m}).aggregate(inputs)
    value, chosen = brute_krum(inputs, f, m)
    assert got.selected == chosen and np.allclose(got.value, value)
    assert not set(chosen) & set(range(f))


def test_geometric_median_is_the_minimiser():
    # three collinear points: the middle one; four corners of a square: its centre
    line = np.array([[0.0, 0.0], [1.0, 1.0], [5.0, 5.0]])
    assert np.allclose(aggregators.build("geometric-median").aggregate(line).value, [1, 1])
    square = np.array([[0.0, 0.0], [2.0, 0.0], [0.0, 2.0], [2.0, 2.0]])
    assert np.allclose(aggregators.build("geometric-median").aggregate(square).value, [1, 1])
    inputs = RNG.standard_normal((9, 4))
    inputs[:3] *= 50
    result = aggregators.build("geometric-median", {"tol": 1e-10, "max_iter": 1000}).aggregate(
        inputs
    )
    assert result.info["converged"]
    z = result.value

    def objective(point: np.ndarray) -> float:
        return sum(math.dist(point, row) for row in inputs)

    # no step along a coordinate or towards an input lowers the sum of distances
    for direction in [*np.eye(4), *(inputs - z)]:
        unit = direction / np.linalg.norm(direction)
        assert objective(z) <= objective(z + 1e-4 * unit) + 1e-12
        assert objective(z) <= objective(z - 1e-4 * unit) + 1e-12


def test_weiszfeld_that_does_not_converge_returns_its_last_iterate_and_says_so():
    inputs = RNG.standard_normal((7, 3))
    inputs[:2] += 30
    short = aggregators.build("geometric-median", {"tol": 1e-12, "max_iter": 1}).aggregate(inputs)
    assert short.info == {"iterations": 1, "converged": False}

    def objective(point: np.ndarray) -> float:
        return float(np.linalg.norm(inputs - point, axis=1).sum())

    # no worse than the coordinate-wise median it started from
    assert objective(short.value) <= objective(np.median(inputs, axis=0))


def brute_bulyan(inputs: np.ndarray, f: int) -> np.ndarray:
    """Bulyan by its definition: Krum picks one at a time, then the beta values nearest the
    median of each coordinate are averaged."""
    pool, picked = list(range(len(inputs))), []
    while len(picked) < len(inputs) - 2 * f:
        neighbours = max(len(pool) - f - 2, 1)

        def score(i: int, pool: list[int] = pool, neighbours: int = neighbours) -> float:
            d = sorted(float(np.sum((inputs[i] - inputs[j]) ** 2)) for j in pool if j != i)
            return sum(d[:neighbours])

        best = min(pool, key=lambda i: (score(i), i))
        picked.append(best)
        pool.remove(best)
    chosen = inputs[picked]
    beta = len(picked) - 2 * f

    def around_median(values: list[float]) -> float:
        centre = statistics.median(values)
        kept = sorted(values, key=lambda v: abs(v - centre))[:beta]
        return sum(kept) / beta

    return by_coordinate(chosen, around_median)


def test_bulyan_matches_its_definition():
    inputs = RNG.standard_normal((11, 4))
    inputs[:2] -= 15
    got = aggregators.build("bulyan", {"f": 2}).aggregate(inputs).value
    assert np.allclose(got, brute_bulyan(inputs, 2))


# -- tolerance: within the stated bound of the honest mean under every attack ----------------
CONFIGURED = {
    "median": {},
    "trimmed-mean": {"beta": 0.2},
    "multi-krum": {"f": 2, "m": 3},
    "geometric-median": {},
    "bulyan": {"f": 2},
}
STRONG = {
    "noise": {"scale": 100.0},
    "reversed": {"scale": 100.0},
    "constant": {"value": 1e4},
    "alie": {"z": 1.5},
    "ipm": {"epsilon": 2.0},
}


def test_every_built_in_is_configured_here():
    assert set(CONFIGURED) <= set(aggregators.available())
    assert set(STRONG) <= set(attacks.available())


@pytest.mark.parametrize("attack", sorted(STRONG))
@pytest.mark.parametrize("name", sorted(CONFIGURED))
def test_f_attacked_inputs_leave_the_output_within_the_stated_bound(name, attack):
    n, f = 11, 2
    aggregator = aggregators.build(name, CONFIGURED[name])
    assert aggregator.tolerates(n) >= f
    forge = attacks.build(attack, STRONG[attack])
    for trial in range(5):
        rng = np.random.default_rng([trial, n])
        honest_all = rng.standard_normal((n, 8)) + 3.0
        liars = sorted(int(w) for w in rng.choice(n, size=f, replace=False))
        forged = forge.apply(dict(enumerate(honest_all)), liars, rng)
        inputs = np.stack([forged[w] for w in range(n)])
        honest = np.delete(honest_all, liars, axis=0)
        error = np.linalg.norm(aggregator.aggregate(inputs).value - honest.mean(axis=0))
        # the geometric median's bound is its minimiser's; Weiszfeld stops within 1e-7
        slack = 1 + 1e-6
        assert error <= aggregator.error_bound(honest, n) * slack, (trial, error)


def test_the_plain_mean_is_what_the_attacks_destroy():
    """The bound means something: the unprotected mean leaves it under a strong attack."""
    honest_all = np.random.default_rng(0).standard_normal((11, 8)) + 3.0
    forged = attacks.build("reversed", {"scale": 100.0}).apply(
        dict(enumerate(honest_all)), [0, 1], np.random.default_rng(1)
    )
    inputs = np.stack([forged[w] for w in range(11)])
    honest = honest_all[2:]
    error = np.linalg.norm(inputs.mean(axis=0) - honest.mean(axis=0))
    for name, params in CONFIGURED.items():
        assert error > aggregators.build(name, params).error_bound(honest, 11)


# -- refusals -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "params", "n", "byzantine", "expected"),
    [
        ("bulyan", {"f": 2}, 10, 0, "aggregator bulyan needs n >= 4f + 3 (got n=10, f=2)"),
        ("multi-krum", {"f": 2}, 6, 0, "aggregator multi-krum needs n >= 2f + 3 (got n=6, f=2)"),
        (
            "multi-krum",
            {"f": 1, "m": 6},
            6,
            0,
            "aggregator multi-krum needs m <= n - f (got m=6, n=6, f=1)",
        ),
        (
            "median",
            {},
            6,
            3,
            "aggregator median tolerates 2 Byzantine inputs among n=6 (got 3: n >= 2f + 1)",
        ),
        (
            "trimmed-mean",
            {"beta": 0.1},
            10,
            2,
            "aggregator trimmed-mean tolerates 1 Byzantine input among n=10 (got 2: f <= "
            "floor(beta n), beta=0.1)",
        ),
        (
            "multi-krum",
            {"f": 1},
            9,
            2,
            "aggregator multi-krum tolerates 1 Byzantine input among n=9 (got 2: f=1 as "
            "configured)",
        ),
    ],
)
def test_settings_an_aggregator_cannot_handle_are_refused_in_one_line(
    name, params, n, byzantine, expected
):
    aggregator = aggregators.build(name, params)
    with pytest.raises(AggregatorError) as caught:
        aggregator.require(n, byzantine)
    assert str(caught.value) == expected
    if byzantine == 0:
        with pytest.raises(AggregatorError, match=r"needs n >= |needs m <= "):
            aggregator.aggregate(np.zeros((n, 3)))


@pytest.mark.parametrize(
    ("name", "params", "expected"),
    [
        ("trimmed-mean", {"beta": 0.5}, "aggregator trimmed-mean needs beta in [0, 0.5)"),
        ("multi-krum", {"f": -1}, "aggregator multi-krum needs f >= 0"),
        ("multi-krum", {"m": 0}, "aggregator multi-krum needs m >= 1"),
        ("geometric-median", {"tol": 0}, "aggregator geometric-median needs tol in (0, 1)"),
        ("geometric-median", {"max_iter": 1.5}, "aggregator geometric-median needs an integer"),
        ("bulyan", {"g": 1}, "aggregator bulyan: "),
    ],
)
def test_bad_parameters_are_one_line(name, params, expected):
    with pytest.raises(ParameterError) as caught:
        aggregators.build(name, params)
    assert str(caught.value).startswith(expected) and "\n" not in str(caught.value)


def test_unknown_aggregator_names_the_known_ones():
    with pytest.raises(UnknownNameError, match="median"):
        aggregators.build("krumm")


# -- the scaling convention -----------------------------------------------------------------
@pytest.mark.parametrize(
    ("scheme", "params"), [("uncoded", {"n": 6}), ("ignore-stragglers", {"n": 6, "s": 1})]
)
def test_total_times_the_mean_of_honest_values_is_the_gradient(scheme, params):
    """What the master steps along: ``total`` times the aggregator's mean; with nobody lying
    and nothing trimmed that is the exact sum (ignore-stragglers: the rescaled sum)."""
    code = build_code(scheme, **params)
    assert code.capabilities.aggregable
    g = RNG.standard_normal((code.k, 5))
    messages = {w: code.encode(w, g[list(code.partitions(w))]) for w in range(code.n - code.s)}
    inputs = code.aggregation_inputs(messages, 5)
    assert inputs.total == code.n and len(inputs.values) == code.aggregation_count()
    mean = aggregators.build("trimmed-mean", {"beta": 0.0}).aggregate(inputs.values).value
    used = g[: code.n - code.s]
    assert np.allclose(mean * inputs.total, used.sum(axis=0) * code.n / len(used))
    assert code.aggregation_corrupted([1, 1, 3]) == 2


# -- the run file ---------------------------------------------------------------------------
def run(**overrides):
    raw = {
        "iterations": 3,
        "data": {"prepared": "/nowhere"},
        "model": {"kind": "logistic"},
        "scheme": {"name": "uncoded", "params": {"n": 7}},
        "optimizer": {"step": 0.5},
        "aggregator": {"name": "median"},
    }
    raw.update(overrides)
    return raw


def error_of(raw) -> str:
    with pytest.raises(ConfigError) as caught:
        build_plan(parse_config(raw))
    assert "\n" not in str(caught.value)
    return str(caught.value)


def test_an_aggregator_makes_adversaries_on_uncoded_acceptable():
    plan = build_plan(parse_config(run(adversaries={"workers": [0, 3], "attack": "alie"})))
    assert plan.config.aggregator is not None and plan.config.aggregator.name == "median"
    krum = {"name": "multi-krum", "params": {"f": 2, "m": 3}}
    build_plan(parse_config(run(aggregator=krum, adversaries={"workers": [0, 3]})))


@pytest.mark.parametrize(
    ("overrides", "expected"),
    [
        (
            {"scheme": {"name": "frc", "params": {"n": 4, "s": 1}}},
            "aggregator: median replaces the sum of per-worker values, which only scheme ",
        ),
        (
            {"scheme": {"name": "coded-reduce", "params": {"n": 2, "L": 2, "s": 1}}},
            "(coded-reduce, a tree code, decodes its own)",
        ),
        (
            {"scheme": {"name": "ring-allreduce", "params": {"n": 4}}},
            "(ring-allreduce, a ring code, decodes its own)",
        ),
        (
            {"aggregator": {"name": "bulyan", "params": {"f": 1}}},
            "aggregator.params: aggregator bulyan needs n >= 4f + 3 (got n=6, f=1) (uncoded "
            "hands it 6 values)",
        ),
        (
            {"aggregator": {"name": "median"}, "adversaries": {"workers": [0, 1, 2, 3]}},
            "adversaries.workers: aggregator median tolerates 3 Byzantine inputs among n=7 (got "
            "4: n >= 2f + 1) (uncoded hands it 7 values, 4 of them from workers [0, 1, 2, 3])",
        ),
        ({"aggregator": {"name": "krumm"}}, "aggregator.name: unknown aggregator 'krumm'"),
        (
            {"aggregator": {"name": "trimmed-mean", "params": {"beta": 1}}},
            "aggregator.params: aggregator trimmed-mean needs beta in [0, 0.5)",
        ),
        ({"aggregator": {"params": {}}}, "aggregator.name: "),
        ({"aggregator": {"name": "median", "f": 1}}, "aggregator.f: unknown key"),
        (
            {"adversaries": {"workers": [0]}, "aggregator": None},
            "an aggregator: block makes an aggregable code robust",
        ),
    ],
)
def test_run_file_refusals_are_one_line_naming_the_key(overrides, expected):
    raw = run(**overrides)
    if raw.get("aggregator") is None:
        raw.pop("aggregator")
    if "bulyan" in str(overrides.get("aggregator")):
        raw["scheme"] = {"name": "uncoded", "params": {"n": 6}}
    assert expected in error_of(raw)


def test_a_run_without_aggregator_keeps_its_fingerprint_and_one_with_it_changes_it():
    plain = run()
    plain.pop("aggregator")
    before = parse_config(plain).fingerprint()
    assert parse_config(run()).fingerprint() != before
    trimmed = run(aggregator={"name": "trimmed-mean", "params": {"beta": 0.2}})
    assert parse_config(trimmed).fingerprint() != parse_config(run()).fingerprint()
