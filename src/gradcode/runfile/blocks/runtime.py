"""The ``runtime:`` block: polling, time-outs, the ways the model and the results travel,
time dilation, and how the workers get their data."""

from __future__ import annotations

from dataclasses import dataclass

from gradcode.dilation import check_factor
from gradcode.runfile.section import ConfigError, Section
from gradcode.runfile.words import COLLECTION_WAYS, DATA_DELIVERY, DISTRIBUTION_WAYS


@dataclass(frozen=True)
class RuntimeConfig:
    poll_interval: float = 0.0005
    iteration_timeout: float = 600.0
    distribution: str = "auto"
    collection: str = "auto"
    #: time dilation (``gradcode.dilation``): every wait K times longer, every time reported
    #: in virtual seconds; on the emulated cluster, its ``up --dilation``
    dilation: float = 1.0
    #: how a worker gets its partitions (``DATA_DELIVERY``): sent by rank 0, or loaded by the
    #: worker from the prepared data (a shared file system)
    data: str = "send"


def parse(top: Section) -> RuntimeConfig:
    """The ``runtime`` block of ``top``."""
    section = top.section(
        "runtime",
        ("poll_interval", "iteration_timeout", "distribution", "collection", "dilation", "data"),
    )
    try:
        dilation = check_factor(section.raw("dilation", 1.0), section.key("dilation"))
    except ValueError as error:
        raise ConfigError(str(error)) from None
    return RuntimeConfig(
        poll_interval=section.number("poll_interval", 0.0005, positive=True),
        iteration_timeout=section.number("iteration_timeout", 600.0, positive=True),
        distribution=section.string("distribution", "auto", choices=DISTRIBUTION_WAYS),
        collection=section.string("collection", "auto", choices=COLLECTION_WAYS),
        dilation=dilation,
        data=section.string("data", "send", choices=DATA_DELIVERY),
    )
