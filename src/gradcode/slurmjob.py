"""The SLURM job this process runs in, as SLURM describes it: ``scontrol show job``'s fields
and the job's nodes.

Snakemake's SLURM job-step executor strips every ``SLURM_*`` variable but the job's identity
before it runs a rule, so what the environment no longer says is asked of SLURM. The launcher
(``gradcode.launch.ulfm``: the allocation for Open MPI's launcher), the emulated cluster
(``gradcode.cluster.network.rerate``: the job's nodes' links) and a run reading the cluster that
is up (``gradcode.livecluster.links``) all ask it, so it sits below them.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Callable, Mapping, Sequence

from gradcode.errors import UserError


class AllocationError(RuntimeError):
    """The SLURM allocation cannot be described to Open MPI's launcher (one line)."""


class JobNodesError(UserError):
    """SLURM could not list the job's nodes (one line)."""


def job_fields(job: str, show_job: Callable[[str], str] | None = None) -> dict[str, str]:
    """``scontrol show job JOB``'s fields (``NodeList``, ``NumTasks``, ...) as strings."""
    text = (show_job or _scontrol_show_job)(job)
    return dict(re.findall(r"(?:^|\s)([A-Za-z/]+)=(\S*)", text))


def _scontrol_show_job(job: str) -> str:
    try:
        done = subprocess.run(
            ["scontrol", "show", "job", job], capture_output=True, text=True, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise AllocationError(f"SLURM job {job}: scontrol show job failed ({error})") from None
    if done.returncode != 0:
        raise AllocationError(f"SLURM job {job}: scontrol show job: {done.stderr.strip()}")
    return done.stdout


def job_nodes(
    environ: Mapping[str, str] | None = None, run: Callable[[Sequence[str]], str] | None = None
) -> list[str] | None:
    """The nodes of the SLURM job this runs in (``scontrol show hostnames`` of
    ``SLURM_JOB_NODELIST``, which SLURM writes compressed: ``gc-node[0-8]``, or of ``scontrol
    show job``'s when the variable was taken away); ``None`` outside a job. ``run`` runs a
    command and gives its output (default: ``JobNodesError`` when it fails)."""
    environ = os.environ if environ is None else environ
    nodelist = environ.get("SLURM_JOB_NODELIST")
    job = environ.get("SLURM_JOB_ID") or environ.get("SLURM_JOBID")
    if not nodelist and job:
        # Snakemake's job-step executor keeps only the job's id: ask SLURM for the rest
        nodelist = job_fields(job).get("NodeList")
    if not nodelist:
        return None
    names = (run or _run)(["scontrol", "show", "hostnames", nodelist]).split()
    if not names:
        raise JobNodesError(f"SLURM_JOB_NODELIST={nodelist!r}: scontrol lists no node")
    return names


def _run(argv: Sequence[str]) -> str:
    try:
        done = subprocess.run(list(argv), capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise JobNodesError(f"{' '.join(argv)}: {error}") from None
    if done.returncode != 0:
        said = " ".join((done.stderr or done.stdout).split())
        raise JobNodesError(f"{' '.join(argv)} failed (exit {done.returncode}): {said}")
    return done.stdout
