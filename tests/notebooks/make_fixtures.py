"""Regenerate the notebook fixtures: real workflow outputs on small inputs.

    python tests/notebooks/make_fixtures.py [--keep SCRATCH]

Runs the workflow (the ci profile) with ``tests/notebooks/fixtures.yaml`` in a scratch folder,
up to the files its figures read, then copies those files (with the sidecars and run folders
the notebooks open beside them) into ``tests/notebooks/fixtures/`` and writes
``fixtures/figures.json``: figure -> its notebook and papermill parameters, paths relative to
the fixtures folder (``results/...``) or to the repository (experiment files).
``tests/notebooks/test_notebooks.py`` runs every notebook on them. Takes about 10 minutes on
two cores (the MPI runs); the fixtures stay a few hundred kB.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from gradcode.pipeline.figures import FigureTable, load_registry, wanted_files
from gradcode.pipeline.runs import collect_runs
from gradcode.pipeline.specs import collect_specs

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
CONFIG = HERE / "fixtures.yaml"
FIXTURES = HERE / "fixtures"
#: files of a run folder no notebook opens (the final model, checkpoints, the MPI job's logs)
SKIPPED = {"checkpoint.npz", "model.npy", "stdout.log", "stderr.log"}
#: notebooks that train the serial reference again, on the runs' prepared data: too large to
#: commit (1 MB for 2000 synthetic rows), the test prepares it with `gradcode data prepare`
NEED_DATA = {"failed_workers", "cluster_link_cut"}


def figure_table() -> tuple[FigureTable, list[str]]:
    """The figures of the fixtures config and those its files suffice for."""
    config = yaml.safe_load(CONFIG.read_text())
    runs = collect_runs(config["train"]["runs"], config["train"]["experiments"], ROOT)
    specs = collect_specs(config["simulate"]["specs"], ROOT)
    registry = load_registry(
        ROOT / "workflow" / "figures.yaml", ROOT / "workflow" / "schemas" / "figures.schema.yaml"
    )
    table = FigureTable.build(registry, runs, specs)
    return table, table.active(wanted_files(config, runs, specs))


def copy_input(scratch: Path, name: str) -> None:
    """``name`` (relative to the workflow folder) and what the notebooks read beside it."""
    source = scratch / name
    if source.name == "summary.json":
        for path in source.parent.iterdir():
            if path.is_file() and path.name not in SKIPPED:
                _copy(path, FIXTURES / path.relative_to(scratch))
        return
    _copy(source, FIXTURES / name)
    sidecar = source.with_name(source.name + ".json")
    if sidecar.is_file():
        _copy(sidecar, FIXTURES / (name + ".json"))


def _copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)


def prepared_data(table: FigureTable, figure: str) -> list[str]:
    """``DATASET/VARIANT`` of every run ``figure`` reads, if its notebook needs the data."""
    if table.notebooks[figure] not in NEED_DATA:
        return []
    runs = table.inputs[figure].get("runs", [])
    folders = set()
    for summary in [runs] if isinstance(runs, str) else runs:
        run = yaml.safe_load((FIXTURES / summary).with_name("run.yaml").read_text())
        folders.add(run["data"]["prepared"].removeprefix("results/data/"))
    return sorted(folders)


def relative(value: str) -> str:
    """A parameter's path as the test passes it: inside the repository, relative to it."""
    path = Path(value)
    return str(path.relative_to(ROOT)) if path.is_absolute() else value


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, help="workflow folder to use and keep")
    args = parser.parse_args(argv)
    table, figures = figure_table()
    scratch = args.keep or Path(tempfile.mkdtemp(prefix="notebook-fixtures-"))
    files = sorted(
        {
            f
            for figure in figures
            for value in table.inputs[figure].values()
            for f in ([value] if isinstance(value, str) else value)
            if f.startswith("results/")
        }
    )
    command = [
        "snakemake",
        "--profile",
        str(ROOT / "workflow" / "profiles" / "ci"),
        "--snakefile",
        str(ROOT / "Snakefile"),
        "--configfile",
        str(CONFIG),
        "--directory",
        str(scratch),
        *files,
    ]
    subprocess.run(command, check=True, cwd=ROOT)
    shutil.rmtree(FIXTURES, ignore_errors=True)
    for name in files:
        copy_input(scratch, name)
    manifest = {
        figure: {
            "notebook": table.notebooks[figure],
            "prepare": prepared_data(table, figure),
            "parameters": {
                name: relative(value) if isinstance(value, str) else [relative(v) for v in value]
                for name, value in table.inputs[figure].items()
            },
        }
        for figure in figures
    }
    (FIXTURES / "figures.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    size = sum(p.stat().st_size for p in FIXTURES.rglob("*") if p.is_file())
    print(f"make_fixtures: {len(figures)} figures, {size / 1000:.0f} kB in {FIXTURES}")
    if args.keep is None:
        shutil.rmtree(scratch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
