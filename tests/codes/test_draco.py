"""DRACO's two codes (Chen et al., ICML 2018): the conformance kit, every straggler pattern
with every placement of up to ``a`` liars, detection beyond ``a``, and the parameter rules."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from gradcode.codes import NotDecodableError, build
from gradcode.codes.conformance import assert_conforms
from gradcode.errors import ParameterError
from tests.codes.harness import independent_sum

SMALL = [
    ("draco-repetition", {"n": 3, "a": 1}),
    ("draco-repetition", {"n": 8, "a": 1, "s": 1}),
    ("draco-repetition", {"n": 10, "a": 2}),
    ("draco-cyclic", {"n": 5, "a": 2}),
    ("draco-cyclic", {"n": 9, "a": 2}),
    ("draco-cyclic", {"n": 10, "a": 1, "s": 1}),
    ("draco-cyclic", {"n": 9, "a": 1, "s": 2}),
]


@pytest.mark.parametrize(("name", "params"), SMALL, ids=lambda x: str(x))
def test_conforms_on_every_pattern_and_liar_placement(name, params):
    code = build(name, **params)
    report = assert_conforms(code, exhaustive=True, subsets=60, trials=60).verification
    assert report is not None and report.patterns_checked == report.patterns_total
    # every s stragglers times every set of 0 .. a liars among the responders
    alive = code.n - code.s
    expected = len(list(itertools.combinations(range(code.n), code.s))) * sum(
        len(list(itertools.combinations(range(alive), c))) for c in range(code.a + 1)
    )
    assert report.patterns_total == expected
    assert report.liars_named == report.patterns_with_liars > 0


def test_the_paper_layouts():
    repetition = build("draco-repetition", n=6, a=1)
    assert [repetition.partitions(w) for w in (0, 2, 3)] == [(0, 1, 2), (0, 1, 2), (3, 4, 5)]
    cyclic = build("draco-cyclic", n=7, a=1)
    assert cyclic.partitions(5) == (5, 6, 0) and cyclic.loads().tolist() == [3] * 7
    # the columns are shifts of one codeword; all n messages sum to the gradient
    encoding = cyclic.encoding_matrix()[:, :, 0]
    assert np.allclose(encoding.sum(axis=0), 1.0)
    assert np.allclose(np.roll(encoding[:, 0], 3), encoding[:, 3])


def test_more_liars_than_a_are_detected_not_silently_decoded():
    rng = np.random.default_rng(3)
    code = build("draco-cyclic", n=9, a=1)
    partials = rng.standard_normal((code.k, 12))
    honest = {w: code.encode(w, partials[list(code.partitions(w))]) for w in range(code.n)}
    reference = independent_sum(partials)
    for liars in itertools.combinations(range(code.n), 2):
        lied = dict(honest) | {w: honest[w] + rng.standard_normal(12) for w in liars}
        try:
            gradient = code.decode(lied, 12)
        except NotDecodableError as error:
            assert "more than a = 1" in str(error) and error.needed is None
        else:  # 2 liars in general position are always detected by a distance-5 code
            pytest.fail(f"liars {liars}: decoded {np.linalg.norm(gradient - reference):.3g} off")


def test_repetition_votes_down_a_liars_and_refuses_a_tie():
    code = build("draco-repetition", n=5, a=2)
    partials = np.arange(10.0).reshape(5, 2)
    honest = {w: code.encode(w, partials) for w in range(5)}
    lie = dict(honest) | {1: np.array([9.0, 9.0]), 4: np.array([9.0, 9.0])}  # colluding
    result = code.decode_result(lie, 2)
    assert np.array_equal(result.gradient, partials.sum(axis=0))
    assert result.adversaries == (1, 4)
    three = lie | {2: np.array([9.0, 9.0])}  # a + 1 = 3 colluding liars outvote the honest
    assert code.decode_result(three, 2).adversaries == (0, 3)  # the paper's bound, not more
    scattered = dict(honest) | {w: np.array([w, 0.0]) for w in (0, 1, 2)}
    with pytest.raises(NotDecodableError, match="more than a = 2 liars"):
        code.decode(scattered, 2)
    with pytest.raises(NotDecodableError, match="2a \\+ 1 = 5 responders in every group"):
        code.decode({w: honest[w] for w in range(4)}, 2)


@pytest.mark.parametrize(
    ("name", "params", "expected"),
    [
        ("draco-repetition", {"n": 7, "a": 1}, "draco-repetition needs (2a + s + 1) | n (got n=7"),
        ("draco-cyclic", {"n": 8, "a": 1}, "draco-cyclic needs n - (2a + s + 1) even"),
        ("draco-cyclic", {"n": 4, "a": 2}, "draco-cyclic needs 2a + s + 1 <= n (got n=4, a=2"),
        ("draco-cyclic", {"n": 5, "a": -1}, "draco-cyclic needs a >= 0 (got a=-1)"),
    ],
)
def test_parameters_are_refused_in_one_line(name, params, expected):
    with pytest.raises(ParameterError) as caught:
        build(name, **params)
    assert expected in str(caught.value)
