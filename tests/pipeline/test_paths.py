"""The figure registry names its files as paths of ``gradcode.pipeline.paths``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gradcode.pipeline import paths
from gradcode.pipeline.figures import RegistryError, resolve_path


def test_a_reference_names_a_path_or_fills_a_templates_fields_in_order():
    assert resolve_path("paths.CLUSTER_LINKS", "here") == paths.CLUSTER_LINKS
    assert resolve_path("paths.SIMULATION(ye-abbe-table3)", "here") == (
        "results/sim/ye-abbe-table3.csv"
    )
    assert resolve_path("paths.DATA(amazon, tandon)", "here") == "results/data/amazon/tandon"


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        ("paths.NOWHERE", r"^here: 'paths.NOWHERE' is not paths.NAME\[\(ARGUMENTS\)\].*STABILITY"),
        ("paths.META_FILE", r"is not paths.NAME"),
        ("results/sim/x.csv", r"is not paths.NAME"),
        ("paths.SIMULATION", r"paths.SIMULATION takes \(preset\)$"),
        ("paths.SIMULATION(a, b)", r"paths.SIMULATION takes \(preset\)$"),
        ("paths.STABILITY(a)", r"paths.STABILITY takes no arguments$"),
        ("paths.DATA(a, )", r"paths.DATA takes \(dataset, variant\)$"),
    ],
)
def test_a_bad_reference_is_one_line_naming_the_key(reference, message):
    with pytest.raises(RegistryError, match=message):
        resolve_path(reference, "here")


def test_templates_are_snakemake_wildcard_patterns_and_format_strings():
    """One string serves the rules (wildcards) and Python (``str.format``)."""
    assert paths.RUN_SUMMARY.format(run="e/r") == "results/train/e/r/summary.json"
    assert paths.RECOMMENDED_RUN_FILE == "results/train/{study}/recommended/run.yaml"
    assert paths.sidecar(paths.ANALYSIS) == "results/analysis/{analysis}.csv.json"
    assert paths.log("train/{run}") == "results/logs/train/{run}.log"


def test_fill_fills_a_templates_fields_in_order_and_refuses_a_wrong_count():
    assert paths.fill(paths.FIGURE, "training") == "results/figures/training.png"
    assert paths.fill(paths.DATA, "amazon", "tandon") == "results/data/amazon/tandon"
    with pytest.raises(ValueError, match=r"has 2 fields \(dataset, variant\), not 1"):
        paths.fill(paths.DATA, "amazon")


NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "workflow" / "notebooks").glob("*.py"))


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[path.stem for path in NOTEBOOKS])
def test_a_notebooks_defaults_are_paths_in_a_cell_papermill_reads(notebook):
    """papermill reads a parameters cell line by line, one ``=`` a line (else it warns of
    'unknown parameters' when the workflow passes them); the defaults come from ``paths``."""
    from papermill.translators import PythonTranslator

    cell = notebook.read_text().split('# %% tags=["parameters"]\n')[1].split("# %%")[0]
    assigned = re.findall(r"^(\w+) = ", cell, re.MULTILINE)
    assert [p.name for p in PythonTranslator.inspect({"source": cell})] == assigned
    defaults: dict[str, object] = {"paths": paths}
    exec(cell, defaults)
    assert {"png", "comparison"} <= set(assigned)
    assert defaults["png"] == paths.fill(paths.FIGURE, Path(defaults["png"]).stem)
