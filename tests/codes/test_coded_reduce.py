import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gradcode.codes import NotDecodableError, build
from gradcode.codes.coded_reduce import (
    MASTER,
    CodedReduce,
    r_cr,
    theorem2_bounds,
    tree_size,
)
from tests.codes.harness import assert_exact, independent_sum

SMALL_TREES = [
    {"n": 3, "L": 2, "s": 1},
    {"n": 2, "L": 3, "s": 1},
    {"n": 4, "L": 2, "s": 1},
    {"n": 4, "L": 2, "s": 2},
    {"n": 3, "L": 2, "s": 2},
    {"n": 2, "L": 2, "s": 1, "inner": "crc"},
    {"n": 4, "L": 2, "s": 1, "inner": "crc"},
    {"n": 1, "L": 4, "s": 0},
]


def small_trees(max_nodes=40):
    """(n, L, s, inner) with at most ``max_nodes`` workers."""

    def valid(p):
        n, L, s, inner = p
        return tree_size(n, L) <= max_nodes and s < n and (inner != "frc" or n % (s + 1) == 0)

    return st.tuples(
        st.integers(1, 6), st.integers(1, 4), st.integers(0, 5), st.sampled_from(["auto", "crc"])
    ).filter(valid)


def brute_usable(code, responders, node):
    """Whether ``node``'s full message can be formed: straight from the definition."""
    if node != MASTER and node not in responders:
        return False
    kids = code.children(node)
    if not kids:
        return True
    usable = [j for j, child in enumerate(kids) if brute_usable(code, responders, child)]
    return code.inner_code.is_decodable(usable)


# -- Theorem 1 and the allocation -------------------------------------------------------------
def test_r_cr_paper_example_and_flat_case():
    assert r_cr(3, 2, 1) == Fraction(4, 15)
    assert r_cr(12, 1, 3) == Fraction(4, 12)  # L = 1: Tandon's (s + 1) / n
    assert r_cr(5, 3, 4) == Fraction(1, 3)  # full replication per parent: 1 / L


@given(st.integers(2, 30), st.integers(1, 6), st.integers(0, 29))
@settings(max_examples=50, deadline=None)
def test_r_cr_closed_form(n, L, s):
    s = s % n
    if n == s + 1:
        assert r_cr(n, L, s) == Fraction(1, L)
        return
    # geometric series: 1 / sum_{l=1}^{L} q^l with q = n / (s + 1)
    expected = Fraction((s + 1) ** L * (n - s - 1), n * (n**L - (s + 1) ** L))
    assert r_cr(n, L, s) == expected
    # the optimality chain of Appendix C holds with equality at r_CR
    size = Fraction(s + 1, n)
    for _ in range(L - 1):
        size = Fraction(s + 1, n) * (size - r_cr(n, L, s))
    assert size == r_cr(n, L, s)


@pytest.mark.parametrize("params", [*SMALL_TREES, {"n": 5, "L": 2, "s": 2}])
def test_every_node_computes_exactly_r_cr(params):
    code = build("coded-reduce", **params)
    assert code.n == tree_size(params["n"], params["L"])
    assert all(Fraction(int(load), code.k) == code.r for load in code.loads())
    assert code.r == r_cr(params["n"], params["L"], params["s"])
    for node in range(code.n):
        assert len(set(code.partitions(node))) == code.load(node)
        assert np.all(code.coefficients(node) != 0)


def _integral_k(n, L, s, k):
    """Whether ``k`` partitions let every load and every block be whole (recomputed here)."""
    r = r_cr(n, L, s)
    if (r * k).denominator != 1:
        return False
    remaining = Fraction(k)
    for _ in range(L):
        if (remaining / n).denominator != 1:
            return False
        remaining = remaining / n * (s + 1) - r * k
    return remaining == 0


@pytest.mark.parametrize(
    ("params", "k"),
    [((3, 2, 1), 15), ((4, 2, 1), 12), ((2, 3, 1), 6), ((12, 2, 1), 84), ((3, 1, 1), 3)],
)
def test_k_is_the_smallest_integral_choice(params, k):
    n, L, s = params
    code = build("coded-reduce", n=n, L=L, s=s)
    assert code.k == k
    assert _integral_k(n, L, s, k)
    assert not any(_integral_k(n, L, s, smaller) for smaller in range(1, k))


def test_paper_example_2_sizes():
    # (3, 2)-regular tree, s = 1: T(1, i) gets 2/3 of the data, its root keeps 4/15, the rest
    # is cut into 3 blocks of 2/15 and each leaf gets 2 of them
    code = build("coded-reduce", n=3, L=2, s=1, inner="crc")
    assert code.k == 15
    for node in code.nodes_at_depth(1):
        assert np.count_nonzero(code.subtree_coefficients(node)) == 10
        assert code.load(node) == 4
    for node in code.nodes_at_depth(2):
        assert np.count_nonzero(code.subtree_coefficients(node)) == 4
        assert set(code.partitions(node)) <= set(
            np.flatnonzero(code.subtree_coefficients(code.parent(node)))
        )


# -- exact recovery -----------------------------------------------------------------------------
@pytest.mark.parametrize("params", SMALL_TREES)
def test_exact_for_every_pattern(params):
    code = build("coded-reduce", **params)
    report = assert_exact(code, exhaustive=True)
    assert report.patterns_checked == report.patterns_total == code.count_patterns()


@pytest.mark.parametrize(
    "params",
    [
        {"n": 3, "L": 3, "s": 2},
        {"n": 3, "L": 3, "s": 1},
        {"n": 5, "L": 2, "s": 2},
        {"n": 12, "L": 2, "s": 3},
        {"n": 12, "L": 2, "s": 1, "inner": "crc"},
        {"n": 4, "L": 3, "s": 1, "inner": "crc"},
    ],
)
def test_exact_on_random_patterns_of_larger_trees(params):
    assert_exact(build("coded-reduce", **params), exhaustive=False, limit=60)


@given(small_trees(), st.integers(0, 2**32 - 1))
@settings(max_examples=40, deadline=None)
def test_exact_on_generated_trees(tree, seed):
    n, L, s, inner = tree
    code = build("coded-reduce", n=n, L=L, s=s, inner=inner)
    assert_exact(code, exhaustive=False, limit=10, seed=seed)


@pytest.mark.parametrize("params", SMALL_TREES[:5])
def test_central_decode_agrees_with_the_distributed_run(params):
    code = build("coded-reduce", **params)
    rng = np.random.default_rng(5)
    instance, partials = code.random_instance(rng, 23)
    reference = independent_sum(partials)
    for pattern in code.patterns(exhaustive=False, rng=rng, limit=30):
        tree = code.run_pattern(instance, pattern, rng).gradient
        central = code.decode(code.pattern_messages(instance, pattern, rng), 23)
        np.testing.assert_allclose(tree, reference, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(central, tree, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("params", [{"n": 3, "L": 2, "s": 1}, {"n": 2, "L": 3, "s": 1}])
def test_message_sent_up_is_the_coded_gradient_of_the_subtree(params):
    code = build("coded-reduce", **params)
    partials = np.random.default_rng(2).standard_normal((code.k, 9))
    sent = {}
    for depth in range(code.L, 0, -1):
        for node in code.nodes_at_depth(depth):
            heard = {u: sent[u] for u in code.children(node)}
            sent[node] = code.encode_node(node, partials[list(code.partitions(node))], heard)
            np.testing.assert_allclose(
                sent[node], code.subtree_coefficients(node) @ partials, rtol=1e-12, atol=1e-12
            )
    np.testing.assert_array_equal(code.subtree_coefficients(MASTER), np.ones(code.k))
    gradient = code.decode_root({u: sent[u] for u in code.children(MASTER)}, 9).gradient
    np.testing.assert_allclose(gradient, independent_sum(partials), rtol=1e-12)


@pytest.mark.parametrize("params", SMALL_TREES[:4])
def test_node_weights_recombine_to_all_ones(params):
    code = build("coded-reduce", **params)
    rng = np.random.default_rng(0)
    for pattern in code.patterns(exhaustive=False, rng=rng, limit=20):
        total = np.zeros(code.k)
        for node, weight in code.node_weights(pattern.responders).items():
            np.add.at(total, list(code.partitions(node)), weight * code.coefficients(node))
        np.testing.assert_allclose(total, np.ones(code.k), atol=1e-10)


def test_repeated_decode_reuses_cached_weights():
    code = build("coded-reduce", n=4, L=2, s=1, inner="crc")
    rng = np.random.default_rng(1)
    instance, _ = code.random_instance(rng, 31)
    pattern = next(code.patterns(exhaustive=False, rng=rng, limit=1))
    messages = code.pattern_messages(instance, pattern, rng)
    first = code.decode(messages, 31)

    def fail(_local):
        raise AssertionError("per-parent coefficients recomputed")

    code._rule.coefficients = fail
    np.testing.assert_array_equal(code.decode(dict(reversed(messages.items())), 31), first)


# -- decodability -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "params",
    [{"n": 2, "L": 2, "s": 1}, {"n": 3, "L": 2, "s": 1}, {"n": 2, "L": 2, "s": 1, "inner": "crc"}],
)
def test_is_decodable_matches_definition_on_every_subset(params):
    code = build("coded-reduce", **params)
    partials = np.random.default_rng(3).standard_normal((code.k, 5))
    own = {v: code.encode(v, partials[list(code.partitions(v))]) for v in range(code.n)}
    for size in range(code.n + 1):
        for responders in itertools.combinations(range(code.n), size):
            expected = brute_usable(code, set(responders), MASTER)
            assert code.is_decodable(responders) == expected, responders
            if expected:
                decoded = code.decode({v: own[v] for v in responders}, 5)
                np.testing.assert_allclose(decoded, partials.sum(axis=0), atol=1e-10)
            else:
                with pytest.raises(NotDecodableError):
                    code.decode({v: own[v] for v in responders}, 5)


@given(small_trees(), st.data())
@settings(max_examples=50, deadline=None)
def test_is_decodable_matches_definition_on_random_sets(tree, data):
    n, L, s, inner = tree
    code = build("coded-reduce", n=n, L=L, s=s, inner=inner)
    responders = data.draw(st.sets(st.integers(0, code.n - 1)))
    assert code.is_decodable(responders) == brute_usable(code, responders, MASTER)


def _fewest_additions(code, responders):
    others = [v for v in range(code.n) if v not in responders]
    for extra in range(len(others) + 1):
        for added in itertools.combinations(others, extra):
            if code.is_decodable(set(responders) | set(added)):
                return extra
    raise AssertionError("the whole tree must decode")


@pytest.mark.parametrize(
    "params", [{"n": 2, "L": 2, "s": 1}, {"n": 3, "L": 2, "s": 1}, {"n": 4, "L": 2, "s": 1}]
)
def test_not_decodable_says_exactly_how_many_and_which(params):
    code = build("coded-reduce", **params)
    rng = np.random.default_rng(4)
    checked = 0
    while checked < 25:
        responders = {v for v in range(code.n) if rng.random() < 0.55}
        if code.is_decodable(responders):
            continue
        checked += 1
        with pytest.raises(NotDecodableError, match="master cannot decode") as info:
            code.decode({v: np.zeros(3) for v in responders}, 3)
        assert info.value.needed == _fewest_additions(code, responders)
        assert len(info.value.candidates) == info.value.needed
        assert not set(info.value.candidates) & responders
        assert code.is_decodable(responders | set(info.value.candidates))


def test_frc_parent_needs_one_child_per_group_only():
    code = build("coded-reduce", n=4, L=1, s=1)
    assert code.inner == "frc"
    assert code.is_decodable({0, 2}) and code.is_decodable({1, 3})
    assert not code.is_decodable({0, 1})
    crc = build("coded-reduce", n=4, L=1, s=1, inner="crc")
    assert not crc.is_decodable({0, 2}) and crc.is_decodable({0, 2, 3})


def test_straggling_parent_loses_its_subtree():
    code = build("coded-reduce", n=3, L=2, s=1)
    everyone = set(range(code.n))
    assert code.is_decodable(everyone - {0})  # one layer-1 straggler
    # layer-1 node 1 responds but two of its three children straggle: it cannot send
    assert not code.is_decodable(everyone - {0} - {6, 7})
    assert code.is_decodable(everyone - {2} - {6})


def test_min_responders_is_attained():
    code = build("coded-reduce", n=4, L=2, s=1, inner="crc")
    keep = set()
    frontier = [MASTER]
    while frontier:
        kids = list(code.children(frontier.pop()))[: 4 - 1]
        keep |= set(kids)
        frontier += [k for k in kids if not code.is_leaf(k)]
    assert len(keep) == code.min_responders() == 3 + 9
    assert code.is_decodable(keep)
    assert not code.is_decodable(keep - {max(keep)})


# -- tree and patterns --------------------------------------------------------------------------
@pytest.mark.parametrize(("n", "L"), [(3, 2), (2, 3), (1, 3), (4, 1)])
def test_tree_navigation(n, L):
    code = build("coded-reduce", n=n, L=L, s=0)
    assert code.branching == n and code.L == L
    assert [len(code.nodes_at_depth(d)) for d in range(L + 1)] == [n**d for d in range(L + 1)]
    assert list(code.nodes_at_depth(0)) == [MASTER] and code.depth(MASTER) == 0
    assert list(code.children(MASTER)) == list(code.nodes_at_depth(1))
    for node in range(code.n):
        assert node in code.children(code.parent(node))
        assert code.depth(code.parent(node)) == code.depth(node) - 1
        assert code.is_leaf(node) == (code.depth(node) == L) == (len(code.children(node)) == 0)
    assert len(code.parents()) == code.n // n


def test_patterns_have_s_stragglers_under_every_parent():
    code = build("coded-reduce", n=3, L=2, s=1)
    patterns = list(code.patterns(exhaustive=True))
    assert len(patterns) == code.count_patterns() == math.comb(3, 1) ** 4
    assert len({p.responders for p in patterns}) == len(patterns)
    for pattern in patterns:
        for parent in code.parents():
            kids = set(code.children(parent))
            assert len(kids - pattern.responders) == 1
    random = list(code.patterns(exhaustive=False, rng=np.random.default_rng(0), limit=7))
    assert len(random) == 7 and all(len(p.responders) == code.n - 4 for p in random)


def test_parameter_grid_bounds_the_number_of_workers():
    grid = list(CodedReduce.parameter_grid(12))
    assert {"n": 3, "L": 2, "s": 1} in grid  # auto: crc, (s + 1) does not divide n
    assert {"n": 3, "L": 2, "s": 2} in grid and {"n": 3, "L": 2, "s": 2, "inner": "crc"} in grid
    assert {"n": 12, "L": 1, "s": 11} in grid and {"n": 1, "L": 12, "s": 0} in grid
    for params in grid:
        code = build("coded-reduce", **params)
        assert code.n <= 12
        assert build("coded-reduce", **code.params()).params() == code.params()
    assert not any(p["L"] >= 3 and p["n"] >= 2 for p in grid)  # (2, 3) has 14 workers


# -- errors -------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"n": 3, "L": 2, "s": 3}, r"coded-reduce needs s < n \(got n=3, s=3\)"),
        ({"n": 3, "L": 0, "s": 1}, r"coded-reduce needs L >= 1 \(got L=0\)"),
        ({"n": 0, "L": 2, "s": 0}, r"coded-reduce needs n >= 1 \(got n=0\)"),
        ({"n": 3, "L": 2.0, "s": 1}, r"coded-reduce needs an integer L"),
        ({"n": 3, "L": 2, "s": 1, "inner": "mds"}, r"needs inner in .* \(got inner='mds'\)"),
        ({"n": 3, "L": 2, "s": 1, "inner": "frc"}, r"inner='frc' needs \(s \+ 1\) \| n"),
        ({"n": 3, "L": 2, "s": 1, "seed": -1}, r"needs seed >= 0 \(got seed=-1\)"),
    ],
)
def test_invalid_parameters_name_the_constraint(params, message):
    with pytest.raises(ValueError, match=message):
        build("coded-reduce", **params)


def test_misuse_of_the_node_api_is_rejected():
    code = build("coded-reduce", n=3, L=2, s=1)
    leaf = code.nodes_at_depth(2)[0]
    with pytest.raises(ValueError, match=r"node 0 needs partials of shape \(4, l\)"):
        code.encode(0, np.zeros((3, 5)))
    with pytest.raises(ValueError, match=r"node 12 is not in 0..11"):
        code.partitions(12)
    with pytest.raises(ValueError, match=r"nodes \[3\] are not children of node -1"):
        code.decode_root({3: np.zeros(5)}, 5)
    with pytest.raises(ValueError, match=f"leaf {leaf} has no children"):
        code.encode_node(leaf, np.zeros((4, 5)), {0: np.zeros(5)})
    with pytest.raises(NotDecodableError, match="node 0 cannot decode its children") as info:
        code.encode_node(0, np.zeros((4, 5)), {3: np.zeros(5)})
    assert info.value.needed == 1 and info.value.candidates == (4, 5)
    with pytest.raises(ValueError, match=r"unknown nodes \[-2, 40\]"):
        code.is_decodable([0, 40, -2])
    with pytest.raises(ValueError, match=r"message 0 has shape \(4,\), expected \(5,\)"):
        code.decode({v: np.zeros(5 if v else 4) for v in range(code.n)}, 5)
    with pytest.raises(ValueError, match=r"has layers 0..2 \(got 3\)"):
        code.nodes_at_depth(3)


# -- Theorem 2 ----------------------------------------------------------------------------------
def test_theorem2_bounds_formulas():
    n, L, s, d, mu, a, tc = 12, 2, 3, 6552, 1.0, 5e-5, 0.05
    bounds = theorem2_bounds(n, L, s, d=d, mu=mu, a=a, tc=tc)
    load = float(r_cr(n, L, s)) * d
    assert r_cr(n, L, s) == Fraction(1, 12)
    head = load / mu * math.log(n / s) + a * load
    assert bounds.lower == pytest.approx(head + (n - s + L - 1) * tc)
    assert bounds.upper == pytest.approx(head + n * L * tc)
    harmonic = sum(1 / i for i in range(s + 1, n + 1))
    assert bounds.computation == pytest.approx(load / mu * harmonic + a * load)
    assert bounds.upper_proof == pytest.approx(bounds.computation + L * (n - s) * tc)
    assert bounds.lower <= bounds.upper


def test_theorem2_computation_is_the_mean_order_statistic():
    n, s, d, mu, a = 10, 3, 300.0, 2.0, 0.01
    bounds = theorem2_bounds(n, 1, s, d=d, mu=mu, a=a, tc=0.0)
    load = float(r_cr(n, 1, s)) * d
    rng = np.random.default_rng(0)
    times = a * load + rng.exponential(load / mu, size=(200_000, n))
    fastest = np.sort(times, axis=1)[:, n - s - 1].mean()
    assert fastest == pytest.approx(bounds.computation, rel=5e-3)


def test_theorem2_rejects_zero_stragglers_and_bad_rates():
    with pytest.raises(ValueError, match=r"needs s >= 1 .* \(got s=0\)"):
        theorem2_bounds(4, 2, 0, d=100, mu=1, a=0.1, tc=0.1)
    with pytest.raises(ValueError, match=r"needs mu > 0 \(got mu=0\)"):
        theorem2_bounds(4, 2, 1, d=100, mu=0, a=0.1, tc=0.1)
    with pytest.raises(ValueError, match=r"needs finite tc >= 0 \(got tc=-1\)"):
        theorem2_bounds(4, 2, 1, d=100, mu=1, a=0.1, tc=-1)
