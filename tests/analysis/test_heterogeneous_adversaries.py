"""Analysis heterogeneous-adversaries (paper 004, Sec. III-C and the converse of Theorem 1)."""

import numpy as np
import pytest

from gradcode.analysis import heterogeneous_adversaries as adv
from gradcode.analysis.heterogeneous_comm_cost import all_messages, fsum_columns
from gradcode.codes import build
from gradcode.codes.placements import cyclic_placement, random_placement


@pytest.mark.parametrize(
    "placement, s, a",
    [
        (cyclic_placement(11, 7), 2, 2),
        (random_placement(14, 18, 6, seed=8), 1, 1),
        (random_placement(12, 12, 5, seed=9, weights=[4, 4] + [1] * 10), 1, 0),
    ],
)
def test_converse_attack_is_two_valid_scenarios_with_the_same_responses(placement, s, a):
    code = build("heterogeneous", placement=placement, s=s, a=a)
    rng = np.random.default_rng(3)
    partials = rng.standard_normal((code.k, code.m * adv.WIDTH))
    stragglers, received, framed, impostor = adv.converse_attack(code, partials, rng)
    truth = all_messages(code, partials)
    other = all_messages(code, impostor)
    changed = np.flatnonzero(np.any(impostor != partials, axis=1))
    assert changed.size == 1  # only the least replicated partition differs
    holders = code.assignment_matrix()[:, changed[0]]
    assert holders.sum() == code.r and all(holders[w] for w in stragglers + framed)
    assert sorted(received) == [w for w in range(code.n) if w not in stragglers]
    lying_to_truth = [w for w in received if not np.allclose(received[w], truth[w])]
    lying_to_impostor = [w for w in received if not np.allclose(received[w], other[w])]
    # scenario 1: a + 1 liars against the truth; scenario 2: a liars against the impostor
    assert len(lying_to_truth) == a + 1 and sorted(lying_to_impostor) == framed
    assert len(framed) == a
    result = code.decode_result(received, partials.shape[1])
    decoded, named = result.gradient, result.adversaries
    np.testing.assert_allclose(decoded, fsum_columns(impostor), rtol=1e-9, atol=1e-9)
    assert sorted(int(w) for w in named) == framed


def test_cells_within_and_beyond_the_tolerance():
    code = build("heterogeneous", placement=cyclic_placement(13, 7), s=1, a=2)
    rng = np.random.default_rng(0)
    for liars in (0, 1, 2):
        row = adv.run_cell(code, "random", liars, 10, rng)
        assert row["exact_fraction"] == row["named_fraction"] == 1.0
        assert row["max_rel_error"] < 1e-9
    for liars in (3, 4):
        row = adv.run_cell(code, "random", liars, 10, rng)
        assert row["detected_fraction"] == 1.0 and row["max_rel_error"] is None
    row = adv.run_cell(code, "converse", 3, 10, rng)
    assert row["undetected_wrong_fraction"] == row["impostor_fraction"] == 1.0


def test_compute_reports_the_tolerance_boundary():
    result = adv.compute(trials=16, seed=1, progress=lambda line: None)
    rows = result.rows
    assert {row["placement"] for row in rows} == {name for name, _ in adv.placements()}
    for row in rows:
        assert row["r"] >= row["s"] + 2 * row["a"] + 1
        assert row["m"] == row["r"] - row["s"] - 2 * row["a"]
        if row["attack"] == "random" and row["liars"] <= row["a"]:
            assert row["exact_fraction"] == row["named_fraction"] == 1.0
        elif row["attack"] == "random" and row["a"] > 0:
            assert row["detected_fraction"] == 1.0
        elif row["attack"] == "random":  # a = 0: nothing to check against
            assert row["undetected_wrong_fraction"] == 1.0
        elif row["attack"] == "converse":
            assert row["undetected_wrong_fraction"] == row["impostor_fraction"] == 1.0
        else:  # a registered attack (gradcode.attacks) with a liars: corrected and named
            assert row["liars"] == row["a"] > 0
            assert row["exact_fraction"] == row["named_fraction"] == 1.0
    attacked = {row["attack"] for row in rows} - {"random", "converse"}
    assert attacked == {"noise", "reversed", "constant", "alie", "ipm"}
    assert adv.compute(trials=16, seed=1, progress=lambda line: None).rows == rows
