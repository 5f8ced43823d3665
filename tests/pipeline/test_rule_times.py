"""The time table by rule (``gradcode.pipeline.rule_times``) from files in the form Snakemake
9 writes for ``benchmark:``; the workflow smoke (``.ci/workflow-smoke``) checks the table a
real run leaves."""

from __future__ import annotations

import math

from gradcode.pipeline import rule_times

#: the header and a line as Snakemake 9.x writes them
HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


def _bench(folder, rule, name, seconds, rss="120.5", cpu="1.25"):
    path = folder / rule / f"{name}.tsv"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + f"{seconds}\t0:00:01\t{rss}\t400\t100\t110\t0.00\t0.01\t80.0\t{cpu}\n")


def test_the_jobs_add_up_by_rule_the_slowest_first(tmp_path):
    for i, seconds in enumerate((3.0, 1.5, 0.5)):
        _bench(tmp_path, "train", f"run-{i}", seconds, rss=str(100 * (i + 1)))
    _bench(tmp_path, "figure", "sub/fig", 4.0)
    found = rule_times.read(tmp_path)
    assert [r.rule for r in found] == ["train", "figure"]
    train = found[0]
    assert (train.jobs, train.wall, train.longest, train.cpu) == (3, 5.0, 3.0, 3.75)
    assert train.peak_mib == 300.0
    text = rule_times.report(tmp_path, tmp_path / "out" / "times.md")
    assert "| train | 3 | 5.0 | 3.0 | 3.8 | 300 |" in text
    assert "| all | 4 | 9.0 |" in text
    assert (tmp_path / "out" / "times.md").read_text() == text
    assert rule_times.main([str(tmp_path)]) == 0


def test_no_benchmarks_is_an_empty_report_and_a_failing_command(tmp_path, capsys):
    assert rule_times.report(tmp_path / "none") == ""
    assert rule_times.main([str(tmp_path / "none")]) == 1
    assert "no benchmark files under" in capsys.readouterr().err


def test_a_value_snakemake_did_not_measure_is_not_a_number(tmp_path):
    _bench(tmp_path, "train", "x", 2.5, rss="NA", cpu="NA")
    (row,) = rule_times.read(tmp_path)
    assert row.wall == 2.5 and math.isnan(row.peak_mib) and math.isnan(row.cpu)
    assert "| train | 1 | 2.5 | 2.5 | n/a | n/a |" in rule_times.markdown([row])
