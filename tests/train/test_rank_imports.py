"""What an MPI rank imports before its first message: only what a rank uses.

Every rank of every job (CI's MPI tests, the workflow's training jobs) pays the module-level
imports of ``gradcode.train.run`` before it can answer a message; what only rank 0's phase 1,
a rare run or a command needs is imported where it is used. These tests pin the cut: a module
named here coming back onto the rank's path is a start-up cost every rank pays again.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytest.importorskip("mpi4py")

#: off every rank's import path: plug-in discovery's metadata reader (and the email package
#: it pulls), the data sets (rank 0 loads them in phase 1), the simulator's timing models and
#: the links' predictions, the rate and duration parsers, the aggregators, the node log, and
#: what only a rank writing files or fingerprinting the run needs (tempfile, hashlib)
OFF_THE_PATH = (
    "importlib.metadata",
    "email",
    "hashlib",
    "tempfile",
    "gradcode.data",
    "gradcode.runfile.dataset",
    "gradcode.timing",
    "gradcode.runlogs.timings",
    "gradcode.rate",
    "gradcode.duration",
    "gradcode.aggregators",
    "gradcode.runlogs.nodelog",
)

#: imports the rank's entry module without starting MPI, then runs ``STEP``; prints the
#: modules then loaded
SCRIPT = """
import json, sys
import mpi4py
mpi4py.rc.initialize = False
mpi4py.rc.finalize = False
import gradcode.train.run
{step}
print(json.dumps(sorted(sys.modules)))
"""


def _loaded(step: str = "") -> list[str]:
    result = subprocess.run(
        [sys.executable, "-c", SCRIPT.format(step=step)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.splitlines()[-1])


def _off_the_path(loaded: list[str], names: tuple[str, ...]) -> list[str]:
    return [m for m in loaded if any(m == n or m.startswith(n + ".") for n in names)]


def test_the_rank_entry_imports_nothing_only_a_rare_path_uses():
    assert _off_the_path(_loaded(), OFF_THE_PATH) == []


@pytest.mark.parametrize("stragglers", ["none", "random-set"])
def test_a_worker_rebuilding_the_plan_discovers_no_plugins(tmp_path: Path, stragglers: str):
    """A worker rebuilds the plan from the broadcast config: a built-in code with the
    runtime's own straggler sources looks up no plug-in and builds no timing model."""
    params = {"count": 1, "delay": 0.1} if stragglers == "random-set" else {}
    run = {
        "iterations": 2,
        "data": {"prepared": str(tmp_path)},
        "model": {"kind": "logistic"},
        "optimizer": {"kind": "gd", "step": 1.0},
        "scheme": {"name": "frc", "params": {"n": 4, "s": 1}},
        "stragglers": {"model": stragglers, "params": params},
    }
    run_file = tmp_path / "run.yaml"
    run_file.write_text(yaml.safe_dump(run))
    step = (
        "from gradcode.runfile.config import load_config\n"
        "from gradcode.runfile.plan import build_plan\n"
        f"plan = build_plan(load_config({str(run_file)!r}))\n"
        "assert plan.workers == 4 and plan.bandwidth is None\n"
    )
    off = ("importlib.metadata", "gradcode.timing", "gradcode.data", "gradcode.aggregators")
    assert _off_the_path(_loaded(step), off) == []
