"""Regenerate the notebook fixtures: real workflow outputs on small inputs.

    python tests/notebooks/make_fixtures.py [--keep SCRATCH]
    python tests/notebooks/make_fixtures.py --cluster [--keep SCRATCH]   # as root

Runs the workflow (the ci profile) with ``tests/notebooks/fixtures.yaml`` in a scratch folder,
up to the files its figures read, then copies those files (with the sidecars and run folders
the notebooks open beside them) into ``tests/notebooks/fixtures/`` and writes
``fixtures/figures.json``: figure -> its notebook and papermill parameters, paths relative to
the fixtures folder (``results/...``) or to the repository (experiment files).
``tests/notebooks/test_notebooks.py`` runs every notebook on them.

``--cluster`` does the same for the cluster notebooks, whose inputs only the emulated cluster
makes: ``cluster-fixtures.yaml`` into ``fixtures-cluster/``, on a cluster this script brings
up without SLURM (``CLUSTER_UP``: root, network namespaces) and always takes down again,
failing if a namespace is left; the MPI jobs start through ``gradcode cluster mpiexec`` (one
rank per node, MPICH on TCP over the links), as ``.ci/cluster-smoke``'s run under hydra does.
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
#: the two fixture sets: the workflow config -> the folder its fixtures go to
CONFIG = HERE / "fixtures.yaml"
FIXTURES = HERE / "fixtures"
CLUSTER_CONFIG = HERE / "cluster-fixtures.yaml"
CLUSTER_FIXTURES = HERE / "fixtures-cluster"
#: the smallest cluster cluster-fixtures.yaml runs on (its largest run has 7 ranks)
#: the notebooks whose inputs only the emulated cluster makes
CLUSTER_NOTEBOOKS = {
    "cluster_coded_reduce",
    "cluster_latency",
    "cluster_link_cut",
    "cluster_link_rates",
    "cluster_links",
    "cluster_ye_abbe",
}
CLUSTER_UP = ["--nodes", "7", "--rate", "100mbit", "--no-slurm"]
#: the rules that start MPI jobs: over the cluster's nodes instead of on this host
CLUSTER_MPI = ("train", "train_cut", "train_latency", "cluster_links", "cluster_link_rates")
#: files of a run folder no notebook opens (the final model, checkpoints, the MPI job's logs,
#: where each rank ran and the tree's per-node log, which only fits read)
SKIPPED = {
    "checkpoint.npz",
    "model.npy",
    "stdout.log",
    "stderr.log",
    "ranks.json",
    "nodes.jsonl",
}
#: notebooks that train the serial reference again, on the runs' prepared data: too large to
#: commit (1 MB for 2000 synthetic rows), the test prepares it with `gradcode data prepare`
NEED_DATA = {"failed_workers", "cluster_link_cut", "byzantine"}


def figure_table(config_file: Path) -> tuple[FigureTable, list[str]]:
    """The figures of a fixtures config and those its files suffice for."""
    config = yaml.safe_load(config_file.read_text())
    runs = collect_runs(config["train"]["runs"], config["train"]["experiments"], ROOT)
    specs = collect_specs(config["simulate"].get("specs", []), ROOT)
    registry = load_registry(
        ROOT / "workflow" / "figures.yaml", ROOT / "workflow" / "schemas" / "figures.schema.yaml"
    )
    table = FigureTable.build(registry, runs, specs, cluster="cluster" in config)
    figures = table.active(wanted_files(config, runs, specs))
    if "cluster" in config:  # the figures the other config's fixtures draw already
        figures = [f for f in figures if table.notebooks[f] in CLUSTER_NOTEBOOKS]
    return table, figures


def copy_input(scratch: Path, name: str, fixtures: Path) -> None:
    """``name`` (relative to the workflow folder) and what the notebooks read beside it."""
    source = scratch / name
    if source.name == "summary.json":
        for path in source.parent.iterdir():
            if path.is_file() and path.name not in SKIPPED:
                _copy(path, fixtures / path.relative_to(scratch))
        return
    if source.name == "index.json":  # a rate sweep's: its probes, in the folders beside it
        for path in source.parent.rglob("*"):
            if path.is_file():
                _copy(path, fixtures / path.relative_to(scratch))
        return
    _copy(source, fixtures / name)
    sidecar = source.with_name(source.name + ".json")
    if sidecar.is_file():
        _copy(sidecar, fixtures / (name + ".json"))


def _copy(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)


def prepared_data(table: FigureTable, figure: str, fixtures: Path) -> list[str]:
    """``DATASET/VARIANT`` of every run ``figure`` reads, if its notebook needs the data."""
    if table.notebooks[figure] not in NEED_DATA:
        return []
    runs = table.inputs[figure].get("runs", [])
    folders = set()
    for summary in [runs] if isinstance(runs, str) else runs:
        run = yaml.safe_load((fixtures / summary).with_name("run.yaml").read_text())
        folders.add(run["data"]["prepared"].removeprefix("results/data/"))
    return sorted(folders)


def relative(value: str) -> str:
    """A parameter's path as the test passes it: inside the repository, relative to it."""
    path = Path(value)
    return str(path.relative_to(ROOT)) if path.is_absolute() else value


def cluster_mpi() -> list[str]:
    """snakemake options that start the MPI rules' jobs over the emulated cluster's nodes."""
    return [
        "--set-resources",
        *(f"{rule}:mpi='gradcode cluster mpiexec'" for rule in CLUSTER_MPI),
    ]


def cluster_down() -> None:
    """Take the emulated cluster down and check that no node's namespace is left."""
    subprocess.run(["gradcode", "cluster", "down"], check=True)
    left = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True)
    nodes = [line.split()[0] for line in left.stdout.splitlines() if line.startswith("gc-")]
    if nodes:
        raise SystemExit(f"make_fixtures: gradcode cluster down left namespaces {nodes}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, help="workflow folder to use and keep")
    parser.add_argument(
        "--cluster",
        action="store_true",
        help="the cluster notebooks' fixtures, on an emulated cluster brought up and down (root)",
    )
    args = parser.parse_args(argv)
    config, fixtures = (CLUSTER_CONFIG, CLUSTER_FIXTURES) if args.cluster else (CONFIG, FIXTURES)
    table, figures = figure_table(config)
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
        # first: --set-resources takes every word up to the next option
        *(cluster_mpi() if args.cluster else []),
        "--profile",
        str(ROOT / "workflow" / "profiles" / "ci"),
        "--snakefile",
        str(ROOT / "Snakefile"),
        "--configfile",
        str(config),
        "--directory",
        str(scratch),
        *files,
    ]
    if args.cluster:
        subprocess.run(["gradcode", "cluster", "up", *CLUSTER_UP], check=True)
        try:
            subprocess.run(command, check=True, cwd=ROOT)
        finally:
            cluster_down()
    else:
        subprocess.run(command, check=True, cwd=ROOT)
    shutil.rmtree(fixtures, ignore_errors=True)
    for name in files:
        copy_input(scratch, name, fixtures)
    manifest = {
        figure: {
            "notebook": table.notebooks[figure],
            "prepare": prepared_data(table, figure, fixtures),
            "parameters": {
                name: relative(value) if isinstance(value, str) else [relative(v) for v in value]
                for name, value in table.inputs[figure].items()
            },
        }
        for figure in figures
    }
    (fixtures / "figures.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    size = sum(p.stat().st_size for p in fixtures.rglob("*") if p.is_file())
    print(f"make_fixtures: {len(figures)} figures, {size / 1000:.0f} kB in {fixtures}")
    if args.keep is None:
        shutil.rmtree(scratch)
    return 0


if __name__ == "__main__":
    sys.exit(main())
