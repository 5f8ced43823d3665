"""The slurm-cluster profile plans the cluster smoke's training job one rank per node, on TCP
(a dry run: no cluster, no root)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_slurm_cluster_profile_places_one_rank_per_node_on_tcp(tmp_path):
    # the SLURM executor asks scontrol at start; a stand-in that fails keeps the dry run fast
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "scontrol").write_text("#!/bin/sh\nexit 1\n")
    (shim / "scontrol").chmod(0o755)
    env = {**os.environ, "PATH": f"{shim}{os.pathsep}{os.environ.get('PATH', '')}"}
    result = subprocess.run(
        [
            sys.executable, "-m", "snakemake", "results/train/smoke-frc/summary.json",
            "--dry-run",
            "--profile", str(ROOT / "workflow/profiles/slurm-cluster"),
            "--configfile", str(ROOT / "config/cluster-smoke.yaml"),
            "--directory", str(tmp_path / "work"),
            "--snakefile", str(ROOT / "Snakefile"),
        ],
        cwd=ROOT, capture_output=True, text=True, timeout=300, env=env,
    )  # fmt: skip
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    train = next(line for line in out.splitlines() if "python -m gradcode.train " in line)
    assert "MPIR_CVAR_CH4_NETMOD=ofi FI_PROVIDER=tcp" in train
    assert "srun --mpi=pmi2 --ntasks-per-node=1 -n 5 " in train
    assert "slurm_extra=--ntasks-per-node=1" in out
    assert "slurm_partition=cluster" in out
