"""binary-decoding (paper 003, Sec. IV): cost model, online search, exactness rows."""

import itertools
import math

import numpy as np
import pytest

from gradcode.analysis.binary_decoding import (
    ERROR_N,
    compute,
    cost_row,
    error_families,
    frc_stragglers,
    integer_exactness,
    responders_until_decodable,
    tandon_solve_flops,
)
from gradcode.codes import build
from gradcode.codes.binary import BinaryCode
from gradcode.codes.stability import stability_rows


def quiet(_):
    pass


@pytest.fixture(scope="module")
def small():
    return compute(trials=20, seed=0, progress=quiet)


def test_cost_counts_against_the_codes_and_an_actual_tandon_table():
    n, s = 7, 2
    crc = build("crc", n=n, s=s)
    orders = np.tile(np.arange(n), (3, 1))
    row = cost_row("s=2", n, s, orders)
    assert row["binary_search_ops"] == n + 1
    # Tandon's Algorithm 1: one decoding vector per straggler set, each solving a^T B_F = 1
    encoding = crc.encoding_matrix()[:, :, 0]
    table = []
    for stragglers in itertools.combinations(range(n), s):
        alive = [i for i in range(n) if i not in stragglers]
        a, *_ = np.linalg.lstsq(encoding[alive].T, np.ones(n), rcond=None)
        assert np.allclose(a @ encoding[alive], 1)
        vector = np.zeros(n)
        vector[alive] = a
        table.append(vector)
    table = np.array(table)
    assert row["tandon_table_rows"] == len(table) == crc.count_patterns()
    assert row["tandon_table_entries"] == table.size
    assert row["tandon_combine_flops"] == 2 * (n - s) - 1
    # binary decoding adds the messages of one class: at most (largest class size) - 1 adds
    code = BinaryCode(n, s)
    assert row["binary_additions"] == max(len(c) for c in code.classes) - 1 == 2
    assert row["tandon_table_flops"] == row["tandon_table_rows"] * row["tandon_solve_flops"]


def test_solve_flops_is_householder_least_squares():
    # square case k = f: QR 4/3 f^3, Q^T b 2 f^2, back substitution f^2
    assert tandon_solve_flops(9, 0) == pytest.approx(4 / 3 * 9**3 + 3 * 9**2)
    # n = 7, s = 2: k = 7, f = 5
    assert tandon_solve_flops(7, 2) == pytest.approx(2 * 7 * 25 - 2 * 125 / 3 + 140 - 50 + 25)


@pytest.mark.parametrize(("n", "s"), [(5, 1), (7, 2), (11, 3), (13, 4), (9, 8)])
def test_online_search_matches_decodability_of_every_prefix(n, s):
    code = BinaryCode(n, s)
    rng = np.random.default_rng(n)
    orders = np.array([rng.permutation(n) for _ in range(60)])
    needed = responders_until_decodable(code, orders)
    for order, count in zip(orders, needed, strict=True):
        prefix = [int(w) for w in order]
        assert code.is_decodable(prefix[:count])
        assert not code.is_decodable(prefix[: count - 1])
        assert count <= n - s
    # the pigeonhole bound is attained: one member of every class answers last
    last = [members[0] for members in code.classes]
    worst = [w for w in range(n) if w not in last] + last
    assert responders_until_decodable(code, np.array([worst]))[0] == n - s


def test_frc_stragglers_is_the_largest_admissible_divisor():
    for n in range(2, 61):
        s = frc_stragglers(n)
        admissible = [d - 1 for d in range(2, n // 4 + 2) if n % d == 0]
        assert s == (max(admissible) if admissible else None)
    assert all(frc_stragglers(n) is not None for n in ERROR_N)


def test_integer_partials_exact_for_the_binary_codes_only():
    rng = np.random.default_rng(1)
    for scheme, params in (("binary", {"n": 30, "s": 7}), ("frc", {"n": 30, "s": 5})):
        result = integer_exactness(scheme, params, 25, rng)
        assert result["integer_exact_fraction"] == 1
        assert result["integer_max_relative_error"] == 0
    crc = integer_exactness("crc", {"n": 30, "s": 7}, 25, rng)
    assert crc["integer_exact_fraction"] < 1
    assert 0 < crc["integer_max_relative_error"] < 1e-6


def test_rows_cover_the_grid_and_reuse_the_stability_study(small):
    cost = [row for row in small.rows if row["part"] == "cost"]
    error = [row for row in small.rows if row["part"] == "error"]
    assert {row["s_rule"] for row in cost} == {"s=1", "s=3", "s=n/4", "s=n/2"}
    for row in cost:
        n, s = row["n"], row["s"]
        assert 1 <= s < n
        assert row["tandon_table_rows"] == math.comb(n, s)
        assert row["binary_responders_max_seen"] <= row["binary_responders_worst"] == n - s
        assert 1 <= row["binary_responders_mean"] <= n - s
    families = [family.label for family in error_families()]
    assert [row["family"] for row in error][:: len(ERROR_N)] == families
    assert small.meta["patterns_per_point"] == 1
    for row in error:
        assert row["patterns"] == row["integer_patterns"] == 1
        if row["scheme"] in ("binary", "frc"):
            assert row["integer_exact_fraction"] == 1
            assert row["max_relative_error"] < 1e-15
    # the float columns are the stability study's, unchanged
    crc = next(family for family in error_families() if family.label == "crc")
    direct = next(stability_rows([20], (crc,), patterns=1, seed=0))
    row = next(r for r in error if r["family"] == "crc" and r["n"] == 20)
    assert row["max_relative_error"] == direct["max_relative_error"]


def test_deterministic_for_a_seed(small):
    assert compute(trials=20, seed=0, progress=quiet).render_csv() == small.render_csv()
