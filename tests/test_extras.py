"""The core install needs no extra, and what needs one says which in one line.

The extras are simulated missing, not uninstalled: each subprocess puts a finder first on
``sys.meta_path`` that refuses every module of them (``BLOCKER``).
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

from gradcode import extras
from gradcode.cli import main
from gradcode.launch import mpilib

ROOT = Path(__file__).resolve().parents[1]
#: every module an extra brings that gradcode could import
EXTRA_MODULES = sorted({module for modules in extras.MODULES.values() for module in modules})
#: what the core is for (the issue's list), and the command line that serves it
CORE = ["gradcode.codes", "gradcode.sim", "gradcode.recommend", "gradcode.timing", "gradcode.fit"]
CORE_CLIS = ["gradcode.cli", "gradcode.sim.cli", "gradcode.recommend.cli", "gradcode.fit.cli"]

BLOCKER = f"""
import sys

class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {EXTRA_MODULES!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}} (blocked)", name=name)
        return None

sys.meta_path.insert(0, Blocker())
"""


def _python(code: str, *, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, cwd=ROOT
    )


def _gradcode_without_extras(*argv: str) -> subprocess.CompletedProcess[str]:
    return _python(f"{BLOCKER}\nfrom gradcode.cli import main\nsys.exit(main({list(argv)!r}))")


def test_importing_the_core_loads_no_extra():
    done = _python(
        f"import sys\nfor name in {CORE + CORE_CLIS!r}:\n    __import__(name)\n"
        f"print(sorted(m for m in {EXTRA_MODULES!r} if m in sys.modules))"
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_core_commands_run_without_any_extra(tmp_path):
    done = _gradcode_without_extras("codes", "verify", "frc", "--n", "4", "--s", "1")
    assert done.returncode == 0 and "verdict              PASS" in done.stdout, done.stderr
    table = tmp_path / "t3.csv"
    done = _gradcode_without_extras(
        "simulate", "ye-abbe-table3", "--trials", "200", "--out", str(table), "--quiet"
    )
    assert done.returncode == 0 and table.is_file(), done.stderr
    spec = tmp_path / "cluster.yaml"
    spec.write_text(
        "model: master-worker\nparameters: {lambda1: 0.8, t1: 1.6}\n"
        "schemes: [{scheme: uncoded, params: {n: 6}}]\n"
    )
    done = _gradcode_without_extras(
        *["codes", "recommend", "--spec", str(spec), "--n", "6", "--trials", "500"],
        *["--screen-trials", "100", "--quiet"],
    )
    assert done.returncode == 0 and "run-file lines" in done.stdout, done.stderr
    # every command's help still prints: the parsers import no extra
    commands = ["train", "data", "analyze", "cluster", "timing"]
    done = _python(
        f"{BLOCKER}\nfrom gradcode.cli import main\nfor command in {commands!r}:\n"
        "    try:\n        main([command, '--help'])\n    except SystemExit as end:\n"
        "        assert end.code == 0, command\n"
    )
    assert done.returncode == 0, done.stderr
    assert [f"usage: gradcode {c}" in done.stdout for c in commands] == [True] * len(commands)


RUN = str(ROOT / "config" / "runs" / "smoke-frc.yaml")


@pytest.mark.parametrize(
    ("code", "line"),
    [
        (
            f"from gradcode.cli import main\nsys.exit(main(['train', 'run', {RUN!r}]))",
            "gradcode train run needs the 'mpi' extra: pip install 'gradcode[mpi]'",
        ),
        (
            f"import runpy\nsys.argv = ['gradcode.train', {RUN!r}]\n"
            "runpy.run_module('gradcode.train', run_name='__main__')",
            "python -m gradcode.train needs the 'mpi' extra: pip install 'gradcode[mpi]'",
        ),
        (
            "import runpy\nsys.argv = ['linkprobe', '--out', 'x']\n"
            "runpy.run_module('gradcode.train.linkprobe', run_name='__main__')",
            "python -m gradcode.train.linkprobe needs the 'mpi' extra: pip install 'gradcode[mpi]'",
        ),
        (
            "from gradcode.cli import main\n"
            "sys.exit(main(['data', 'prepare', 'synthetic-logistic', '--out', 'OUT']))",
            "preparing a data set needs the 'data' extra: pip install 'gradcode[data]'",
        ),
        (
            "from gradcode.cli import main\n"
            "sys.exit(main(['analyze', 'coded-reduce-digits', '--trials', '2', '--out', 'OUT']))",
            "the coded-reduce-digits analysis (scikit-learn's digits) needs the 'data' extra: "
            "pip install 'gradcode[data]'",
        ),
    ],
    ids=["train-run", "python-m-train", "linkprobe", "data-prepare", "digits-analysis"],
)
def test_a_command_without_its_extra_says_which_in_one_line(tmp_path, code, line):
    done = _python(BLOCKER + code.replace("OUT", str(tmp_path / "out")))
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr == f"gradcode: error: {line}\n"
    assert not (tmp_path / "out").exists()


def test_a_missing_mpi_launcher_names_the_extra_in_one_line(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(mpilib, "bin_dir", lambda: tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path))
    assert main(["train", "command", RUN]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"gradcode: error: starting MPICH (mpiexec.hydra is neither beside {sys.executable} "
        "nor on PATH) needs the 'mpi' extra: pip install 'gradcode[mpi]'\n"
    )
    with pytest.raises(extras.MissingExtra, match=r"^starting Open MPI \(ompirun_wrapper is"):
        mpilib.ulfm_launcher()


def test_the_extras_modules_are_what_pyprojects_extras_install():
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    optional = declared["optional-dependencies"]
    distributions = packages_distributions()

    def names(requirements: list[str]) -> set[str]:
        return {re.split(r"[\[<>=!~ ;]", r, maxsplit=1)[0].lower() for r in requirements}

    for extra, modules in extras.MODULES.items():
        for module in modules:
            assert {d.lower() for d in distributions[module]} & names(optional[extra]), module
    assert optional["all"] == [f"gradcode[{','.join(extras.MODULES)}]"]
    assert "gradcode[all,docs]" in optional["test"]
    # the core installs none of them
    core = names(declared["dependencies"])
    assert not core & {d.lower() for m in EXTRA_MODULES for d in distributions[m]}
    with pytest.raises(ValueError, match="unknown extra 'gpu'"):
        extras.missing("x", "gpu")
