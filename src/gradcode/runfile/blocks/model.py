"""The ``model:`` block: the model trained (``gradcode.models``) and its ``l2``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from gradcode.errors import UserError
from gradcode.extras import MissingExtra
from gradcode.models import Model
from gradcode.models import available as available_models
from gradcode.models import build as build_model
from gradcode.runfile.section import ConfigError, Section, number


@dataclass(frozen=True)
class ModelConfig:
    kind: str
    #: a number, or None with ``l2_per_row`` for "1/N"
    l2: float = 0.0
    l2_per_row: bool = False
    #: the model's constructor parameters (``model.params``)
    params: dict[str, Any] = field(default_factory=dict)

    def l2_value(self, rows: int) -> float:
        return 1.0 / rows if self.l2_per_row else self.l2

    def build(self) -> Model:
        """The model object (validated; a bad parameter is a one-line error)."""
        return build_model(self.kind, self.params)


def parse(top: Section) -> ModelConfig:
    """The ``model`` block of ``top``, its model built once to check its name and parameters."""
    model = top.section("model", ("kind", "l2", "params"))
    kind, params = model.string("kind"), model.mapping("params")
    l2 = model.raw("l2", 0.0)
    if l2 == "1/N":
        config = ModelConfig(kind, 0.0, l2_per_row=True, params=params)
    elif isinstance(l2, str):
        raise ConfigError(f"model.l2: must be a number >= 0 or the string 1/N (got {l2!r})")
    else:
        config = ModelConfig(kind, number("model.l2", l2), params=params)
    try:  # the model's name and parameters, checked here where the key is known
        config.build()
    except UserError as error:
        known = kind in available_models() and not isinstance(error, MissingExtra)
        raise ConfigError(f"{'model.params' if known else 'model.kind'}: {error}") from None
    return config
