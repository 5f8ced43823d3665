import itertools
import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from gradcode.codes import NotDecodableError, build
from gradcode.codes.gc_mmc import GCMMC
from tests.codes.harness import assert_exact, independent_sum


def spans_ones(rows: np.ndarray) -> bool:
    """Rank test: the all-ones vector lies in the span of ``rows``."""
    if len(rows) == 0:
        return False
    ones = np.ones(rows.shape[1])
    solution = np.linalg.lstsq(rows.T, ones, rcond=None)[0]
    return bool(np.abs(solution @ rows - ones).max() < 1e-8)


def messages_for(code, partials, keys):
    return {key: code.encode_message(key, partials[list(code.partitions(key[0]))]) for key in keys}


def progress_keys(progress):
    return [(w, j) for w, p in enumerate(progress) for j in range(p)]


# -- the paper's examples ------------------------------------------------------------------
def test_example1_correlated_design():
    code = build("gc-mmc", n=6, r=3, design="correlated", order=2)
    assert code.partitions(0) == (0, 1, 2) and code.partitions(4) == (4, 5, 0)
    assert code.messages_per_worker == 2 and code.threshold == 5 and code.s == 2
    assert [code.message_prefix(key) for key in code.message_keys(0)] == [2, 3]
    # "c2 can be sent by both worker 1 and worker 2" (1-indexed)
    assert code.coded_message((0, 1)) == code.coded_message((1, 0))
    assert np.flatnonzero(code.encoding_matrix()[code._key_index[(0, 1)], :, 0]).tolist() == [1, 2]
    # "when workers 1, 2 and 4 each send two coded partial gradients" the master decodes
    keys = progress_keys([2, 2, 0, 2, 0, 0])
    assert code.is_decodable(keys)
    gc = build("gc-mmc", n=6, r=3, order=3)  # the original GC needs four workers
    assert not gc.is_decodable([(0, 0), (1, 0), (3, 0)])
    assert gc.is_decodable([(0, 0), (1, 0), (3, 0), (5, 0)])
    rng = np.random.default_rng(0)
    partials = rng.standard_normal((6, 13))
    decoded = code.decode(messages_for(code, partials, keys), 13)
    np.testing.assert_allclose(decoded, independent_sum(partials), rtol=1e-10, atol=1e-12)


def test_example1_uncorrelated_design_virtual_workers():
    code = build("gc-mmc", n=6, r=3, design="uncorrelated", orders=[3, 2])
    assert code.orders == (2, 3) and code.messages_per_worker == 2
    assert code.threshold == 8 and not code.mds  # 6 * 2 - (3 + 2) + 1, above K = 6
    # the virtual worker gets the first two partials of its real worker
    masks = code.encoding_matrix()[:, :, 0] != 0
    for worker in range(6):
        first, second = (code._key_index[key] for key in code.message_keys(worker))
        parts = code.partitions(worker)
        assert np.flatnonzero(masks[first]).tolist() == sorted(parts[:2])
        assert np.flatnonzero(masks[second]).tolist() == sorted(parts)
    assert (masks.sum(axis=0) == 5).all()  # "in each column there are exactly 7 zeros"
    # three finished workers, two non-persistent stragglers with one message, one silent
    progress = [2, 2, 2, 1, 1, 0]
    assert code.progress_decodable(progress)
    assert code.is_decodable(progress_keys(progress))
    assert not build("gc-mmc", n=6, r=3, order=3).is_decodable([(0, 0), (1, 0), (2, 0)])
    assert_exact(code, exhaustive=True)


def test_hybrid_example_and_fractional_repetition():
    code = build("gc-mmc", n=5, r=5, design="hybrid", orders=[5, 3])
    assert code.threshold == 3  # "the master waits for exactly 3 coded messages"
    rng = np.random.default_rng(1)
    partials = rng.standard_normal((5, 9))
    full = code.encode_message((2, 1), partials[list(code.partitions(2))])
    np.testing.assert_array_equal(full, partials[list(code.partitions(2))].sum(axis=0))
    assert code.is_decodable([(2, 1)]) and not code.is_decodable([(0, 0), (1, 0)])
    assert code.is_decodable([(0, 0), (1, 0), (4, 0)])
    assert_exact(code, exhaustive=True)
    frc = build("gc-mmc", n=8, r=4, clusters=2, design="hybrid", orders=[4])
    assert frc.s == 3 and frc.messages_per_worker == 1
    assert frc.is_decodable([(1, 0), (6, 0)]) and not frc.is_decodable([(1, 0), (2, 0)])
    assert_exact(frc, exhaustive=True)


def test_uncoded_mmc_sends_the_partials_themselves():
    code = build("gc-mmc", n=6, r=3, order=1)
    rng = np.random.default_rng(2)
    partials = rng.standard_normal((3, 7))
    for j, key in enumerate(code.message_keys(4)):
        assert code.message_prefix(key) == j + 1
        np.testing.assert_array_equal(code.encode_message(key, partials[: j + 1]), partials[j])
    assert code.threshold == 6 and code.s == 2


@pytest.mark.parametrize(("n", "r"), [(5, 1), (6, 3), (7, 7), (9, 4)])
def test_plain_gc_is_the_cyclic_code(n, r):
    code = build("gc-mmc", n=n, r=r)
    assert (code.threshold, code.s, code.messages_per_worker) == (n - r + 1, r - 1, 1)
    for alive in itertools.combinations(range(n), n - r + 1):
        assert code.is_decodable([(w, 0) for w in alive])
    for alive in itertools.combinations(range(n), n - r):
        assert not code.is_decodable([(w, 0) for w in alive])
    assert_exact(code, exhaustive=True)


def test_paper_fig1_schemes_build_and_decode():
    schemes = GCMMC.paper_fig1_schemes()
    assert set(schemes) == {"GC", "UC-MMC", "GC-MMC-1", "GC-MMC-2"}
    facts = {label: (c.messages_per_worker, c.threshold, c.s) for label, c in schemes.items()}
    assert facts == {
        "GC": (1, 31, 9),
        "UC-MMC": (10, 40, 9),
        "GC-MMC-1": (5, 5, 9),  # "each worker can send up to 5 coded partial gradients"
        "GC-MMC-2": (3, 7, 7),
    }
    for code in schemes.values():
        assert code.n == 40 and code.k == 40 and code.load(0) == 10
        report = assert_exact(code, exhaustive=False, limit=60, seed=3)
        assert report.max_relative_error < 1e-9


# -- the decodability rule is exact ---------------------------------------------------------
MDS_CASES = [
    {"n": 6, "r": 4, "design": "correlated", "order": 2},
    {"n": 7, "r": 5, "design": "correlated", "order": 3},
    {"n": 8, "r": 8, "design": "correlated", "order": 4},
    {"n": 5, "r": 5, "design": "uncorrelated", "orders": [3, 5]},
    {"n": 6, "r": 6, "design": "uncorrelated", "orders": [4, 5, 6]},
    {"n": 8, "r": 8, "design": "uncorrelated", "orders": [6, 8]},
    {"n": 6, "r": 6, "design": "hybrid", "orders": [3, 5, 6]},
]


@pytest.mark.parametrize("params", MDS_CASES)
def test_every_threshold_set_decodes_and_no_smaller_one(params):
    code = build("gc-mmc", **params)
    assert code.mds
    rows = code.local_encoding()
    coded = range(len(rows) - (1 if code.design == "hybrid" else 0))
    for ids in itertools.combinations(coded, code.threshold):
        assert spans_ones(rows[list(ids)]), ids
    for ids in itertools.combinations(coded, code.threshold - 1):
        assert not spans_ones(rows[list(ids)]), ids


@pytest.mark.parametrize(
    "params",
    [
        {"n": 6, "r": 3, "design": "uncorrelated", "orders": [2, 3]},
        {"n": 5, "r": 4, "design": "uncorrelated", "orders": [1, 3, 4]},
        {"n": 6, "r": 6, "design": "hybrid", "orders": [1, 2, 6]},
    ],
)
def test_matching_rule_equals_rank_test_when_threshold_exceeds_cluster(params):
    code = build("gc-mmc", **params)
    assert not code.mds
    rows = code.local_encoding()
    coded = range(len(rows) - (1 if code.design == "hybrid" else 0))
    agree = 0
    for size in range(1, code.threshold + 1):
        for ids in itertools.combinations(coded, size):
            expected = spans_ones(rows[list(ids)])
            assert code._local.ok(set(ids)) == expected, ids
            assert expected or size < code.threshold  # any threshold many suffice
            agree += 1
    assert agree > 0
    # some set of threshold - 1 does not decode (the paper's count is tight)
    assert any(
        not spans_ones(rows[list(ids)]) for ids in itertools.combinations(coded, code.threshold - 1)
    )


@pytest.mark.parametrize(
    "params",
    [
        {"n": 8, "r": 4, "clusters": 2, "design": "correlated", "order": 2},
        {"n": 12, "r": 3, "clusters": 3, "design": "uncorrelated", "orders": [2, 3]},
        {"n": 10, "r": 5, "clusters": 2, "design": "hybrid", "orders": [3, 5]},
        {"n": 9, "r": 9, "design": "correlated", "order": 5},
    ],
)
def test_is_decodable_matches_rank_of_received_rows(params):
    code = build("gc-mmc", **params)
    encoding = code.encoding_matrix()[:, :, 0]
    keys = code.all_message_keys()
    rng = np.random.default_rng(4)
    decided = set()
    for _ in range(300):
        chosen = [keys[i] for i in np.flatnonzero(rng.random(len(keys)) < rng.random())]
        rows = encoding[[code._key_index[key] for key in chosen]]
        assert code.is_decodable(chosen) == spans_ones(rows)
        decided.add(code.is_decodable(chosen))
    assert decided == {True, False}


@pytest.mark.parametrize(
    "params",
    [
        {"n": 7, "r": 4, "design": "correlated", "order": 2},
        {"n": 6, "r": 6, "design": "uncorrelated", "orders": [3, 6]},
        {"n": 6, "r": 3, "design": "uncorrelated", "orders": [2, 3]},
        {"n": 6, "r": 6, "design": "hybrid", "orders": [4, 6]},
    ],
)
def test_stragglers_tolerated_is_exact(params):
    code = build("gc-mmc", **params)
    full = code.messages_per_worker

    def survives(silent):
        return code.progress_decodable([0 if w in silent else full for w in range(code.n)])

    assert all(survives(set(c)) for c in itertools.combinations(range(code.n), code.s))
    assert not all(survives(set(c)) for c in itertools.combinations(range(code.n), code.s + 1))
    assert code.min_responders() == code.n - code.s


@pytest.mark.parametrize(
    "params",
    [
        {"n": 7, "r": 5, "design": "correlated", "order": 2},
        {"n": 6, "r": 6, "design": "correlated", "order": 1},
        {"n": 6, "r": 5, "design": "uncorrelated", "orders": [3, 4, 5]},
        {"n": 6, "r": 6, "design": "hybrid", "orders": [2, 6]},
        {"n": 5, "r": 5, "design": "hybrid", "orders": [4, 5]},
        {"n": 6, "r": 3, "design": "uncorrelated", "orders": [2, 3]},
    ],
)
def test_closed_form_pattern_counts_match_search(params):
    code = build("gc-mmc", **params)
    listed = code.minimal_progress_vectors()
    assert sorted(listed) == sorted(code._local.search_minimal())
    assert len(listed) == code.count_patterns() == len(set(listed))
    assert sum(1 for _ in code.patterns(exhaustive=True)) == code.count_patterns()


# -- encoding, decoding, errors ---------------------------------------------------------------
def test_messages_need_only_their_prefix_and_duplicates_decode():
    code = build("gc-mmc", n=8, r=5, clusters=1, order=3)
    rng = np.random.default_rng(5)
    partials = rng.standard_normal((8, 21))
    messages = {}
    for worker in range(8):
        mine = partials[list(code.partitions(worker))]
        for key in code.message_keys(worker):
            need = code.message_prefix(key)
            messages[key] = code.encode_message(key, mine[:need])
            np.testing.assert_allclose(messages[key], code.encode_message(key, mine), rtol=0)
    # every copy of every coded message arrives: duplicates must count once
    assert code.coded_message((0, 1)) == code.coded_message((1, 0))
    decoded = code.decode(messages, 21)
    np.testing.assert_allclose(decoded, independent_sum(partials), rtol=1e-10, atol=1e-12)
    again = code.decode(messages, 21)  # cached coefficients
    np.testing.assert_array_equal(decoded, again)
    assert code.decode_result(messages, 21).condition >= 1


def test_not_decodable_says_what_is_missing():
    code = build("gc-mmc", n=12, r=3, clusters=2, order=2)
    keys = [(0, 0), (0, 1), (6, 0), (7, 0), (8, 0), (9, 0), (10, 0)]
    assert not code.is_decodable(keys)
    with pytest.raises(NotDecodableError, match=r"5 distinct coded messages per cluster") as info:
        code.decode({key: np.zeros(4) for key in keys}, 4)
    assert info.value.needed == 3
    assert info.value.candidates and all(code.cluster_of(k[0]) == 0 for k in info.value.candidates)
    assert (1, 0) not in info.value.candidates  # carries c_1, already held via (0, 1)
    with pytest.raises(ValueError, match="unknown message key"):
        code.is_decodable([(12, 0)])


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"n": 10, "r": 2, "clusters": 3}, r"clusters \| n \(got n=10, clusters=3\)"),
        ({"n": 8, "r": 5, "clusters": 2}, r"r <= n / clusters \(got r=5, n=8, clusters=2\)"),
        ({"n": 6, "r": 3, "order": 4}, r"1 <= order <= r \(got order=4, r=3\)"),
        ({"n": 6, "r": 3, "order": 0}, r"1 <= order <= r \(got order=0, r=3\)"),
        ({"n": 6, "r": 3, "design": "nope"}, r"design in .* \(got design='nope'\)"),
        ({"n": 6, "r": 3, "design": "uncorrelated"}, "non-empty orders"),
        ({"n": 6, "r": 3, "orders": [2, 3]}, "takes order, not orders"),
        ({"n": 6, "r": 3, "design": "uncorrelated", "orders": [2, 3], "order": 2}, "not order"),
        ({"n": 6, "r": 3, "design": "uncorrelated", "orders": [2, 2, 3]}, "distinct orders"),
        ({"n": 6, "r": 3, "design": "uncorrelated", "orders": [1, 2]}, r"max\(orders\) == r"),
        ({"n": 6, "r": 3, "design": "hybrid", "orders": [2, 3]}, r"n / clusters == r"),
        ({"n": 10, "r": 5, "design": "uncorrelated", "orders": [2, 5]}, "at most 8 workers"),
        ({"n": 2.5, "r": 1}, "integer n"),
    ],
)
def test_invalid_parameters_name_the_constraint(params, message):
    with pytest.raises(ValueError, match=message):
        build("gc-mmc", **params)


def test_progress_vector_must_cover_every_worker():
    code = build("gc-mmc", n=4, r=2)
    with pytest.raises(ValueError, match=r"one progress entry per worker \(got 3, n=4\)"):
        code.progress_decodable([1, 1, 1])


def test_parameter_grid_is_valid_and_covers_the_designs():
    grid = list(GCMMC.parameter_grid(8))
    assert all(p["n"] <= 8 for p in grid)
    assert {p["design"] for p in grid} == {"correlated", "uncorrelated", "hybrid"}
    assert any(not build("gc-mmc", **p).mds for p in grid)
    assert len({tuple(sorted((k, str(v)) for k, v in p.items())) for p in grid}) == len(grid)


def test_seed_changes_the_construction_but_not_the_rule():
    a = build("gc-mmc", n=7, r=4, order=2, seed=0)
    b = build("gc-mmc", n=7, r=4, order=2, seed=1)
    assert not np.allclose(a.local_encoding(), b.local_encoding())
    assert a.params()["seed"] == 0 and b.params() == {**a.params(), "seed": 1}
    assert_exact(b, exhaustive=True)


@st.composite
def gc_mmc_params(draw):
    size = draw(st.integers(1, 7))
    clusters = draw(st.integers(1, 3))
    design = draw(st.sampled_from(["correlated", "uncorrelated", "hybrid"]))
    r = size if design == "hybrid" else draw(st.integers(1, size))
    params = {"n": size * clusters, "r": r, "clusters": clusters, "design": design}
    if design == "correlated":
        params["order"] = draw(st.integers(1, r))
    else:
        lower = draw(st.sets(st.integers(1, r), max_size=2))
        params["orders"] = sorted((lower - {r}) | {r}, reverse=draw(st.booleans()))
    params["seed"] = draw(st.integers(0, 3))
    return params


@settings(max_examples=50, deadline=None)
@given(gc_mmc_params(), st.integers(0, 2**16))
def test_random_configurations_decode_exactly(params, seed):
    try:
        code = build("gc-mmc", **params)
    except ValueError:
        assume(False)
    assert code.k == code.n and math.isclose(1 / code.m, 1.0)
    assert_exact(code, exhaustive=code.count_patterns() <= 150, limit=30, seed=seed)
