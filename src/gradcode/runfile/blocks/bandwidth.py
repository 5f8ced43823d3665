"""The ``bandwidth:`` block: a single-port receiver emulated on one host
(``gradcode.runfile.bandwidth`` charges the messages)."""

from __future__ import annotations

from dataclasses import dataclass

from gradcode.runfile.section import ConfigError, Section


@dataclass(frozen=True)
class BandwidthConfig:
    """A single-port receiver: ``bytes_per_second``, or ``vector_seconds`` for one full-length
    vector (``8 l`` bytes), plus ``latency`` per message. Ports charge a message's payload;
    the runtime's small header rides free."""

    bytes_per_second: float | None = None
    vector_seconds: float | None = None
    latency: float = 0.0

    def rate(self, features: int) -> float:
        """Bytes per second for a gradient of ``features`` floats."""
        if self.bytes_per_second is not None:
            return self.bytes_per_second
        assert self.vector_seconds is not None
        return features * 8 / self.vector_seconds


def parse(top: Section) -> BandwidthConfig | None:
    """The ``bandwidth`` block of ``top`` (None: no emulated port)."""
    if not top.has("bandwidth"):
        return None
    section = top.section("bandwidth", ("bytes_per_second", "vector_seconds", "latency"))
    if section.has("bytes_per_second") == section.has("vector_seconds"):
        raise ConfigError("bandwidth: give exactly one of bytes_per_second and vector_seconds")
    return BandwidthConfig(
        bytes_per_second=section.number("bytes_per_second", None, positive=True),
        vector_seconds=section.number("vector_seconds", None, positive=True),
        latency=section.number("latency", 0.0),
    )
