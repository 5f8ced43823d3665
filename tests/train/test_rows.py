"""The master lays the results it holds out as consecutive rows, and decodes them exactly."""

from __future__ import annotations

import numpy as np
import pytest

from gradcode.codes import base as code_base
from gradcode.codes import build
from gradcode.train.protocol import H
from gradcode.train.rows import MessageRows
from gradcode.train.transport import Result
from tests.codes.harness import independent_sum


def _result(key: int, data: np.ndarray) -> Result:
    buffer = np.concatenate([np.full(H, float(key)), data])
    return Result(
        source=key + 1,
        iteration=0,
        key=key,
        header=buffer[:H],
        data=buffer[H:],
        buffer=buffer,
        nbytes=buffer.nbytes,
        arrived=0.0,
        accepted=0.0,
    )


def test_held_results_are_copied_into_consecutive_rows_and_the_rows_reused():
    rows = MessageRows(3, 4)
    first = [rows.hold(_result(key, np.full(4, key + 0.5))) for key in (2, 0)]
    for held, key in zip(first, (2, 0), strict=True):
        np.testing.assert_array_equal(held.data, np.full(4, key + 0.5))
        assert held.key == key and held.header[0] == key  # the header is still the port's
    assert code_base.consecutive_rows([held.data for held in first]) is not None
    rows.start()
    again = rows.hold(_result(1, np.arange(4.0)))
    assert np.shares_memory(again.data, first[0].data)  # the next iteration's first row
    np.testing.assert_array_equal(again.data, np.arange(4.0))


def test_results_that_do_not_fit_keep_their_own_buffer():
    rows = MessageRows(1, 4)
    other = _result(0, np.ones(3))
    assert rows.hold(other) is other
    rows.hold(_result(1, np.ones(4)))
    extra = _result(2, np.ones(4))
    assert rows.hold(extra) is extra


@pytest.mark.parametrize(
    ("scheme", "params"),
    [
        ("ye-abbe", {"n": 6, "d": 4, "s": 2, "m": 2}),
        ("ye-abbe", {"n": 8, "d": 5, "s": 1, "m": 4}),
        ("heterogeneous", {"placement": [[(i + j) % 6 for j in range(4)] for i in range(6)],
                           "s": 1, "m": 2}),
    ],
)  # fmt: skip
def test_a_code_that_decodes_faster_from_rows_decodes_them_exactly_without_a_gather(
    monkeypatch, scheme, params
):
    code = build(scheme, **params)
    assert code.decodes_faster_from_rows
    rng = np.random.default_rng(7)
    length = 1001
    partials = rng.standard_normal((code.k, length))
    arrived = rng.permutation(code.n)[: code.n - code.s]
    rows = MessageRows(code.n, code.message_length(length))
    held = {}
    for worker in arrived:
        message = code.encode(int(worker), partials[list(code.partitions(int(worker)))])
        held[int(worker)] = rows.hold(_result(int(worker), message)).data
    gathers = []
    real = code_base.np.concatenate
    monkeypatch.setattr(
        code_base.np, "concatenate", lambda *a, **k: gathers.append(1) or real(*a, **k)
    )
    decoded = code.decode(held, length)
    assert not gathers
    np.testing.assert_allclose(decoded, independent_sum(partials), rtol=1e-9, atol=1e-9)


def test_codes_of_one_chunk_take_no_rows():
    assert not build("crc", n=5, s=2).decodes_faster_from_rows
    assert not build("ye-abbe", n=5, d=3, s=2, m=1).decodes_faster_from_rows
