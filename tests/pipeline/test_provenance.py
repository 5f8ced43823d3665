"""Each figure's record of the config and commit that drew it, written by rule figure."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gradcode.pipeline.provenance import (
    Provenance,
    applied_config_files,
    current_commit,
    main,
    provenance_arguments,
    read_provenance,
    record,
    write_provenance,
)

ROOT = Path(__file__).resolve().parents[2]


def _git(folder: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(folder), "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A git checkout with one committed notebook."""
    folder = tmp_path / "checkout"
    (folder / "workflow" / "notebooks").mkdir(parents=True)
    (folder / "workflow" / "notebooks" / "plot.py").write_text("x = 1\n")
    _git(folder, "init", "-q")
    _git(folder, "add", ".")
    _git(folder, "commit", "-q", "-m", "notebook")
    return folder


def test_the_config_files_apply_default_first_and_are_named_inside_the_checkout(tmp_path):
    default, smoke = ROOT / "config" / "config.yaml", ROOT / "config" / "smoke.yaml"
    # Snakemake lists the --configfile files first, then the Snakefile's when it read it
    loaded = [smoke, default]
    assert applied_config_files(loaded, [smoke], False, ROOT) == [
        "config/config.yaml",
        "config/smoke.yaml",
    ]
    assert applied_config_files(loaded, [smoke], True, ROOT) == ["config/smoke.yaml"]
    assert applied_config_files([default], [], False, ROOT) == ["config/config.yaml"]
    elsewhere = tmp_path / "mine.yaml"
    assert applied_config_files([elsewhere], [elsewhere], False, ROOT) == [str(elsewhere)]


def test_the_rules_options_are_the_config_files_in_order_and_the_overrides_as_json():
    words = provenance_arguments(["a.yaml", "b c.yaml"], {"data": {"stand_ins": "never"}})
    assert words == (
        '--config a.yaml --config \'b c.yaml\' --overrides \'{"data": {"stand_ins": "never"}}\''
    )
    assert provenance_arguments(["a.yaml"], {}) == "--config a.yaml"


def test_the_commit_is_heads_and_only_a_changed_tracked_file_marks_it_modified(checkout):
    head = _git(checkout, "rev-parse", "HEAD")
    assert current_commit(checkout / "workflow" / "notebooks") == (head, False)
    (checkout / "scratch.txt").write_text("untracked\n")
    assert current_commit(checkout) == (head, False)
    (checkout / "workflow" / "notebooks" / "plot.py").write_text("x = 2\n")
    assert current_commit(checkout) == (head, True)


def test_outside_a_checkout_the_commit_is_unknown(tmp_path):
    assert current_commit(tmp_path) == (None, False)
    drawn = record("f", "f", ["c.yaml"], tmp_path, now=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC))
    assert drawn.commit is None and drawn.drawn == "2026-01-02T03:04:05+00:00"
    assert drawn.commit_text() == "an unknown commit (not drawn from a git checkout)"


def test_the_command_writes_a_record_that_reads_back(checkout, tmp_path, capsys):
    out = tmp_path / "results" / "figures" / "plot.json"
    notebook = checkout / "workflow" / "notebooks" / "plot.py"
    argv = [str(out), "--figure", "plot_a", "--notebook", str(notebook)]
    argv += ["--config", "config/config.yaml", "--config", "config/smoke.yaml"]
    assert main([*argv, "--overrides", '{"seed": 3}']) == 0
    data = json.loads(out.read_text())
    assert data["figure"] == "plot_a" and data["notebook"] == "plot"
    assert data["commit"] == _git(checkout, "rev-parse", "HEAD") and data["modified"] is False
    assert data["config"] == ["config/config.yaml", "config/smoke.yaml"]
    again = read_provenance(out)
    assert again is not None and again.overrides == {"seed": 3}
    assert again.config_text() == ("config/smoke.yaml over config/config.yaml with --config seed=3")
    assert again.commit_text(lambda text: f"<{text}>") == f"<{data['commit'][:12]}>"
    assert "config/smoke.yaml over config/config.yaml" in capsys.readouterr().out


def test_a_missing_or_foreign_record_reads_as_none(tmp_path):
    assert read_provenance(tmp_path / "absent.json") is None
    (tmp_path / "bad.json").write_text("{not json")
    assert read_provenance(tmp_path / "bad.json") is None
    (tmp_path / "other.json").write_text('{"figure": "x"}')
    assert read_provenance(tmp_path / "other.json") is None


def test_a_written_record_is_the_same_record_read_back(tmp_path):
    drawn = Provenance("f", "n", ("a.yaml",), "0" * 40, True, "2026-01-01T00:00:00+00:00", "1")
    write_provenance(tmp_path / "f.json", drawn)
    assert read_provenance(tmp_path / "f.json") == drawn
    assert drawn.commit_text() == "000000000000 with uncommitted changes"
