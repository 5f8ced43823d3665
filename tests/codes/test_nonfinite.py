"""Non-finite messages against the codes that correct adversaries: a NaN or an infinity is a
located liar, counted within ``a`` (the decode stays exact and names it) and refused beyond it
(``NotDecodableError`` naming it); never a non-finite gradient. Also ``a + 1`` colluding
liars on DRACO's cyclic code, which no decoder can tell from ``a`` liars on another gradient.
"""

from __future__ import annotations

import numpy as np
import pytest

from gradcode.codes import NotDecodableError, build
from gradcode.codes.placements import cyclic_placement
from tests.codes.harness import independent_sum

LENGTH = 6
#: (name, params, workers whose every message lies within a, workers beyond a)
CODES = [
    ("heterogeneous", {"placement": cyclic_placement(7, 5), "a": 2}, [1, 4], [0, 2, 5]),
    ("heterogeneous", {"placement": cyclic_placement(6, 3), "a": 1, "s": 0}, [3], [0, 3]),
    ("draco-cyclic", {"n": 9, "a": 1}, [4], [2, 7]),
    ("draco-cyclic", {"n": 9, "a": 2}, [0, 5], [1, 3, 6]),
    ("draco-repetition", {"n": 6, "a": 1}, [2], [0, 4]),
    ("byzshield", {"l": 5, "r": 3}, [7], [1, 8]),
    ("detox", {"n": 9, "r": 3}, [5], [0, 3]),
]
VALUES = [np.nan, np.inf, -np.inf]
IDS = [f"{name}-{i}" for i, (name, *_rest) in enumerate(CODES)]


def _messages(code, partials):
    messages = {}
    for worker in range(code.n):
        parts = partials[list(code.partitions(worker))]
        messages |= code.encode_all(worker, parts)
    return messages


def _broken(code, messages, workers, value, rng):
    """Every message of ``workers`` with ``value`` at some coordinates (the rest honest)."""
    out = dict(messages)
    for worker in workers:
        for key in code.message_keys(worker):
            vector = np.array(out[key], dtype=np.float64)
            at = rng.choice(vector.size, size=max(1, vector.size // 2), replace=False)
            vector[at] = value
            out[key] = vector
    return out


@pytest.mark.parametrize("value", VALUES, ids=["nan", "+inf", "-inf"])
@pytest.mark.parametrize(("name", "params", "within", "beyond"), CODES, ids=IDS)
def test_a_nonfinite_message_is_a_named_liar_within_a(name, params, within, beyond, value):
    code = build(name, **params)
    rng = np.random.default_rng(5)
    partials = rng.standard_normal((code.k, LENGTH))
    messages = _broken(code, _messages(code, partials), within, value, rng)
    result = code.decode_result(messages, LENGTH)
    assert np.isfinite(result.gradient).all()
    np.testing.assert_allclose(result.gradient, independent_sum(partials), rtol=1e-9, atol=1e-9)
    named = sorted({int(code.worker_of(key)) for key in result.adversaries})
    assert named == sorted(within)
    assert not any(int(code.worker_of(key)) in within for key in result.used)


@pytest.mark.parametrize("value", VALUES, ids=["nan", "+inf", "-inf"])
@pytest.mark.parametrize(("name", "params", "within", "beyond"), CODES, ids=IDS)
def test_nonfinite_messages_beyond_a_are_refused_by_name(name, params, within, beyond, value):
    code = build(name, **params)
    rng = np.random.default_rng(6)
    partials = rng.standard_normal((code.k, LENGTH))
    messages = _broken(code, _messages(code, partials), beyond, value, rng)
    with pytest.raises(NotDecodableError, match="not finite") as caught:
        code.decode_result(messages, LENGTH)
    assert caught.value.needed is None
    assert f"more than a = {code.a}" in str(caught.value)
    for worker in beyond:
        assert repr(code.message_keys(worker)[0]) in str(caught.value)


def test_a_nonfinite_message_and_a_finite_liar_share_the_budget():
    """DRACO's cyclic code with a = 2: one NaN message and one finite liar are both corrected
    and named; a NaN message and two finite liars are three, detected."""
    code = build("draco-cyclic", n=9, a=2)
    rng = np.random.default_rng(7)
    partials = rng.standard_normal((code.k, LENGTH))
    honest = _messages(code, partials)
    lied = dict(honest) | {3: np.full(LENGTH, np.nan), 6: honest[6] + rng.standard_normal(LENGTH)}
    result = code.decode_result(lied, LENGTH)
    np.testing.assert_allclose(result.gradient, independent_sum(partials), rtol=1e-9, atol=1e-9)
    assert sorted(result.adversaries) == [3, 6]
    three = lied | {0: honest[0] + rng.standard_normal(LENGTH)}
    with pytest.raises(NotDecodableError, match="more than a = 2"):
        code.decode_result(three, LENGTH)


@pytest.mark.parametrize("value", VALUES, ids=["nan", "+inf", "-inf"])
def test_heterogeneous_poly_counts_a_nonfinite_message_within_a_and_refuses_beyond(value):
    """Paper 004's polynomial code (h(sum G), 2 x 2 matrices): a non-finite message is an
    erasure and a named liar within a; two with a = 1 are refused by name."""
    h = [1.0, -0.5, 0.25]
    code = build("heterogeneous-poly", placement=cyclic_placement(9, 9), h=h, s=0, a=1)
    rng = np.random.default_rng(9)
    partials = rng.standard_normal((code.k, 4))
    honest = {w: code.encode(w, partials[list(code.partitions(w))]) for w in range(code.n)}
    total = partials.sum(axis=0).reshape(2, 2)
    expected = (1.0 * np.eye(2) - 0.5 * total + 0.25 * total @ total).reshape(-1)
    lied = dict(honest) | {3: np.full(4, value)}
    result = code.decode_result(lied, 4)
    np.testing.assert_allclose(result.gradient, expected, rtol=1e-9, atol=1e-9)
    assert result.adversaries == (3,)
    with pytest.raises(NotDecodableError, match=r"messages 3 \(.*\), 5 \(.*\) are not finite"):
        code.decode_result(lied | {5: np.full(4, value)}, 4)


def test_finite_messages_too_large_for_the_norms_are_not_taken_as_clean():
    """A liar's message of 1e300 overflows the syndromes' norm to inf; that is corruption
    (located and corrected), not the round-off test's silent pass."""
    code = build("draco-cyclic", n=9, a=1)
    rng = np.random.default_rng(8)
    partials = rng.standard_normal((code.k, LENGTH))
    lied = _messages(code, partials) | {5: np.full(LENGTH, 1e300)}
    try:
        result = code.decode_result(lied, LENGTH)
    except NotDecodableError as error:  # refused is acceptable; silently wrong is not
        assert error.needed is None
    else:
        assert result.adversaries == (5,)
        np.testing.assert_allclose(result.gradient, independent_sum(partials), rtol=1e-9, atol=1e-9)


def test_an_infinite_copy_agrees_with_no_value():
    """Before, ``inf <= tol * inf`` made an infinite copy agree with every value: the first
    copy of a group, infinite, won the vote and the gradient was infinite."""
    code = build("draco-repetition", n=3, a=1)
    partials = np.arange(6.0).reshape(3, 2)
    honest = _messages(code, partials)
    result = code.decode_result(honest | {0: np.array([np.inf, 1.0])}, 2)
    assert np.array_equal(result.gradient, partials.sum(axis=0)) and result.adversaries == (0,)


# -- a + 1 colluding liars on DRACO's cyclic code ----------------------------------------------
def test_a_plus_one_colluding_liars_on_one_partition_frame_its_honest_holder():
    """n = 9, a = 1: workers 0 and 1, two of partition 2's three holders (0, 1, 2), send
    their honest messages plus their own encoding coefficient of partition 2 times one shared
    vector ``delta``: the word is the codeword of the gradient with partition 2's partial
    moved by ``delta``, wrong in one place only, at honest worker 2. The decoder (any
    decoder: the code's distance is 2a + 1 = 3) returns that gradient and names worker 2.
    This is the documented limit; the MPI emulation stops such a run (test_colluding_mpi)."""
    code = build("draco-cyclic", n=9, a=1)
    assert code.partitions(0) == (0, 1, 2) and 2 in code.partitions(1)
    assert [w for w in range(9) if 2 in code.partitions(w)] == [0, 1, 2]
    rng = np.random.default_rng(0)
    partials = rng.standard_normal((code.k, LENGTH))
    honest = _messages(code, partials)
    encoding = code.encoding_matrix()[:, :, 0]  # (n, k): worker w's weight of partition p
    delta = rng.standard_normal(LENGTH)
    lied = dict(honest) | {w: honest[w] + encoding[w, 2] * delta for w in (0, 1)}
    result = code.decode_result(lied, LENGTH)
    assert result.adversaries == (2,)  # honest worker 2 framed, the liars vouched for
    moved = partials.copy()
    moved[2] += delta
    np.testing.assert_allclose(result.gradient, independent_sum(moved), rtol=1e-9, atol=1e-9)
    error = np.linalg.norm(result.gradient - independent_sum(partials))
    assert error == pytest.approx(np.linalg.norm(delta), rel=1e-9) and error > 1.0
