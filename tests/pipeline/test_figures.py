"""The figure registry is data checked by its schema, and no figure is dropped silently."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gradcode.pipeline.figures import (
    FigureTable,
    RegistryError,
    check_notebooks,
    load_registry,
    registered_figures,
    wanted_files,
)
from gradcode.pipeline.runs import collect_runs

ROOT = Path(__file__).resolve().parents[2]
REGISTRY = ROOT / "workflow" / "figures.yaml"
SCHEMA = ROOT / "workflow" / "schemas" / "figures.schema.yaml"
NOTEBOOKS = [p.stem for p in (ROOT / "workflow" / "notebooks").glob("*.py")]


def _table(config_name: str) -> tuple[FigureTable, set[str]]:
    config = yaml.safe_load((ROOT / "config" / config_name).read_text())
    train = config["train"]
    runs = collect_runs(train["runs"], train["experiments"], ROOT)
    return FigureTable.build(load_registry(REGISTRY, SCHEMA), runs), wanted_files(config, runs)


def test_every_notebook_has_a_figure_and_every_figure_a_notebook():
    check_notebooks(load_registry(REGISTRY, SCHEMA), NOTEBOOKS)
    with pytest.raises(RegistryError, match=r"no figure uses.*extra"):
        check_notebooks(load_registry(REGISTRY, SCHEMA), [*NOTEBOOKS, "extra"])
    with pytest.raises(RegistryError, match=r"do not exist.*stability"):
        check_notebooks(load_registry(REGISTRY, SCHEMA), [n for n in NOTEBOOKS if n != "stability"])


def test_every_notebook_has_one_documentation_page_and_every_figure_its_notebook():
    registry = load_registry(REGISTRY, SCHEMA)
    figures = registered_figures(registry)
    assert figures["stability"] == "stability" and figures["ye_abbe_fit"] == "timing_fit"
    assert figures["training"] == "training" and set(figures.values()) == set(NOTEBOOKS)
    pages = {path.stem for path in (ROOT / "docs" / "papers").glob("*.md")}
    assert set(registry["pages"].values()) <= pages
    del registry["pages"]["stability"]
    with pytest.raises(RegistryError, match=r"no documentation page for notebooks \['stability'\]"):
        check_notebooks(registry, NOTEBOOKS)
    registry["pages"] |= {"stability": "003-binary", "gone": "index"}
    with pytest.raises(RegistryError, match=r"pages names notebooks that do not exist: \['gone'\]"):
        check_notebooks(registry, NOTEBOOKS)


@pytest.mark.parametrize("config_name", ["config.yaml", "paper.yaml"])
def test_the_default_and_paper_configs_draw_every_registered_figure(config_name):
    table, wanted = _table(config_name)
    assert table.left_out(wanted) == {}
    registry = load_registry(REGISTRY, SCHEMA)
    assert set(registry["figures"]) | {registry["training"]} <= set(table.active(wanted))


def test_a_smaller_config_names_each_figure_it_leaves_out():
    table, wanted = _table("smoke.yaml")
    left = table.left_out(wanted)
    assert left["coded_reduce_theorems"] == "results/analysis/coded-reduce-loads.csv"
    assert set(left).isdisjoint(table.active(wanted))
    assert set(left) | set(table.active(wanted)) == set(table.inputs)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"figures": {"x": {"inputs": {}}}}, r"figures\.x\.inputs"),
        ({"figures": {"x": {"inputs": {"runs": "results/a.csv"}}}}, r"figures\.x\.inputs"),
        ({"figures": {"x": {"inputs": {"t": "/etc/passwd"}}}}, r"figures\.x\.inputs\.t"),
        ({"figure": {}}, r"\(top\)"),
        ({"experiments": {"e": [{"figure": "f"}]}}, r"experiments\.e\.0"),
    ],
)
def test_a_bad_registry_is_one_line_naming_the_key(tmp_path, change, message):
    registry = yaml.safe_load(REGISTRY.read_text()) | change
    path = tmp_path / "figures.yaml"
    path.write_text(yaml.safe_dump(registry))
    with pytest.raises(RegistryError, match=message):
        load_registry(path, SCHEMA)


def test_the_cluster_config_draws_its_figures_and_only_it_the_cluster_ones():
    config = yaml.safe_load((ROOT / "config" / "cluster.yaml").read_text())
    config |= {"simulate": {"presets": []}, "analyze": {"names": []}}  # the schema's defaults
    runs = collect_runs(config["train"]["runs"], config["train"]["experiments"], ROOT)
    registry = load_registry(REGISTRY, SCHEMA)
    table = FigureTable.build(registry, runs, cluster=True)
    wanted = wanted_files(config, runs)
    figures = {"cluster_links", "cluster_link_cut", "cluster_ye_abbe_n8", "cluster_ye_abbe_figs34"}
    assert figures <= set(table.active(wanted))
    plain, wanted_plain = _table("config.yaml")
    assert not set(registry["cluster"]) & set(plain.inputs)
    assert "results/cluster/links/links.json" not in wanted_plain


def test_the_paper_001_cluster_config_draws_a_figure_per_experiment():
    config = yaml.safe_load((ROOT / "config" / "cluster-coded-reduce.yaml").read_text())
    config |= {"simulate": {"presets": []}, "analyze": {"names": []}}  # the schema's defaults
    runs = collect_runs(config["train"]["runs"], config["train"]["experiments"], ROOT)
    table = FigureTable.build(load_registry(REGISTRY, SCHEMA), runs, cluster=False)
    active = set(table.active(wanted_files(config, runs)))
    figures = {f"cluster_coded_reduce_n{n}" for n in (14, 84)}
    assert figures <= active
    # every scheme of paper 001's comparison, both rings included, one rank a node
    for workers in (14, 84):
        ids = runs.experiments[f"cluster-coded-reduce-n{workers}"]
        assert {run.split("/")[1] for run in ids} == {"UMW", "GC", "RAR", "RAR-mpi", "SGD", "CR"}
        assert {runs.ranks[run] for run in ids} == {workers + 1}


def test_the_rate_sweep_figure_is_drawn_only_where_the_config_has_rates():
    config = yaml.safe_load((ROOT / "config" / "cluster.yaml").read_text())
    config |= {"simulate": {"presets": []}, "analyze": {"names": []}}  # the schema's defaults
    assert config["cluster"]["links"]["rates"]
    runs = collect_runs(config["train"]["runs"], config["train"]["experiments"], ROOT)
    table = FigureTable.build(load_registry(REGISTRY, SCHEMA), runs, cluster=True)
    assert "cluster_link_rates" in table.active(wanted_files(config, runs))
    del config["cluster"]["links"]["rates"]
    wanted = wanted_files(config, runs)
    assert "cluster_links" in table.active(wanted)
    assert table.left_out(wanted)["cluster_link_rates"] == "results/cluster/link-rates/index.json"
