"""Each fact has one home: a second spelling of it anywhere else fails here.

- Output paths: ``gradcode.pipeline.paths``. No rule, notebook, workflow script or the figure
  registry spells a path under ``results/``, and no other module of the package holds one in
  a string (docstrings may say where things go).
- MPICH on TCP over the emulated cluster's links: ``gradcode.cluster.mpi.mpich.MPICH_ENV``; hydra's
  launcher and the slurm-cluster profile (through ``python -m gradcode.cluster.mpi.mpich``) take
  it from there, and no file of the source tree sets one of its variables to a value.
- MPICH's launcher: ``gradcode.launch.mpilib`` (``HYDRA``, looked up by ``hydra()``).
- The runtime folder of the emulated cluster: ``gradcode.livecluster.files`` (``RUN_DIR``;
  its lock beside it, ``gradcode.cluster.state.lock_path``, derives from it).
"""

from __future__ import annotations

import ast
import functools
import re
import subprocess
from pathlib import Path

from gradcode.cluster.mpi.mpich import MPICH_ENV

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "gradcode"


def _workflow_files() -> list[Path]:
    workflow = ROOT / "workflow"
    return [
        ROOT / "Snakefile",
        workflow / "figures.yaml",
        *sorted(workflow.glob("rules/*.smk")),
        *sorted(workflow.glob("notebooks/*.py")),
        *sorted(workflow.glob("scripts/*.py")),
    ]


def _strings(path: Path) -> list[tuple[int, str]]:
    """Every string literal of a module (f-strings' literal parts too) but its docstrings."""
    tree = ast.parse(path.read_text())
    docstrings = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            if isinstance(body[0].value, ast.Constant) and isinstance(body[0].value.value, str):
                docstrings.add(id(body[0].value))
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    ]


def test_no_rule_notebook_script_or_registry_spells_a_results_path():
    spelled = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in _workflow_files()
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if "results/" in line
    ]
    assert not spelled, "name these paths in gradcode.pipeline.paths:\n" + "\n".join(spelled)


def test_only_the_paths_module_holds_a_results_path():
    spelled = _package_strings("results/", PACKAGE / "pipeline" / "paths.py")
    assert not spelled, "name these paths in gradcode.pipeline.paths:\n" + "\n".join(spelled)


def _source_tree() -> list[Path]:
    """Every tracked file of the repository that code or configuration is read from (not the
    documentation, nor what an install leaves, such as src/gradcode.egg-info's README copy)."""
    folders = ["src", "tests", "workflow", "benchmarks", ".ci", "config", "examples", "envs"]
    listed = subprocess.run(
        ["git", "ls-files", "-z", "Snakefile", "pyproject.toml", *folders],
        cwd=ROOT, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    # the notebooks' fixtures are recorded outputs (a links.json records its job's environment)
    return [
        ROOT / name
        for name in sorted(listed.split("\0"))
        if name and not name.startswith("tests/notebooks/fixtures")
    ]


@functools.cache
def _all_package_strings() -> tuple[tuple[Path, int, str], ...]:
    return tuple(
        (path, number, value)
        for path in sorted(PACKAGE.rglob("*.py"))
        for number, value in _strings(path)
    )


def _package_strings(text: str, home: Path) -> list[str]:
    """``path:line: value`` of every string of the package (docstrings aside) holding
    ``text``, outside ``home``."""
    return [
        f"{path.relative_to(ROOT)}:{number}: {value!r}"
        for path, number, value in _all_package_strings()
        if path != home and text in value
    ]


def test_the_mpich_environment_is_set_in_one_place():
    home = PACKAGE / "cluster" / "mpi" / "mpich.py"
    setting = re.compile(rf"\b({'|'.join(MPICH_ENV)})\W+({'|'.join(MPICH_ENV.values())})\b")
    spelled = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in _source_tree()
        if path != home
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
        if setting.search(line)
    ]
    assert not spelled, "take it from gradcode.cluster.mpi.mpich:\n" + "\n".join(spelled)


def test_mpichs_launcher_is_named_and_looked_up_in_one_place():
    home = PACKAGE / "launch" / "mpilib.py"
    spelled = _package_strings("mpiexec.hydra", home)
    spelled += [
        f"{path.relative_to(ROOT)}: {line.strip()}"
        for path in sorted((ROOT / "workflow").rglob("*.smk"))
        for line in path.read_text().splitlines()
        if "mpiexec.hydra" in line
    ]
    assert not spelled, "use gradcode.launch.mpilib (HYDRA, hydra()):\n" + "\n".join(spelled)


def test_the_cluster_runtime_folder_and_its_lock_come_from_the_state_module():
    spelled = _package_strings("/run/gradcode", PACKAGE / "livecluster" / "files.py")
    assert not spelled, "use gradcode.livecluster.files (RUN_DIR):\n" + "\n".join(spelled)
