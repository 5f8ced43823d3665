"""The Snakemake workflow: lint, format, dry run, and config errors at DAG construction."""

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# The SLURM executor plugin asks `scontrol show config` when snakemake starts; on a machine
# with the SLURM client but no running controller that call hangs for ~10 s. These tests talk
# to no cluster, so a stand-in scontrol that fails at once keeps each snakemake call fast.
_SHIM = Path(tempfile.mkdtemp(prefix="gradcode-noslurm-"))
(_SHIM / "scontrol").write_text("#!/bin/sh\nexit 1\n")
(_SHIM / "scontrol").chmod(0o755)
_ENV = os.environ | {"PATH": f"{_SHIM}{os.pathsep}{os.environ.get('PATH', '')}"}


def _snakemake(*args, cwd=ROOT):
    return subprocess.run(
        [sys.executable, "-m", "snakemake", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env=_ENV,
    )


def test_lint_clean():
    result = _snakemake("--lint")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Congratulations" in result.stdout + result.stderr


def test_snakefmt_clean():
    snakefmt = shutil.which("snakefmt") or str(Path(sys.executable).parent / "snakefmt")
    result = subprocess.run(
        [snakefmt, "--check", "Snakefile", "workflow"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_dry_run_plans_every_stage(tmp_path):
    result = _snakemake(
        "--dry-run",
        "--cores",
        "2",
        "--directory",
        str(tmp_path),
        "--snakefile",
        str(ROOT / "Snakefile"),
        "--configfile",
        str(ROOT / "config/config.yaml"),
    )
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    for rule in (
        "verify_code",
        "code_table",
        "stability",
        "simulate",
        "figure",
        "comparison_table",
        "prepare_data",
        "run_config",
        "train",
    ):
        assert rule in out


def test_paper_config_plans(tmp_path):
    result = _snakemake(
        "--dry-run",
        "--profile",
        str(ROOT / "workflow/profiles/slurm"),
        "--configfile",
        str(ROOT / "config/paper.yaml"),
        "--directory",
        str(tmp_path),
        "--snakefile",
        str(ROOT / "Snakefile"),
    )
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    assert "amazon-ye-abbe-n10" in out and "train" in out


@pytest.mark.parametrize("profile", ["local", "ci", "slurm"])
def test_profiles_dry_run_the_smoke_config(tmp_path, profile):
    result = _snakemake(
        "--dry-run",
        "--profile",
        str(ROOT / "workflow/profiles" / profile),
        "--configfile",
        str(ROOT / "config/smoke.yaml"),
        "--directory",
        str(tmp_path),
        "--snakefile",
        str(ROOT / "Snakefile"),
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    "config, message",
    [
        ("codes: {verify: [{id: x, scheme: nope, params: {}}]}", "nope"),
        (
            "codes: {verify: [{id: x, scheme: frc, params: {n: 7, s: 2}}]}",
            "codes.verify[0] (id x): frc needs (s + 1) | n (got n=7, s=2)",
        ),
        ("codes: {verify: [{id: x, scheme: uncoded, params: {n: 2}}]}\nextra: 1", "extra"),
        (
            "codes: {verify: [{id: x, scheme: uncoded, params: {n: 2}}]}\n"
            "simulate: {presets: [table-9]}",
            "table-9",
        ),
    ],
)
def test_bad_config_fails_at_dag_construction(tmp_path, config, message):
    bad = tmp_path / "bad.yaml"
    bad.write_text(config + "\n")
    result = _snakemake(
        "--dry-run",
        "--cores",
        "1",
        "--configfile",
        str(bad),
        "--directory",
        str(tmp_path),
        "--snakefile",
        str(ROOT / "Snakefile"),
    )
    assert result.returncode != 0
    assert message in result.stdout + result.stderr
    assert not (tmp_path / "results").exists()
