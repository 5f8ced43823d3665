"""The ``aggregator:`` block: a robust aggregator (``gradcode.aggregators``) in place of
decoding the sum, and what an iteration below its tolerance does."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from gradcode.errors import UserError
from gradcode.runfile.section import ConfigError, Section
from gradcode.runfile.words import BELOW_TOLERANCE_POLICIES

if TYPE_CHECKING:
    from gradcode.aggregators import Aggregator


@dataclass(frozen=True)
class AggregatorConfig:
    """The ``aggregator:`` block: a robust aggregator (``gradcode.aggregators``) the master
    applies to the code's per-group values in place of decoding their sum."""

    name: str
    params: dict[str, Any] = field(default_factory=dict)
    #: an iteration below the aggregator's tolerance stops the run or goes on, logged
    #: (``BELOW_TOLERANCE_POLICIES``, ``gradcode.train.tolerance``)
    below_tolerance: str = "stop"

    def build(self) -> Aggregator:
        """The aggregator object (validated; a bad parameter is a one-line error)."""
        # here, not at the top: the aggregators cost every MPI rank's start-up, and only a run
        # with an aggregator builds one
        from gradcode.aggregators import build as build_aggregator

        return build_aggregator(self.name, self.params)


def fingerprint(value: Any) -> Any:
    """The ``aggregator`` block as it enters the fingerprint: without ``below_tolerance``
    (like ``adversaries.caught``, it decides whether a run goes on, not what an iteration
    computes; blocks written before it existed keep their fingerprint)."""
    if not isinstance(value, dict):
        return value
    return {key: item for key, item in value.items() if key != "below_tolerance"}


def parse(top: Section) -> AggregatorConfig | None:
    """The ``aggregator`` block of ``top`` (None: the code decodes), its aggregator built once
    to check its name and parameters."""
    if not top.has("aggregator"):
        return None
    section = top.section("aggregator", ("name", "params", "below_tolerance"))
    name = section.string("name")
    config = AggregatorConfig(
        name=name,
        params=section.mapping("params"),
        below_tolerance=section.string("below_tolerance", "stop", choices=BELOW_TOLERANCE_POLICIES),
    )
    try:  # the aggregator's name and parameters, checked here where the key is known
        config.build()
    except UserError as error:
        from gradcode.aggregators import available as available_aggregators

        key = "aggregator.params" if name in available_aggregators() else "aggregator.name"
        raise ConfigError(f"{key}: {error}") from None
    return config
