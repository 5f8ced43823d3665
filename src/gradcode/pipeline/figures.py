"""The figure registry and the figures a workflow config produces.

The registry is data (``workflow/figures.yaml``, checked against its JSON schema): every
figure's notebook and the files it reads, the figure drawn from the run files, the one drawn
from the simulation specs' tables, the figures of each experiment, those of a config's
``cluster`` section (the emulated cluster; only for configs that have one), and the
documentation page of each notebook's figures and rows (``pages``). A file is named
as a path of ``gradcode.pipeline.paths`` (``paths.NAME``, or ``paths.NAME(argument, ...)`` for
a template, its fields filled in order: ``resolve_path``). ``FigureTable.build``
adds the runs a config trains; ``active`` lists the figures whose inputs the config asks for
and ``left_out`` each other one with the input it lacks, so that no figure disappears without
a word.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema

from gradcode.pipeline import paths
from gradcode.pipeline.fit_studies import collect_studies
from gradcode.pipeline.runs import TrainingRuns
from gradcode.pipeline.specs import spec_table
from gradcode.yamlfile import read_yaml


class RegistryError(ValueError):
    """The figure registry does not match its schema or its notebooks."""


def load_registry(path: str | Path, schema: str | Path) -> dict[str, Any]:
    """The registry at ``path``, validated by ``schema``, its inputs resolved to files;
    ``RegistryError`` naming the key."""
    registry = read_yaml(path, RegistryError)
    try:
        jsonschema.validate(registry, read_yaml(schema, RegistryError))
    except jsonschema.ValidationError as error:
        where = ".".join(str(part) for part in error.absolute_path) or "(top)"
        raise RegistryError(f"{Path(path).name}: {where}: {error.message}") from None
    for section in ("figures", "cluster"):
        for figure, entry in registry.get(section, {}).items():
            _resolve_inputs(entry, f"{Path(path).name}: {section}.{figure}.inputs")
    for experiment, entries in registry["experiments"].items():
        for index, entry in enumerate(entries):
            _resolve_inputs(entry, f"{Path(path).name}: experiments.{experiment}.{index}.inputs")
    return registry


#: ``paths.NAME`` or ``paths.NAME(argument, ...)`` (the schema checks the shape first)
_REFERENCE = re.compile(r"paths\.(?P<name>[A-Z][A-Z0-9_]*)(?:\((?P<arguments>[^()]*)\))?")


def _resolve_inputs(entry: dict[str, Any], where: str) -> None:
    """``entry["inputs"]``'s references to paths, replaced by the files they name."""
    inputs = entry.get("inputs", {})
    for parameter, reference in inputs.items():
        inputs[parameter] = resolve_path(reference, f"{where}.{parameter}")


def resolve_path(reference: str, where: str) -> str:
    """The file ``reference`` (``paths.NAME`` or ``paths.NAME(argument, ...)``) names: a path
    of ``gradcode.pipeline.paths``, a template's fields filled with the arguments in order;
    ``RegistryError`` naming ``where`` for an unknown name or the wrong number of arguments."""
    found = _REFERENCE.fullmatch(reference)
    template = getattr(paths, found["name"], None) if found else None
    if not isinstance(template, str) or not template.startswith(f"{paths.RESULTS}/"):
        known = ", ".join(sorted(_path_names()))
        raise RegistryError(
            f"{where}: {reference!r} is not paths.NAME[(ARGUMENTS)] of a path ({known})"
        )
    names = paths.fields(template)
    arguments = [a.strip() for a in found["arguments"].split(",")] if found["arguments"] else []
    if len(arguments) != len(names) or not all(arguments):
        wanted = f"({', '.join(names)})" if names else "no arguments"
        raise RegistryError(f"{where}: {reference!r}: paths.{found['name']} takes {wanted}")
    return paths.fill(template, *arguments)


def _path_names() -> list[str]:
    return [
        name
        for name, value in vars(paths).items()
        if name.isupper() and isinstance(value, str) and value.startswith(f"{paths.RESULTS}/")
    ]


def summaries(run_ids: Iterable[str]) -> list[str]:
    return [paths.RUN_SUMMARY.format(run=run) for run in run_ids]


@dataclass
class FigureTable:
    """``inputs``: figure -> notebook parameter -> file (or files); ``notebooks``: figure ->
    notebook name."""

    inputs: dict[str, dict[str, str | list[str]]] = field(default_factory=dict)
    notebooks: dict[str, str] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        registry: Mapping[str, Any],
        runs: TrainingRuns,
        specs: Iterable[str] = (),
        cluster: bool = False,
    ) -> FigureTable:
        """Every figure of ``registry``, the one of the run files, each experiment's, the
        one drawn from the simulation specs' tables (spec ids ``specs``) when there are any,
        and with ``cluster`` (the config has a ``cluster`` section) the registry's cluster
        figures."""
        table = cls()
        for figure, entry in registry["figures"].items():
            table._add(figure, figure, dict(entry["inputs"]))
        if cluster:
            for figure, entry in registry.get("cluster", {}).items():
                table._add(figure, figure, dict(entry["inputs"]))
        tables = [spec_table(spec) for spec in sorted(specs)]
        if tables:
            simulations = registry["simulations"]
            table._add(simulations, simulations, {"tables": tables})
        plain = runs.plain_runs()
        if plain:
            table._add(registry["training"], registry["training"], {"runs": summaries(plain)})
        for experiment, run_ids in runs.experiments.items():
            default = experiment.replace("-", "_")
            entries = registry["experiments"].get(
                experiment, [{"figure": default, "notebook": default}]
            )
            for entry in entries:
                inputs = {
                    "runs": summaries(run_ids),
                    "experiment": runs.experiment_files[experiment],
                    **entry.get("inputs", {}),
                }
                table._add(entry["figure"], entry["notebook"], inputs)
        return table

    def _add(self, figure: str, notebook: str, inputs: dict[str, Any]) -> None:
        if figure in self.inputs:
            raise RegistryError(f"figure {figure!r} is registered twice")
        self.inputs[figure] = inputs
        self.notebooks[figure] = notebook

    def missing(self, figure: str, wanted: set[str]) -> list[str]:
        """The inputs of ``figure`` that the config does not produce."""
        files: list[str] = []
        for value in self.inputs[figure].values():
            files += [value] if isinstance(value, str) else list(value)
        return [f for f in files if f not in wanted]

    def active(self, wanted: set[str]) -> list[str]:
        """Figures every input of which is in ``wanted`` (the files the config produces)."""
        return sorted(f for f in self.inputs if not self.missing(f, wanted))

    def left_out(self, wanted: set[str]) -> dict[str, str]:
        """Every other registered figure -> the first input it lacks."""
        return {
            f: self.missing(f, wanted)[0] for f in sorted(self.inputs) if self.missing(f, wanted)
        }


def wanted_files(
    config: Mapping[str, Any], runs: TrainingRuns, specs: Iterable[str] = ()
) -> set[str]:
    """The files a workflow config produces that figures may read."""
    wanted = {paths.SIMULATION.format(preset=p) for p in config["simulate"]["presets"]}
    wanted |= {spec_table(spec) for spec in specs}
    wanted |= {paths.ANALYSIS.format(analysis=a) for a in config["analyze"]["names"]}
    wanted |= {paths.STABILITY}
    wanted |= set(summaries(runs.runs))
    wanted |= set(runs.experiment_files.values())
    studies = collect_studies(config.get("fit", {}), runs)
    wanted |= {path for study in studies.values() for path in study.outputs()}
    links = config.get("cluster", {}).get("links")
    if links:
        wanted.add(paths.CLUSTER_LINKS)
        if links.get("rates"):
            wanted.add(paths.CLUSTER_LINK_RATES)
    return wanted


def registered_figures(registry: Mapping[str, Any]) -> dict[str, str]:
    """Every figure the registry names -> its notebook, in the registry's order (a config's
    experiment the registry does not list draws a figure named as its notebook: not here)."""
    found = {figure: figure for figure in registry["figures"]}
    found |= {figure: figure for figure in registry.get("cluster", {})}
    found |= {registry["training"]: registry["training"]}
    found |= {registry["simulations"]: registry["simulations"]}
    for entries in registry["experiments"].values():
        found |= {entry["figure"]: entry["notebook"] for entry in entries}
    return found


def check_notebooks(registry: Mapping[str, Any], notebooks: Iterable[str]) -> None:
    """``RegistryError`` unless the registry's notebooks and the notebook files match, and
    each notebook has a documentation page (``pages``: where its figures and rows are shown,
    so that no notebook goes undocumented)."""
    named = set(registered_figures(registry).values())
    present = set(notebooks)
    if named - present:
        raise RegistryError(
            f"figures.yaml names notebooks that do not exist: {sorted(named - present)}"
        )
    if present - named:
        raise RegistryError(
            f"notebooks no figure uses (add them to figures.yaml): {sorted(present - named)}"
        )
    unplaced = present - set(registry["pages"])
    if unplaced:
        raise RegistryError(
            f"figures.yaml: pages has no documentation page for notebooks {sorted(unplaced)}"
        )
    if set(registry["pages"]) - present:
        raise RegistryError(
            "figures.yaml: pages names notebooks that do not exist: "
            f"{sorted(set(registry['pages']) - present)}"
        )
