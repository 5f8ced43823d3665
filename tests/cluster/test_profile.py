"""The slurm-cluster profile plans the cluster smoke's training job one rank per node, on TCP
(a dry run: no cluster, no root), and the wrapper it starts srun through sets MPICH on TCP."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _dry_run(tmp_path: Path, target: str, configfile: str) -> str:
    """``snakemake --dry-run TARGET`` under the slurm-cluster profile; its output."""
    # the SLURM executor asks scontrol at start; a stand-in that fails keeps the dry run fast
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "scontrol").write_text("#!/bin/sh\nexit 1\n")
    (shim / "scontrol").chmod(0o755)
    env = {**os.environ, "PATH": f"{shim}{os.pathsep}{os.environ.get('PATH', '')}"}
    result = subprocess.run(
        [
            sys.executable, "-m", "snakemake", target,
            "--dry-run",
            "--profile", str(ROOT / "workflow/profiles/slurm-cluster"),
            "--configfile", str(ROOT / configfile),
            "--directory", str(tmp_path / "work"),
            "--snakefile", str(ROOT / "Snakefile"),
        ],
        cwd=ROOT, capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    return out


def test_slurm_cluster_profile_places_one_rank_per_node_on_tcp(tmp_path):
    out = _dry_run(tmp_path, "results/train/smoke-frc/summary.json", "config/cluster-smoke.yaml")
    train = next(line for line in out.splitlines() if "python -m gradcode.train " in line)
    mpi = " python -m gradcode.cluster.mpi.mpich srun --mpi=pmi2 --ntasks-per-node=1 -n 5 "
    assert mpi in train
    assert "slurm_extra=--ntasks-per-node=1" in out
    assert "slurm_partition=cluster" in out


def test_a_run_that_loses_a_node_is_a_no_kill_job_inside_gradcode_cluster_lose(tmp_path):
    target = "results/train/cluster-node-lost/frc-link/summary.json"
    out = _dry_run(tmp_path, target, "config/cluster.yaml")
    assert "rule train_lost:" in out
    lose = next(line for line in out.splitlines() if "gradcode cluster lose " in line)
    assert "gradcode cluster lose --rank 3 --link --at-iteration 15 --log " in lose
    assert " --return -- gradcode cluster ulfm -n 9 -- python -m gradcode.train " in lose
    assert "python -m gradcode.pipeline.faults" in lose
    assert "slurm_extra=--ntasks-per-node=1 --exclusive --no-kill" in out


def test_the_profiles_wrapper_runs_its_command_with_mpich_on_tcp():
    from gradcode.cluster.mpi.mpich import MPICH_ENV

    names = sorted(MPICH_ENV)
    show = f"import json, os; print(json.dumps({{k: os.environ.get(k) for k in {names!r}}}))"
    done = subprocess.run(
        [sys.executable, "-m", "gradcode.cluster.mpi.mpich", sys.executable, "-c", show],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == MPICH_ENV
    done = subprocess.run(
        [sys.executable, "-m", "gradcode.cluster.mpi.mpich"], capture_output=True, text=True
    )
    assert done.returncode == 2 and done.stderr.startswith("usage: python -m gradcode.cluster")
