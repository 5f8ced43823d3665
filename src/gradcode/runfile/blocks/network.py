"""The ``network:`` block: real links carry the messages, and (``links``) what they were
brought up with, for the ``shared-links`` prediction and the checks."""

from __future__ import annotations

from dataclasses import dataclass

from gradcode.runfile.section import ConfigError, Section


@dataclass(frozen=True)
class LinksConfig:
    """The links a cluster was brought up with: ``rate`` bytes per second for every node's
    link (each direction), ``master_rate`` for the master's node, ``latency`` seconds one way
    per message. ``rate_text``/``master_rate_text``: their canonical spelling (``100mbit``,
    ``gradcode.rate.Rate``)."""

    rate: float
    master_rate: float
    latency: float = 0.0
    rate_text: str = ""
    master_rate_text: str = ""
    #: ``gradcode.duration``'s spelling of ``latency`` (``1ms``)
    latency_text: str = "0ms"


@dataclass(frozen=True)
class NetworkConfig:
    """Real links: nothing of the communication is emulated; ``links``: their parameters
    (``None``: not stated)."""

    links: LinksConfig | None = None


def parse(top: Section, origin: str | None) -> NetworkConfig | None:
    """The ``network`` block of ``top`` (None: no real links); a bad rate or latency names
    the file ``origin``."""
    if not top.has("network"):
        return None
    if top.has("bandwidth"):
        raise ConfigError(
            "network: and bandwidth: exclude each other (network: real links carry the "
            "messages; bandwidth: emulates them on one host); give one"
        )
    section = top.section("network", ("links",))
    if not section.has("links"):
        return NetworkConfig()
    links = section.section("links", ("rate", "master_rate", "latency"))
    # here, not at the top: the parsers cost every MPI rank's start-up, and only a run file
    # stating its links needs them
    from gradcode.duration import Duration, DurationError
    from gradcode.rate import Rate, RateError

    where = f"{origin}: " if origin else ""
    try:
        rate = Rate.parse(links.raw("rate"), f"{where}network.links.rate")
        master = Rate.parse(links.raw("master_rate", rate), f"{where}network.links.master_rate")
        latency = Duration.parse(links.raw("latency", 0), f"{where}network.links.latency")
    except (RateError, DurationError) as error:
        raise ConfigError(str(error)) from None
    return NetworkConfig(
        LinksConfig(
            rate=rate.bytes_per_second,
            master_rate=master.bytes_per_second,
            latency=latency.seconds,
            rate_text=str(rate),
            master_rate_text=str(master),
            latency_text=str(latency),
        )
    )
