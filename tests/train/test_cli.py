"""``gradcode train check|command|run`` (the group is registered by ``add_parser``)."""

from __future__ import annotations

import argparse

import pytest

from gradcode.cli import CLIError
from gradcode.launch.cli import add_parser
from gradcode.livecluster import files
from tests.helpers.cluster import state_of_a_cluster_up
from tests.helpers.mpi import base_run, write_run


def invoke(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="gradcode")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args, rest = parser.parse_known_args(argv)
    return args.func(args, rest)


def test_check_prints_the_plan_and_the_rank_count(tmp_path, logistic_data, capsys):
    run = base_run(
        logistic_data, scheme={"name": "coded-reduce", "params": {"n": 2, "L": 2, "s": 1}}
    )
    run_file = write_run(tmp_path / "tree.yaml", run)
    assert invoke(["train", "check", str(run_file)]) == 0
    out = capsys.readouterr().out
    assert "MPI ranks    7" in out
    assert "n = 6, k = 4 partitions" in out
    assert "480 rows (0 dropped), 16 features" in out


def test_command_prints_mpiexec_and_srun_lines(tmp_path, logistic_data, capsys):
    run_file = write_run(
        tmp_path / "frc.yaml",
        base_run(logistic_data, scheme={"name": "frc", "params": {"n": 4, "s": 1}}),
    )
    invoke(["train", "command", str(run_file)])
    invoke(["train", "command", "--srun", str(run_file)])
    mpiexec, srun = capsys.readouterr().out.strip().splitlines()
    assert " -n 5 " in mpiexec and mpiexec.endswith(f"-m gradcode.train {run_file}")
    assert srun.startswith("srun --mpi=pmi2 -n 5 ")


def test_bad_run_file_is_a_one_line_cli_error(tmp_path, logistic_data):
    run = base_run(logistic_data, scheme={"name": "frc", "params": {"n": 4, "s": 2}})
    run_file = write_run(tmp_path / "bad.yaml", run)
    with pytest.raises(CLIError, match=r"^scheme.params: frc needs \(s \+ 1\) \| n"):
        invoke(["train", "check", str(run_file)])
    with pytest.raises(CLIError, match="cannot read"):
        invoke(["train", "command", str(tmp_path / "missing.yaml")])


def test_check_counts_spares_and_says_which_kills_they_absorb(tmp_path, logistic_data, capsys):
    kills = [{"worker": 1, "iteration": 3}, {"worker": 0, "iteration": 8}]
    run = base_run(logistic_data, scheme={"name": "frc", "params": {"n": 4, "s": 1}})
    with_spare = write_run(tmp_path / "spare.yaml", run | {"faults": {"kill": kills, "spares": 1}})
    alone = write_run(tmp_path / "alone.yaml", run | {"faults": {"kill": kills}})
    invoke(["train", "check", str(with_spare)])
    out = capsys.readouterr().out
    assert "MPI ranks    6" in out and "1 spare ranks take" in out and "will stop" not in out
    invoke(["train", "check", str(alone)])
    assert "cannot decode without workers [0, 1]: the run will stop" in capsys.readouterr().out


def test_check_says_when_the_cluster_that_is_up_has_other_links(
    tmp_path, logistic_data, capsys, monkeypatch
):
    run = base_run(logistic_data, scheme={"name": "frc", "params": {"n": 4, "s": 1}})

    def network_line(rate: str) -> str:
        run_file = write_run(tmp_path / "links.yaml", run | {"network": {"links": {"rate": rate}}})
        invoke(["train", "check", str(run_file)])
        return next(line for line in capsys.readouterr().out.splitlines() if "network" in line)

    # no cluster is up (whatever this machine has up beside the test): nothing to compare
    monkeypatch.setattr(files, "RUN_DIR", tmp_path / "no-cluster")
    assert "warning" not in network_line("100mbit")
    state_of_a_cluster_up(monkeypatch, tmp_path / "cluster", {"nodes": 5, "rate": "100mbit"})
    assert "warning" not in network_line("100mbit")
    assert "warning" not in network_line("12.5MB/s")  # the same rate, in bytes
    # a run file's old 100mbps, 100 megabytes per second: eight times the cluster's links
    line = network_line("100MB/s")
    assert line.endswith(
        "; warning: network.links.rate states 800mbit, but the emulated cluster that is up has "
        "gc-node1's egress at 100mbit; 9 more link directions differ"
    )
