"""The fidelity record and its rule (``gradcode.fidelity.record``, ``rule``) on given
measures; ``test_fidelity_mpi.py`` checks them on real runs."""

from __future__ import annotations

import pytest

from gradcode.fidelity.record import build_record, machine_measures, one_line
from gradcode.fidelity.rule import BUSY_LIMIT, CPU_LIMIT, CRITICAL_LIMIT, verdict


def spent(seconds: float, cpu: float, wait: float) -> dict[str, float]:
    return {
        "seconds": seconds,
        "cpu": cpu,
        "wait": wait,
        "slices": 100,
        "wakeups": 10,
        "involuntary": 2,
    }


def test_machine_measures_add_up_the_ranks():
    ranks = [spent(2.0, 0.4, 0.2), spent(2.0, 0.2, 0.6), None, spent(1.0, 0.5, 0.0)]
    found = machine_measures(ranks, {"some": 0.3}, cores=2)
    assert found["ranks"] == 3
    assert found["queue"] == pytest.approx((0.2 + 0.6 + 0.0) / 2.0)
    assert found["wake_delay"] == pytest.approx((0.2 + 0.6 + 0.0) / 300)
    assert found["cpu"] == pytest.approx((0.4 + 0.2 + 0.5) / (2.0 * 2))
    assert found["busiest_rank"] == 3 and found["busiest_rank_cpu"] == pytest.approx(0.5)
    assert found["rank0_wait"] == pytest.approx(0.1)
    assert found["rank_wait_max"] == pytest.approx(0.3)
    assert found["wakeups_per_second"] == pytest.approx(15.0)
    assert found["cpu_pressure_some"] == 0.3
    assert found["work"] is None  # no rank computed


def test_work_sets_each_ranks_real_seconds_beside_its_cpu():
    """Rank 1 computed 1 s on 1 s of CPU (a core of its own), rank 2 3 s on 1 s (it waited
    for a core two thirds of the time); rank 0 did no work of its own."""
    ranks = [spent(2.0, 0.4, 0.2), spent(2.0, 1.0, 0.1), spent(4.0, 1.0, 2.0)]
    ranks[1] |= {"work_real": 1.0, "work_cpu": 1.0}
    ranks[2] |= {"work_real": 3.0, "work_cpu": 1.0}
    found = machine_measures(ranks, None, cores=2)["work"]
    assert found["real"] == 4.0 and found["cpu"] == 2.0
    assert found["stretch_max"] == 3.0 and found["stretch_median"] == 2.0
    assert found["ranks"] == [[1, 1.0, 1.0], [2, 3.0, 1.0]]


@pytest.mark.parametrize(
    ("critical", "busiest", "cpu", "decided"),
    [
        (CRITICAL_LIMIT / 2, 0.1, CPU_LIMIT / 2, "links"),
        (CRITICAL_LIMIT, 0.1, 0.1, "machine"),
        (0.0, BUSY_LIMIT, 0.1, "machine"),
        (0.0, 0.1, CPU_LIMIT, "machine"),
        (None, None, None, "links"),
    ],
)
def test_the_rule_names_the_machine_when_any_limit_is_reached(critical, busiest, cpu, decided):
    path = None if critical is None else {"handoffs": 3, "seconds": 0.0, "share": critical}
    measures = {"busiest_rank_cpu": busiest, "busiest_rank": 0, "cpu": cpu, "cores": 2}
    said = verdict(measures, path, "links")
    assert said["decided_by"] == decided
    assert bool(said["reasons"]) == (decided == "machine")


def test_the_record_sets_the_model_beside_the_measured_time_and_says_it_in_one_line():
    record = build_record(
        ranks=[spent(1.0, 0.9, 0.5), spent(1.0, 0.1, 0.1)],
        pressure=None,
        cores=2,
        dilation=4.0,
        # the first iteration also makes the connections: left out
        measured=[5.0, 0.2, 0.4],
        predicted=[0.1, 0.1, 0.1],
        undilated=[1.0, 0.03, 0.03],
        model="links",
        handoffs=3,
    )
    assert record["model"] == pytest.approx(
        {"kind": "links", "measured": 0.3, "iterations": 2, "predicted": 0.1, "ratio": 3.0}
    )
    assert record["undilated"]["share"] == pytest.approx(0.1)
    assert record["dilation"] == 4.0
    # 3 ranks in a row waited the run's 3 ms a wake-up (real; 0.75 ms virtual): 0.75 %
    assert record["critical"]["seconds"] == pytest.approx(3 * 0.6 / 200 / 4)
    line = one_line(record)
    assert line is not None and line.startswith("fidelity: the machine, not the links")
    assert "3.00 times" in line


def test_real_computation_that_waited_for_a_core_makes_the_run_the_machines():
    """Fig. 13's UMW at N = 42 beside other jobs: its own ranks held 0.2 of the cores and
    the critical path's wake-ups were quick, but each worker's gradient took many times its
    CPU time, and that work is most of the iteration."""

    def record(stretch: float) -> dict:
        ranks = [spent(10.0, 0.5, 1.0), spent(10.0, 0.2, 1.0), spent(10.0, 0.2, 1.0)]
        for rank in ranks[1:]:
            rank |= {"work_real": 0.1 * stretch, "work_cpu": 0.1}
        return build_record(
            ranks=ranks,
            pressure=None,
            cores=2,
            dilation=1.0,
            measured=[1.0, 1.0, 1.0],
            predicted=None,
            undilated=[0.5, 0.5, 0.5],
            model="injected delays",
            handoffs=3,
        )

    slow = record(stretch=20.0)
    assert slow["stretched"]["share"] == pytest.approx(0.5 * (1 - 1 / 20))
    assert slow["verdict"]["decided_by"] == "machine"
    assert "real computation waited for a core 48%" in slow["verdict"]["reasons"][0]
    # on a core of its own the same work did not wait: the delays decide
    alone = record(stretch=1.0)
    assert alone["stretched"]["share"] == 0.0
    assert alone["verdict"]["decided_by"] == "injected delays"
