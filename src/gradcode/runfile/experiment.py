"""Experiments: a set of training runs that share most of their settings (one paper figure).

An experiment file lists runs as overrides of a common ``base``, so that a figure comparing
twelve configurations is one short file whose differences are visible at a glance::

    name: ye-abbe-fig3                # [file stem] also the folder of its runs' outputs
    description: str                  # what the figure shows and the setting
    base: {<run keys>}                # every key of a run file (docs/guide/run-file.md)
    runs:
      <run name>: {<run keys>}        # merged over ``base``: mappings key by key, the rest
                                      # replaced; the run's ``name`` is ``<experiment>/<run>``
    # optional: the paper's numbers the figure is compared with, free-form
    paper: {key: value}
    # optional: every run once per value of one run key, named <run>-<value>
    sweep:
      key: network.links.latency      # a run key, dotted through mappings
      values: [0ms, 1ms]              # file-name safe once written with str()

Every merged run is validated like a run file (``parse_config`` and ``build_plan``: scheme
parameters against the straggler model and world size), so a bad key names the experiment
file, the run and the key. Run names must be file-name safe.
"""

from __future__ import annotations

import copy
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gradcode.runfile.config import ConfigError, RunConfig, parse_config
from gradcode.runfile.plan import build_plan
from gradcode.yamlfile import read_yaml

TOP_KEYS = ("name", "description", "base", "runs", "paper", "sweep")
_SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass(frozen=True)
class Experiment:
    """A validated experiment: its runs as plain run-file mappings (in file order)."""

    name: str
    description: str
    runs: dict[str, dict[str, Any]]
    paper: dict[str, Any]
    #: run name -> MPI ranks it needs (its plan's world size, found while validating)
    world_sizes: dict[str, int]

    def config(self, run: str) -> RunConfig:
        return parse_config(self.runs[run], default_name=run)


def merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """``override`` over ``base``: nested mappings merged key by key, other values replaced."""
    merged = copy.deepcopy(dict(base))
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def load_experiment(path: str | os.PathLike[str]) -> Experiment:
    """Read and validate the experiment at ``path``; ``ConfigError`` naming file and key."""
    path = Path(path)
    raw = read_yaml(path, ConfigError)
    try:
        return parse_experiment(raw, default_name=path.stem)
    except ConfigError as error:
        raise ConfigError(f"{path}: {error}") from None


def parse_experiment(raw: Any, *, default_name: str) -> Experiment:
    if not isinstance(raw, Mapping):
        raise ConfigError("must be a mapping with base and runs")
    unknown = [key for key in raw if key not in TOP_KEYS]
    if unknown:
        raise ConfigError(f"{unknown[0]}: unknown key (allowed: {', '.join(TOP_KEYS)})")
    name = raw.get("name", default_name)
    if not isinstance(name, str) or not _SAFE.match(name):
        raise ConfigError(f"name: must be letters, digits, '.', '_' or '-' (got {name!r})")
    description = raw.get("description", "")
    if not isinstance(description, str):
        raise ConfigError("description: must be a string")
    base = raw.get("base", {})
    if not isinstance(base, Mapping):
        raise ConfigError("base: must be a mapping of run keys")
    if "name" in base or "output" in base:
        raise ConfigError("base: may not set name or output (each run gets its own)")
    entries = raw.get("runs")
    if not isinstance(entries, Mapping) or not entries:
        raise ConfigError("runs: must be a non-empty mapping of run name -> overrides")
    paper = raw.get("paper", {})
    if not isinstance(paper, Mapping):
        raise ConfigError("paper: must be a mapping")
    runs: dict[str, dict[str, Any]] = {}
    world_sizes: dict[str, int] = {}
    for run, override in _swept(entries, raw.get("sweep")).items():
        if not isinstance(run, str) or not _SAFE.match(run):
            raise ConfigError(f"runs: run name {run!r} must be file-name safe")
        if override is None:
            override = {}
        if not isinstance(override, Mapping):
            raise ConfigError(f"runs.{run}: must be a mapping of run keys")
        if "name" in override or "output" in override:
            raise ConfigError(f"runs.{run}: may not set name or output")
        merged = merge(base, override)
        merged["name"] = f"{name}/{run}"
        try:
            world_sizes[run] = build_plan(parse_config(merged, default_name=run)).world_size
        except ConfigError as error:
            raise ConfigError(f"runs.{run}: {error}") from None
        runs[run] = merged
    return Experiment(name, description, runs, dict(paper), world_sizes)


def _swept(entries: Mapping[str, Any], sweep: Any) -> dict[str, Any]:
    """``entries`` (run name -> overrides), each once per value of ``sweep`` (``<run>-<value>``,
    the value set at its dotted key over the run's own overrides), or as they are without
    one."""
    if sweep is None:
        return dict(entries)
    if not isinstance(sweep, Mapping) or set(sweep) != {"key", "values"}:
        raise ConfigError("sweep: must be a mapping with key (a dotted run key) and values")
    key, values = sweep["key"], sweep["values"]
    if not isinstance(key, str) or not all(_SAFE.match(part) for part in key.split(".")):
        raise ConfigError(f"sweep.key: must be a dotted run key like a.b (got {key!r})")
    if not isinstance(values, list) or not values:
        raise ConfigError("sweep.values: must be a non-empty list")
    texts = [str(value) for value in values]
    if len(set(texts)) != len(texts):
        raise ConfigError("sweep.values: a value is given twice")
    swept: dict[str, Any] = {}
    for run, override in entries.items():
        if not isinstance(override, Mapping | None):
            raise ConfigError(f"runs.{run}: must be a mapping of run keys")
        for value, text in zip(values, texts, strict=True):
            name = f"{run}-{text}"
            if not _SAFE.match(name):
                raise ConfigError(f"sweep.values: {text!r} makes the run name {name!r} unsafe")
            setting: Any = value
            for part in reversed(key.split(".")):
                setting = {part: setting}
            swept[name] = merge(override or {}, setting)
    return swept
