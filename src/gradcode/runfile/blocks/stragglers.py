"""The ``stragglers:`` block: the timing model whose delays are injected (by name and
parameters, or from a simulation spec) and the workers that never answer. The model's
parameters are checked when the run is planned (``gradcode.runfile.stragglers``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from gradcode.runfile.section import ConfigError, Section
from gradcode.yamlfile import read_yaml


@dataclass(frozen=True)
class StragglerConfig:
    model: str = "none"
    params: dict[str, Any] = field(default_factory=dict)
    time_unit: float = 1.0
    persistent: tuple[int, ...] = ()
    #: the simulation spec the model and parameters came from (``stragglers.spec``)
    spec: str | None = None


def parse(top: Section) -> StragglerConfig:
    """The ``stragglers`` block of ``top`` (none: no delays injected)."""
    section = top.section("stragglers", ("model", "params", "time_unit", "persistent", "spec"))
    if section.has("spec"):
        spec = section.string("spec")
        if section.has("model") or section.has("params"):
            raise ConfigError(
                f"{section.key('spec')}: gives the model and its parameters; drop "
                f"{section.key('model')} and {section.key('params')}"
            )
        model, params = _spec_model(spec, section.key("spec"))
        return StragglerConfig(
            model=model,
            params=params,
            time_unit=section.number("time_unit", 1.0, positive=True),
            persistent=section.workers("persistent"),
            spec=spec,
        )
    return StragglerConfig(
        model=section.string("model", "none"),
        params=section.mapping("params"),
        time_unit=section.number("time_unit", 1.0, positive=True),
        persistent=section.workers("persistent"),
    )


def _spec_model(path: str, key: str) -> tuple[str, dict[str, Any]]:
    """The model and parameters of simulation spec ``path``, without ``overhead``: a fitted
    spec's measure of what the runtime itself costs, which a run has of its own."""
    data = read_yaml(path, ConfigError)
    if not isinstance(data, Mapping) or not isinstance(data.get("model"), str):
        raise ConfigError(f"{key}: {path} is not a simulation spec (no model)")
    params = data.get("parameters")
    if not isinstance(params, Mapping):
        raise ConfigError(f"{key}: {path} has no parameters mapping")
    kept = {k: v for k, v in params.items() if k != "overhead"}
    # here, not at the top: the timing models cost every MPI rank's start-up, and only a run
    # file naming a simulation spec needs them while it is read
    from gradcode.timing import model_from_spec

    try:  # here, where the file is known: a bad rate (or any value) names it
        model_from_spec(data["model"], kept)
    except ValueError as error:
        raise ConfigError(f"{key}: {path}: {' '.join(str(error).split())}") from None
    return data["model"], kept
