"""Importing gradcode changes nothing in the importing process's environment.

The Snakemake process imports the package (``workflow/rules/common.smk``), so a variable set on
import would reach every local job; BLAS threads are pinned where they matter instead
(``gradcode.blas``: the MPI ranks, the decoders' level-1 passes, reproducible analyses).
"""

from __future__ import annotations

import os
import subprocess
import sys

from gradcode.blas import BLAS_VARIABLES, single_thread_environment

MODULES = [
    "gradcode",
    "gradcode.cli",
    "gradcode.codes",
    "gradcode.sim",
    "gradcode.analysis",
    "gradcode.train",
    "gradcode.runfile.plan",
    "gradcode.launch.jobs",
    "gradcode.figures",
]


def test_importing_the_package_leaves_the_environment_unchanged():
    env = {k: v for k, v in os.environ.items() if k not in BLAS_VARIABLES}
    script = (
        "import os, sys\n"
        "before = dict(os.environ)\n"
        f"for name in {MODULES!r}:\n"
        "    __import__(name)\n"
        "changed = sorted(k for k in set(before) | set(os.environ)"
        " if before.get(k) != os.environ.get(k))\n"
        "print(changed)\n"
        "sys.exit(1 if changed else 0)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_child_processes_get_one_blas_thread_without_touching_ours():
    before = dict(os.environ)
    env = single_thread_environment({"PATH": "/bin"})
    assert env == {"PATH": "/bin", **dict.fromkeys(BLAS_VARIABLES, "1")}
    assert dict(os.environ) == before


def test_only_the_entry_points_import_the_command_line():
    """Sub-CLIs are registered one way (``gradcode.cli.SUBCOMMANDS``); nothing below imports
    ``gradcode.cli`` back, so there is no import circle."""
    import ast
    from pathlib import Path

    import gradcode
    from gradcode.cli import SUBCOMMANDS

    package = Path(gradcode.__file__).parent
    importers = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            if "gradcode.cli" in names:
                importers.append(str(path.relative_to(package)))
    assert importers == ["__main__.py"]
    for module in SUBCOMMANDS:
        assert callable(__import__(module, fromlist=["add_parser"]).add_parser)


def test_a_rank_on_dense_data_never_imports_scipy_or_the_downloader(tmp_path):
    """Twenty MPI ranks import on two cores: SciPy alone would cost a job 2.6 s
    (``gradcode.sparsity``), the downloader's urllib and the version lookup 1.5 s more."""
    from tests.helpers.data import small_logistic

    data = small_logistic(tmp_path / "data")
    script = (
        "import sys\n"
        "import numpy as np\n"
        "import gradcode.train.run\n"
        "from gradcode.data import load_prepared\n"
        "from gradcode.models import build\n"
        "import gradcode\n"
        f"prepared = load_prepared({str(data)!r})\n"
        "model = build('logistic')\n"
        "theta = np.zeros(prepared.X_train.shape[1])\n"
        "model.partial_gradient(prepared.X_train, prepared.y_train, theta)\n"
        "from gradcode.codes import build as code\n"
        "c = code('frc', n=4, s=1)\n"
        "print(gradcode.__version__)\n"
    )
    _imports_none_of(script, ("scipy", "urllib.request", "http.client"))


def _imports_none_of(script: str, modules: tuple[str, ...]) -> None:
    """``script`` run in a fresh interpreter loads none of ``modules``."""
    check = (
        f"{script}import sys\n"
        f"loaded = [m for m in {modules!r} if m in sys.modules]\n"
        "print(loaded)\n"
        "sys.exit(1 if loaded else 0)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", check], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_what_reads_finished_runs_imports_no_runtime():
    """The fit, the figures, the pipeline and the readers of runs (``gradcode.runlogs``) import
    no MPI and no module of the rank program but its wire format (``gradcode.train.protocol``:
    the header every logged message's bytes include)."""
    readers = [
        "gradcode.runlogs.timings",
        "gradcode.runlogs.world_size",
        "gradcode.runfile.plan",
        "gradcode.runfile.reference",
        "gradcode.fit.observations",
        "gradcode.fit.runs",
        "gradcode.figures.cluster",
        "gradcode.figures.failures",
        "gradcode.pipeline.runs",
        "gradcode.pipeline.resources",
        "gradcode.recommend",
    ]
    script = (
        "import sys\n"
        f"for name in {readers!r}:\n"
        "    __import__(name)\n"
        "runtime = sorted(m for m in sys.modules if m.split('.')[0] == 'mpi4py' or "
        "(m.startswith('gradcode.train.') and m != 'gradcode.train.protocol'))\n"
        "print(runtime)\n"
        "sys.exit(1 if runtime else 0)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_workflow_s_pipeline_modules_import_no_scipy():
    """Every Snakemake process (the DAG's, each SLURM job's, each dry run) imports the rule
    files' helpers; ``scipy.stats`` came with them through ``gradcode.sim``'s package init
    (0.3-0.5 CPU-seconds a process) for one file name, ``gradcode.sim.table.sidecar_path``."""
    from pathlib import Path

    common = Path(__file__).resolve().parents[1] / "workflow" / "rules" / "common.smk"
    imports = [line for line in common.read_text().splitlines() if line.startswith("from gradcode")]
    # and what `from gradcode.pipeline import paths, rule_times` imports
    modules = sorted({line.split()[1] for line in imports} | {"gradcode.pipeline.paths"})
    assert "gradcode.pipeline.figures" in modules
    script = f"for name in {modules!r}:\n    __import__(name)\nfrom gradcode.sim import ResultRow\n"
    _imports_none_of(script, ("scipy", "gradcode.sim.montecarlo"))
