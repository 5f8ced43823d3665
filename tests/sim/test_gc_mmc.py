"""Paper 002, Fig. 1: GC-MMC's vectorised completion rule, and the figure's conclusions."""

import numpy as np
import pytest

from gradcode.codes import GradientCode, build
from gradcode.codes.gc_mmc import GCMMC
from gradcode.sim import load_spec, preset, simulate
from gradcode.timing.exact import shifted_exponential_order_mean

EXTRA = [
    {"n": 12, "r": 6, "clusters": 2, "design": "hybrid", "orders": [2, 4, 6]},
    {"n": 12, "r": 4, "clusters": 3, "design": "hybrid", "orders": [4]},
    {"n": 20, "r": 8, "clusters": 2, "design": "uncorrelated", "orders": [4, 8]},
    {"n": 6, "r": 3, "clusters": 1, "design": "uncorrelated", "orders": [1, 3]},  # matching
    {"n": 10, "r": 4, "clusters": 1, "design": "correlated", "order": 2},
]


@pytest.mark.parametrize("params", [*GCMMC.paper_fig1_params().values(), *EXTRA])
def test_vectorised_completion_matches_is_decodable(params):
    code = build("gc-mmc", **params)
    rng = np.random.default_rng(11)
    arrivals = rng.exponential(size=(30, len(code.all_message_keys())))
    arrivals[rng.random(arrivals.shape) < 0.1] = np.inf  # messages that never come
    arrivals[:5] = np.round(arrivals[:5], 1)  # ties
    fast = code.completion_times(arrivals)
    np.testing.assert_array_equal(fast, GradientCode.completion_times(code, arrivals))


def test_preset_uses_the_papers_configurations():
    schemes = {entry["label"]: entry for entry in preset("gc-mmc-fig1")["schemes"]}
    for label, params in GCMMC.paper_fig1_params().items():
        assert schemes[label]["params"] == params
    assert schemes["LCC"]["params"] == {"n": 40, "k": 4}


@pytest.fixture(scope="module")
def fig1():
    rows = simulate(load_spec(preset("gc-mmc-fig1"), origin="fig1"), trials=20_000, seed=2019)
    return {row.label: row for row in rows}


def test_single_message_schemes_match_their_order_statistics(fig1):
    """GC waits for K - r + 1 = 31 workers, LCC for 2k - 1 = 7; each computes r X."""
    for label, needed in (("GC", 31), ("LCC", 7)):
        exact = shifted_exponential_order_mean(10 * 0.01, 10 / 10, 40, needed)
        assert fig1[label].ci_low < exact < fig1[label].ci_high, label
        assert fig1[label].messages == needed


def test_more_lower_order_messages_buy_time_with_communication(fig1):
    """Order r (GC) -> 6 in clusters (GC-MMC-1) -> 1 (UC-MMC): faster, more messages."""
    chain = [fig1["GC"], fig1["GC-MMC-1"], fig1["UC-MMC"]]
    assert [row.mean_time for row in chain] == sorted(
        (row.mean_time for row in chain), reverse=True
    )
    assert [row.messages for row in chain] == sorted(row.messages for row in chain)
    assert fig1["UC-MMC"].messages > 2.5 * 40  # several messages per worker
    assert fig1["GC"].mean_time > 5 * fig1["LCC"].mean_time


def test_gc_mmc_matches_lcc_and_more_messages_beat_it(fig1):
    """'The GC-MMC schemes can perform as well as LCC'; 'can even outperform the LCC if the
    number of messages are increased' (UC-MMC is GC-MMC of order 1)."""
    lcc = fig1["LCC"].mean_time
    assert fig1["GC-MMC-1"].mean_time < 1.02 * lcc
    assert fig1["UC-MMC"].mean_time < 0.7 * lcc


def test_gc_mmc_2_sends_about_one_message_per_worker(fig1):
    assert 0.9 < fig1["GC-MMC-2"].messages / 40 < 1.2


@pytest.mark.xfail(
    strict=True,
    reason="paper 002 says GC-MMC-2 (4 clusters, uncorrelated, orders [6, 8, 10]) matches LCC; "
    "under eq. (5) with its threshold of 7 distinct messages per cluster we measure 0.439 s "
    "against LCC's 0.289 s (+52%). The hybrid design with the same orders (Sec. III-D, row "
    "GC-MMC-2-hybrid) does match: 0.304 s with 0.75 messages per worker",
)
def test_gc_mmc_2_matches_lcc(fig1):
    assert fig1["GC-MMC-2"].mean_time == pytest.approx(fig1["LCC"].mean_time, rel=0.1)


def test_hybrid_gc_mmc_2_matches_lcc_with_under_one_message_per_worker(fig1):
    hybrid = fig1["GC-MMC-2-hybrid"]
    assert hybrid.mean_time == pytest.approx(fig1["LCC"].mean_time, rel=0.1)
    assert hybrid.messages / 40 < 1
