"""ByzShield (Konstantinidis & Ramamoorthy, MLSys 2021): the MOLS placement, the vote per file
exact wherever a file has fewer liars than a majority (checked on every placement of up to
``q`` liars against an independent sum), the conformance kit, the distortion fraction under
the worst placement of ``q`` liars beside DETOX's and the baseline's, and one-line refusals."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from gradcode import aggregators, attacks
from gradcode.codes import NotDecodableError, build
from gradcode.codes.conformance import assert_conforms
from gradcode.codes.distortion import worst_distortion
from gradcode.codes.verify import verify
from gradcode.errors import ParameterError
from gradcode.runfile.config import ConfigError, parse_config
from gradcode.runfile.plan import build_plan
from tests.train.test_config import minimal

#: c_max^(q) for q = 0 .. 7 at K = 15 (l = 5, r = 3, f = 25), computed here by exhaustive
#: search over all C(15, q) placements; ByzShield's paper (Sec. 5) reports the distortion
#: fraction c_max^(q) / f for this case (its public code, "section 5/simulations.py", computes
#: c_max^(q) the same way, a file distorted when (r + 1) // 2 of its copies lie)
BYZSHIELD_K15 = {0: 0, 1: 0, 2: 1, 3: 3, 4: 5, 5: 8, 6: 12, 7: 14}


def test_the_placement_is_the_mols_one():
    code = build("byzshield", l=5, r=3)
    assert (code.n, code.k, code.a, code.s) == (15, 25, 1, 0)
    holds = code.assignment_matrix()
    assert (holds.sum(axis=1) == 5).all() and (holds.sum(axis=0) == 3).all()
    overlap = holds.astype(int) @ holds.T.astype(int)
    for u, v in itertools.combinations(range(15), 2):
        # one square: disjoint files; different squares: exactly one common file
        assert overlap[u, v] == (0 if u // 5 == v // 5 else 1), (u, v)
    # every file has one holder per square
    for p in range(code.k):
        assert sorted(w // 5 for w in code.file_holders(p)) == [0, 1, 2]


@pytest.mark.parametrize("params", [{"l": 2, "r": 1}, {"l": 5, "r": 3}, {"l": 7, "r": 5}])
def test_conforms_and_corrects_every_placement_of_a_liars(params):
    code = build("byzshield", **params)
    report = assert_conforms(code, exhaustive=True, subsets=40, trials=40).verification
    assert report is not None and report.liars_named == report.patterns_with_liars
    assert report.patterns_with_liars == sum(math.comb(code.n, c) for c in range(1, code.a + 1))


@pytest.mark.parametrize("attack", ["reversed", "constant", "alie", "ipm", "noise"])
def test_every_attack_is_corrected_with_a_liars(attack):
    checked = verify(build("byzshield", l=5, r=3), exhaustive=True, attack=attacks.build(attack))
    assert not checked.failures, checked.failures[:1]


def honest_messages(code, g):
    return {
        key: message
        for w in range(code.n)
        for key, message in code.encode_all(w, g[list(code.partitions(w))]).items()
    }


def lying(code, honest, liars, rng):
    """Every message of ``liars`` replaced by one shared wrong value per file (colluding)."""
    forged = dict(honest)
    shift = {p: rng.standard_normal(honest[(0, 0)].shape) * 100 for p in range(code.k)}
    for w in liars:
        for j, p in enumerate(code.partitions(w)):
            forged[(w, j)] = honest[(w, j)] + shift[p]
    return forged


@pytest.mark.parametrize("q", range(0, 8))
def test_votes_of_undistorted_files_are_their_honest_sums_for_every_placement(q):
    """K = 15 (l = 5, r = 3): every placement of q <= 7 colluding liars (6,435 at q = 7).
    A file with fewer than r' = 2 liars votes its true partial gradient (checked against the
    partials, not the code); a file with 2 or 3 colluding liars votes theirs; the number of
    such files is aggregation_corrupted and at most c_max^(q)."""
    code = build("byzshield", l=5, r=3)
    rng = np.random.default_rng(q)
    g = rng.standard_normal((code.k, 4))
    honest = honest_messages(code, g)
    holders = [set(code.file_holders(p)) for p in range(code.k)]
    for liars in itertools.combinations(range(code.n), q):
        inputs = code.aggregation_inputs(lying(code, honest, liars, rng), 4)
        assert inputs.total == 25 and len(inputs.values) == 25  # colluders always agree
        distorted = 0
        for vote, keys in zip(inputs.values, inputs.keys, strict=True):
            p = code.partitions(keys[0][0])[keys[0][1]]
            if len(holders[p] & set(liars)) < 2:
                assert np.array_equal(vote, g[p]), (liars, p)
            else:
                distorted += 1
                assert not np.allclose(vote, g[p])
        assert distorted == code.aggregation_corrupted(liars) <= BYZSHIELD_K15[q]


def test_exact_decoding_names_the_liar_and_refuses_beyond_a():
    code = build("byzshield", l=5, r=3)
    rng = np.random.default_rng(7)
    g = rng.standard_normal((code.k, 6))
    honest = honest_messages(code, g)
    result = code.decode_result(lying(code, honest, [4], rng), 6)
    assert np.allclose(result.gradient, g.sum(axis=0), rtol=1e-12)
    assert {code.worker_of(key) for key in result.adversaries} == {4}
    # two liars of different squares share one file: detected there, as more than a = 1
    with pytest.raises(NotDecodableError, match="are outvoted in their files"):
        code.decode_result(lying(code, honest, [0, 5], rng), 6)
    missing = dict(honest)
    del missing[(3, 2)]
    with pytest.raises(NotDecodableError, match="needs all r = 3 copies") as caught:
        code.decode_result(missing, 6)
    assert caught.value.needed == 1 and caught.value.candidates == ((3, 2),)


def test_the_median_of_the_file_votes_withstands_more_liars_than_the_vote():
    code = build("byzshield", l=5, r=3)
    rng = np.random.default_rng(11)
    g = rng.standard_normal((code.k, 5)) + 1.0
    liars = worst_distortion(code, 3).worst
    inputs = code.aggregation_inputs(lying(code, honest_messages(code, g), liars, rng), 5)
    median = aggregators.build("median")
    honest_votes = np.stack([g[p] for p in range(code.k) if not _distorted(code, p, liars)])
    estimate = median.aggregate(inputs.values).value
    assert np.linalg.norm(estimate - honest_votes.mean(axis=0)) <= median.error_bound(
        honest_votes, code.k
    ) * (1 + 1e-12)


def _distorted(code, p, liars):
    return len(set(code.file_holders(p)) & set(liars)) >= code.quorum


def test_distortion_fraction_at_k15_beside_detox_and_the_baseline():
    """c_max^(q) / f over every placement: ByzShield (l = 5, r = 3, 25 files), DETOX (15
    workers in 5 groups of 3) and the baseline (uncoded, a median over 15 gradients)."""
    byzshield = build("byzshield", l=5, r=3)
    detox, baseline = build("detox", n=15, r=3), build("uncoded", n=15)
    for q, distorted in BYZSHIELD_K15.items():
        ours = worst_distortion(byzshield, q)
        assert (ours.distorted, ours.values, ours.placements) == (distorted, 25, math.comb(15, q))
        assert byzshield.aggregation_corrupted(ours.worst) == distorted
        assert ours.distorted <= byzshield.distortion_bound(q)  # the paper's upper bound
        assert worst_distortion(detox, q).fraction == min(q // 2, 5) / 5
        assert worst_distortion(baseline, q).fraction == q / 15
    # fewer distorted values than DETOX for q = 2 .. 7, than the baseline up to q = 5 only
    for q in range(2, 8):
        assert BYZSHIELD_K15[q] / 25 < q // 2 / 5
        assert (BYZSHIELD_K15[q] / 25 < q / 15) == (q <= 5)


def test_distortion_refusals_are_one_line():
    with pytest.raises(ParameterError, match="distortion: frc is not aggregable"):
        worst_distortion(build("frc", n=4, s=1), 1)
    with pytest.raises(ParameterError, match=r"exceed the limit 100"):
        worst_distortion(build("byzshield", l=5, r=3), 3, limit=100)
    with pytest.raises(ParameterError, match=r"has n=15 workers \(got q=16 liars\)"):
        worst_distortion(build("byzshield", l=5, r=3), 16)


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"l": 4, "r": 3}, "byzshield needs a prime l (got l=4; prime powers are not supported)"),
        ({"l": 5, "r": 2}, "byzshield needs an odd r (got r=2)"),
        ({"l": 5, "r": 5}, "byzshield needs r <= l - 1 orthogonal squares (got l=5, r=5)"),
        ({"l": 1, "r": 1}, "byzshield needs l >= 2 (got l=1)"),
        ({"l": 5, "r": 0}, "byzshield needs r >= 1 (got r=0)"),
    ],
)
def test_bad_parameters_are_one_line(params, expected):
    with pytest.raises(ParameterError) as caught:
        build("byzshield", **params)
    assert str(caught.value) == expected


SCHEME = {"name": "byzshield", "params": {"l": 5, "r": 3}}


def test_run_files_take_more_liars_with_an_aggregator_over_the_file_votes():
    three = {"workers": [0, 5, 11]}
    with pytest.raises(ConfigError, match="3 adversaries but the code corrects a = 1"):
        build_plan(parse_config(minimal(scheme=SCHEME, adversaries=three)))
    # three liars distort 3 of 25 files: the median of 25 votes tolerates 12
    build_plan(
        parse_config(minimal(scheme=SCHEME, adversaries=three, aggregator={"name": "median"}))
    )


def paper_bigraph(m: int, s: int) -> np.ndarray:
    """The paper's B (Sec. 4.2.1): s x m blocks, block (i, j) = P^(i j), P the s x s cyclic
    shift with P[a, b] = 1 iff b = a - 1 (mod s); built with matrix powers."""
    shift = np.zeros((s, s), dtype=int)
    shift[np.arange(s), (np.arange(s) - 1) % s] = 1
    return np.block([[np.linalg.matrix_power(shift, i * j) for j in range(m)] for i in range(s)])


@pytest.mark.parametrize(
    ("params", "shape", "biadjacency"),
    [
        # Case 1 (m < s): H = B^T, workers are B's columns
        ({"l": 5, "r": 3, "placement": "ramanujan-1"}, (15, 25), paper_bigraph(3, 5).T),
        ({"l": 7, "r": 5, "placement": "ramanujan-1"}, (35, 49), paper_bigraph(5, 7).T),
        # Case 2 (m >= s, s | m): H = B, workers are B's rows
        ({"l": 5, "r": 5, "placement": "ramanujan-2"}, (25, 25), paper_bigraph(5, 5)),
        ({"l": 10, "r": 5, "placement": "ramanujan-2"}, (25, 50), paper_bigraph(10, 5)),
    ],
)
def test_ramanujan_placements_are_the_paper_s_bigraphs(params, shape, biadjacency):
    code = build("byzshield", **params)
    holds = code.assignment_matrix().astype(int)
    assert (code.n, code.k) == shape and np.array_equal(holds, biadjacency)
    assert (holds.sum(axis=1) == params["l"]).all() and (holds.sum(axis=0) == params["r"]).all()
    for members in code.parallel_classes():
        assert (holds[list(members)].sum(axis=0) == 1).all()  # one holder per class
    # Ramanujan: second singular value <= sqrt(d_L - 1) + sqrt(d_R - 1)
    second = np.linalg.svd(holds, compute_uv=False)[1]
    assert second <= np.sqrt(params["l"] - 1) + np.sqrt(params["r"] - 1)


@pytest.mark.parametrize(
    "params",
    [
        {"l": 5, "r": 3, "placement": "ramanujan-1"},
        {"l": 3, "r": 3, "placement": "ramanujan-2"},
        {"l": 5, "r": 5, "placement": "ramanujan-2"},
    ],
)
def test_ramanujan_placements_conform_and_decode_exactly_with_up_to_a_liars(params):
    code = build("byzshield", **params)
    report = assert_conforms(code, exhaustive=True, subsets=20, trials=20).verification
    assert report is not None and report.liars_named == report.patterns_with_liars
    rng = np.random.default_rng(3)
    g = rng.standard_normal((code.k, 3))
    honest = honest_messages(code, g)
    for count in range(code.a + 1):
        for liars in itertools.combinations(range(code.n), count):
            result = code.decode_result(lying(code, honest, liars, rng), 3)
            assert np.allclose(result.gradient, g.sum(axis=0), rtol=1e-12, atol=1e-12)
            assert {code.worker_of(key) for key in result.adversaries} == set(liars)


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        (
            {"l": 5, "r": 3, "placement": "ramanujan"},
            "byzshield needs placement in mols, ramanujan-1, ramanujan-2 (got 'ramanujan')",
        ),
        (
            {"l": 5, "r": 1, "placement": "ramanujan-1"},
            "byzshield ramanujan-1 needs r >= 3 (got r=1)",
        ),
        (
            {"l": 6, "r": 3, "placement": "ramanujan-1"},
            "byzshield needs a prime l (got l=6; prime powers are not supported)",
        ),
        (
            {"l": 7, "r": 5, "placement": "ramanujan-2"},
            "byzshield ramanujan-2 needs a prime r dividing l (got l=7, r=5)",
        ),
        (
            {"l": 9, "r": 9, "placement": "ramanujan-2"},
            "byzshield ramanujan-2 needs a prime r dividing l (got l=9, r=9)",
        ),
    ],
)
def test_bad_placements_are_one_line(params, expected):
    with pytest.raises(ParameterError) as caught:
        build("byzshield", **params)
    assert str(caught.value) == expected


def test_a_run_file_takes_a_ramanujan_placement():
    scheme = {"name": "byzshield", "params": {"l": 5, "r": 5, "placement": "ramanujan-2"}}
    plan = build_plan(parse_config(minimal(scheme=scheme, adversaries={"workers": [0, 7]})))
    assert plan.code.n == 25 and plan.code.a == 2
