"""The latency sweep's crossover: where one scheme overtakes another between swept latencies."""

import pytest

from gradcode.figures.latency import Crossover, crossover, scheme_of


def test_the_crossover_is_interpolated_where_the_gap_changes_sign():
    # the ring pays 26 latencies an iteration, the tree 6: equal at (0.12 - 0.06) / 20 = 3 ms
    latencies = [0.0, 0.001, 0.002, 0.004]
    ring = [0.06 + 26 * x for x in latencies]
    tree = [0.12 + 6 * x for x in latencies]
    found = crossover(latencies, tree, ring)
    assert found.relation == "=" and found.latency == pytest.approx(0.003)
    assert found.describe() == "3 ms"


def test_a_crossover_outside_the_sweep_is_only_bounded():
    assert crossover([0.0, 0.001], [1.0, 1.0], [2.0, 2.0]) == Crossover(0.0, "<=")
    assert crossover([0.0, 0.001], [2.0, 2.0], [1.0, 1.5]) == Crossover(0.001, ">")
    assert crossover([0.0, 0.001], [2.0, 2.0], [1.0, 1.5]).describe() == "> 1 ms"


def test_the_last_sign_change_counts():
    # ahead, behind again (noise), then ahead for good: from the last change on
    found = crossover([0.0, 1.0, 2.0, 3.0], [1.0, 1.0, 1.0, 1.0], [1.5, 0.5, 1.5, 2.0])
    assert found.relation == "=" and found.latency == pytest.approx(1.5)


def test_bad_sweeps_are_refused():
    with pytest.raises(ValueError, match="ascending"):
        crossover([0.001, 0.0], [1.0, 1.0], [2.0, 2.0])
    with pytest.raises(ValueError, match="ascending"):
        crossover([0.0], [1.0, 1.0], [2.0])


def test_a_swept_runs_scheme_is_its_name_without_the_latency():
    assert scheme_of("CR-0.5ms", "500us") == "CR"
    assert scheme_of("RAR-mpi-1ms", "1ms") == "RAR-mpi"
    assert scheme_of("d4-s1-m3-0ms", "0ms") == "d4-s1-m3"
    assert scheme_of("RAR-mpi", "0ms") == "RAR-mpi"  # not swept
    assert scheme_of("CR-2ms", "1ms") == "CR-2ms"  # another latency: not this sweep's
