"""Bandwidth emulation: a receiver that takes one message at a time.

With ``bandwidth`` in the run YAML (or the ``single-port`` straggler model, whose ``tc`` sets
it) every receiving node (the master, a tree parent, a ring worker) owns a single port: a
message that arrived (its bytes are in memory) counts as received only ``latency + bytes /
rate`` after the port became free, and the port serves messages in arrival order. So ``q``
messages of ``b`` bytes arriving together take ``q b / rate``, which is what makes the
``1 / m`` shorter messages of ``m > 1`` codes and the spread-out traffic of a tree pay off on
one machine, where real transfers are nearly free.

Messages recognised as stale (by tag) are dropped on arrival and do not occupy the port (their
bytes would have been cancelled); messages still queued when their iteration ends are dropped
with it.
"""

from __future__ import annotations

from dataclasses import dataclass

from gradcode.runfile.config import BandwidthConfig


@dataclass
class SinglePort:
    """FIFO service of ``bytes / rate`` per message for a gradient of ``features`` floats;
    ``None`` config: instant."""

    config: BandwidthConfig | None
    features: int
    free_at: float = 0.0

    def __post_init__(self) -> None:
        self.rate = self.config.rate(self.features) if self.config is not None else 0.0

    def accept_time(self, arrival: float, nbytes: int) -> float:
        """When a message of ``nbytes`` that arrived at ``arrival`` is received; advances the
        port (call in arrival order)."""
        if self.config is None:
            return arrival
        start = max(arrival + self.config.latency, self.free_at)
        self.free_at = start + nbytes / self.rate
        return self.free_at

    def reset(self, now: float) -> None:
        """Forget queued work (its messages were dropped): the port is free from ``now``."""
        self.free_at = min(self.free_at, now)
