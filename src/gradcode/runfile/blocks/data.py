"""The ``data:`` block: a prepared directory, or a data set prepared on the fly."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from gradcode.runfile.section import ConfigError, Section


@dataclass(frozen=True)
class DataConfig:
    prepared: str | None = None
    dataset: str | None = None
    variant: str | None = None
    seed: int | None = None
    options: dict[str, Any] = field(default_factory=dict)
    raw: tuple[str, ...] = ()
    cache: str | None = None
    trim: bool = True
    partition_seed: int | None = None


def parse(top: Section, resolve: Callable[[str | None], str | None]) -> DataConfig:
    """The ``data`` block of ``top``, its paths passed through ``resolve``."""
    if not top.has("data"):
        raise ConfigError("data: missing (give data.prepared or data.dataset)")
    keys = ("prepared", "dataset", "variant", "seed", "options", "raw", "cache", "trim")
    data = top.section("data", (*keys, "partition_seed"))
    if data.has("prepared") == data.has("dataset"):
        raise ConfigError("data: give exactly one of data.prepared and data.dataset")
    if data.has("prepared"):
        extra = [k for k in ("variant", "seed", "options", "raw", "cache") if data.has(k)]
        if extra:
            raise ConfigError(f"data.{extra[0]}: only with data.dataset (data.prepared is given)")
    raw = data.raw("raw", [])
    raws = [raw] if isinstance(raw, str) else raw
    if not isinstance(raws, list) or not all(isinstance(r, str) and r for r in raws):
        raise ConfigError("data.raw: must be a path or a list of paths")
    partition_seed = data.integer("partition_seed", None)
    return DataConfig(
        prepared=resolve(data.string("prepared", None)),
        dataset=data.string("dataset", None),
        variant=data.string("variant", None),
        seed=data.integer("seed", None),
        options=data.mapping("options"),
        raw=tuple(resolve(r) for r in raws),
        cache=resolve(data.string("cache", None)),
        trim=data.boolean("trim", True),
        partition_seed=partition_seed,
    )
