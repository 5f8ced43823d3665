"""Timing models of the papers: when does the master hold the gradient?

- ``master_worker.MasterWorkerModel`` (``"master-worker"``): paper 000 Section 5 and paper 002
  Section IV, with per-worker or per-type heterogeneity (papers 003 and 004);
- ``single_port.SinglePortModel`` (``"single-port"``): paper 001 (Lee et al.'s computation model,
  single-port transfers of ``tc``), for master-worker codes, CodedReduce trees and
  Ring-AllReduce (the ``ring-allreduce`` code);
- ``links.LinksModel`` (``"shared-links"``): deterministic rate-limited links (a cluster's
  ``tc tbf`` limits), fairly shared at each receiver, for the same three topologies; predicts
  message and completion times for given link parameters;
- ``exact``: closed-form expectations of order statistics, to test the Monte Carlo.

``TIMING_MODELS`` maps the built-in names used in simulation specs and run files to the classes;
``timing_models()`` adds the models of installed packages (entry-point group
``gradcode.timing_models``, see ``gradcode.plugins``). ``model_from_spec`` builds one from its
name and parameter mapping. See ``model`` for the interface.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from gradcode.errors import UnknownNameError
from gradcode.plugins import TIMING_MODELS_GROUP, LazyPlugins
from gradcode.timing.links import LinksModel
from gradcode.timing.master_worker import MasterWorkerModel
from gradcode.timing.model import Outcome, TimingModel
from gradcode.timing.single_port import SinglePortModel

TIMING_MODELS: dict[str, type[TimingModel]] = {
    MasterWorkerModel.name: MasterWorkerModel,
    SinglePortModel.name: SinglePortModel,
    LinksModel.name: LinksModel,
}


def model_problem(name: str, cls: object) -> str | None:
    """What keeps ``cls`` from serving as timing model ``name`` (``None``: nothing)."""
    if not (isinstance(cls, type) and issubclass(cls, TimingModel)):
        return f"{cls!r} is not a gradcode.timing.TimingModel subclass"
    declared = cls.name if "name" in dir(cls) else None  # a ClassVar annotation alone is no name
    if declared != name:
        return f"the class {cls.__name__} is named {declared!r}, not {name!r}"
    if inspect.isabstract(cls):
        return f"{cls.__name__} does not implement {', '.join(sorted(cls.__abstractmethods__))}"
    if not isinstance(getattr(cls, "parameters", None), Mapping):
        return f"{cls.__name__}.parameters must map each parameter name to its help"
    return None


#: timing models of installed packages (entry-point group ``gradcode.timing_models``)
PLUGINS = LazyPlugins(TIMING_MODELS_GROUP, lambda: TIMING_MODELS, model_problem)


def timing_models() -> dict[str, type[TimingModel]]:
    """Every timing model by name: the built-ins and those of installed packages."""
    plugins = {name: plugin.obj for name, plugin in PLUGINS.get().usable.items()}
    return {**TIMING_MODELS, **plugins}  # type: ignore[dict-item]


def model_class(name: str) -> type[TimingModel]:
    """The timing model ``name``; ``UnknownNameError`` (or ``PluginError``) otherwise."""
    models = timing_models()
    if name not in models:
        PLUGINS.require_usable(name)
        raise UnknownNameError("model", name, models)
    return models[name]


def model_from_spec(name: str, params: Mapping[str, Any]) -> TimingModel:
    """The model ``name`` with parameters ``params``; ``ValueError`` naming the bad key."""
    return model_class(name).from_params(params)


__all__ = [
    "TIMING_MODELS",
    "LinksModel",
    "MasterWorkerModel",
    "Outcome",
    "SinglePortModel",
    "TimingModel",
    "model_class",
    "model_from_spec",
    "timing_models",
]
