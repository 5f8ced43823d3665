"""What TCP did in a real MPI run's namespaces (``gradcode.fidelity.tcp``), as its summary's
fidelity record says: on localhost every rank is in the machine's own namespace, counted once
and said to be shared; with MPICH on TCP over the loopback the run's own messages show."""

from __future__ import annotations

import pytest

from gradcode.cluster.mpi.mpich import MPICH_ENV
from gradcode.fidelity import tcp
from gradcode.launch.jobs import run_job
from tests.helpers.mpi import Job, base_run, run_config, write_run

pytestmark = pytest.mark.mpi

ITERATIONS = 6
WORKERS = 4


def _run(logistic_data):
    return base_run(
        logistic_data,
        iterations=ITERATIONS,
        scheme={"name": "uncoded", "params": {"n": WORKERS}},
        log={"metrics_every": 0},
    )


def _section(job: Job) -> dict:
    record = job.summary()["fidelity"]
    section = record["tcp"]
    if tcp.sample() is None:
        assert section is None  # no counters here: no section, and the run still ends
        pytest.skip("no /proc/self/net counters here")
    assert section is not None, record
    # one namespace, the machine's, counted once, by rank 0, for all five ranks
    assert section["namespaces"] == 1 and section["ranks"] == WORKERS + 1
    [counted] = section["counted"]
    assert counted["rank"] == 0 and counted["ranks"] == WORKERS + 1
    assert section["sums"] == counted["counters"]
    assert set(tcp.COUNTERS) >= set(section["sums"]) >= set(tcp.TCP)
    assert all(value >= 0 for value in section["sums"].values()), section
    return section


def test_a_run_on_localhost_counts_the_machines_namespace_once_and_says_it_is_shared(
    tmp_path, logistic_data
):
    section = _section(run_config(tmp_path, _run(logistic_data), ranks=WORKERS + 1).check())
    if tcp.sample()["machine"] is None:
        assert section["shared"] is None and "note" not in section
    else:
        assert section["shared"] is True and section["note"] == tcp.SHARED_NOTE


def test_a_run_whose_messages_cross_tcp_shows_them(tmp_path, logistic_data):
    """MPICH's netmod on libfabric's tcp provider over the loopback, its shared memory off:
    every model sent and every gradient returned is at least one TCP segment in this
    namespace, during the ranks' timed part."""
    run_file = write_run(tmp_path / "tcp.yaml", _run(logistic_data))
    env = MPICH_ENV | {"FI_TCP_IFACE": "lo", "MPIR_CVAR_NOLOCAL": "1"}
    out = tmp_path / "tcp"
    job = Job(
        run_job(WORKERS + 1, run_file, ["--out", str(out)], timeout=90, env=env), out, run_file
    )
    section = _section(job.check())
    assert section["sums"]["OutSegs"] >= 2 * WORKERS * ITERATIONS, section
    assert section["sums"]["InSegs"] >= 2 * WORKERS * ITERATIONS, section
