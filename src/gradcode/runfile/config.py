"""The run YAML, parsed strictly into a ``RunConfig``: unknown keys rejected, every error one
line naming the key (``ConfigError``), after which the runtime trusts it. Each block of the
file has its own module in ``gradcode.runfile.blocks`` (its dataclass and its parser), read
through ``gradcode.runfile.section``; this module assembles them and computes the run's
fingerprint. Every key, its type, default and meaning is in the guide's run-file reference
(``docs/guide/run-file.md``); the scheme, its parameters, the straggler model and the world
size are checked against each other in ``gradcode.runfile.plan``.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from gradcode.runfile.blocks import (
    adversaries,
    aggregator,
    bandwidth,
    checkpoint,
    data,
    faults,
    log,
    model,
    network,
    optimizer,
    runtime,
    scheme,
    stragglers,
)
from gradcode.runfile.blocks.adversaries import AdversaryConfig
from gradcode.runfile.blocks.aggregator import AggregatorConfig
from gradcode.runfile.blocks.bandwidth import BandwidthConfig
from gradcode.runfile.blocks.checkpoint import CheckpointConfig
from gradcode.runfile.blocks.data import DataConfig
from gradcode.runfile.blocks.faults import FaultEvent, FaultsConfig, NodeLoss
from gradcode.runfile.blocks.log import LogConfig
from gradcode.runfile.blocks.model import ModelConfig
from gradcode.runfile.blocks.network import LinksConfig, NetworkConfig
from gradcode.runfile.blocks.optimizer import OptimizerConfig
from gradcode.runfile.blocks.runtime import RuntimeConfig
from gradcode.runfile.blocks.scheme import SchemeConfig
from gradcode.runfile.blocks.stragglers import StragglerConfig
from gradcode.runfile.section import ConfigError, Section
from gradcode.runfile.words import (
    BELOW_TOLERANCE_POLICIES,
    CAUGHT_POLICIES,
    COLLECTION_WAYS,
    DISTRIBUTION_WAYS,
    NODE_LOSS,
)
from gradcode.yamlfile import read_yaml

# the names every importer of this module has used since the blocks lived here
__all__ = [
    "BELOW_TOLERANCE_POLICIES",
    "CAUGHT_POLICIES",
    "COLLECTION_WAYS",
    "DISTRIBUTION_WAYS",
    "NODE_LOSS",
    "TOP_KEYS",
    "AdversaryConfig",
    "AggregatorConfig",
    "BandwidthConfig",
    "CheckpointConfig",
    "ConfigError",
    "DataConfig",
    "FaultEvent",
    "FaultsConfig",
    "LinksConfig",
    "LogConfig",
    "ModelConfig",
    "NetworkConfig",
    "NodeLoss",
    "OptimizerConfig",
    "RunConfig",
    "RuntimeConfig",
    "SchemeConfig",
    "StragglerConfig",
    "load_config",
    "parse_config",
]


@dataclass(frozen=True)
class RunConfig:
    name: str
    output: str | None
    seed: int
    iterations: int
    data: DataConfig
    model: ModelConfig
    scheme: SchemeConfig
    optimizer: OptimizerConfig
    stragglers: StragglerConfig
    adversaries: AdversaryConfig
    bandwidth: BandwidthConfig | None
    checkpoint: CheckpointConfig
    log: LogConfig
    runtime: RuntimeConfig
    network: NetworkConfig | None = None
    faults: FaultsConfig | None = None
    aggregator: AggregatorConfig | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    def lost_workers(self) -> list[int]:
        """Workers that never answer from some iteration on: persistent stragglers and the
        faults' (``FaultsConfig.lost_workers``), sorted."""
        lost = set(self.stragglers.persistent)
        if self.faults is not None:
            lost |= set(self.faults.lost_workers())
        return sorted(lost)

    def fingerprint(self) -> str:
        """sha256 of everything that determines the trajectory (not iterations or outputs),
        so a checkpoint is only resumed by the configuration that wrote it."""
        relevant = {
            key: self.adversaries.fingerprint_fields()
            if key == "adversaries"
            else aggregator.fingerprint(value)
            if key == "aggregator"
            else value
            for key, value in self.as_dict().items()
            # a run without an aggregator keeps the fingerprint it had before they existed
            if not (key == "aggregator" and value is None)
            and key
            not in (
                "name",
                "output",
                "iterations",
                "checkpoint",
                "log",
                "runtime",
                "network",
                "faults",
            )
        }
        if not self.model.params:  # a run without them keeps the fingerprint it had before
            relevant["model"] = {k: v for k, v in relevant["model"].items() if k != "params"}
        text = json.dumps(relevant, sort_keys=True, default=str)
        # here, not at the top: hashlib loads OpenSSL (~3 ms), which every MPI rank would pay
        # at start-up; only rank 0 fingerprints a run (its checkpoints)
        import hashlib

        return hashlib.sha256(text.encode()).hexdigest()


TOP_KEYS = (
    "name",
    "output",
    "seed",
    "iterations",
    "data",
    "model",
    "scheme",
    "optimizer",
    "stragglers",
    "adversaries",
    "aggregator",
    "bandwidth",
    "network",
    "checkpoint",
    "log",
    "runtime",
    "faults",
)


def load_config(path: str | os.PathLike[str]) -> RunConfig:
    """Read and validate the run YAML at ``path``; ``ConfigError`` (one line) otherwise."""
    path = Path(path)
    raw = read_yaml(path, ConfigError)
    return parse_config(raw, default_name=path.stem, origin=str(path))


def parse_config(raw: Any, *, default_name: str = "run", origin: str | None = None) -> RunConfig:
    """Validate the mapping ``raw`` (a parsed run YAML; ``origin``: its file, which a bad
    rate's message names).

    Paths may use ``~`` and ``$VARIABLES``; relative ones are relative to the working
    directory (where the job is started), like the default output ``runs/<name>``.
    """
    top = Section(raw if raw is not None else {}, "", TOP_KEYS)
    name = top.string("name", default_name)
    output = top.string("output", None)
    resolve = _expand
    return RunConfig(
        name=name,
        output=resolve(output),
        seed=top.integer("seed", 0),
        iterations=top.integer("iterations", minimum=1),
        data=data.parse(top, resolve),
        model=model.parse(top),
        scheme=scheme.parse(top),
        optimizer=optimizer.parse(top),
        stragglers=stragglers.parse(top),
        adversaries=adversaries.parse(top),
        bandwidth=bandwidth.parse(top),
        checkpoint=checkpoint.parse(top),
        log=log.parse(top),
        runtime=runtime.parse(top),
        network=network.parse(top, origin),
        faults=faults.parse(top),
        aggregator=aggregator.parse(top),
    )


def _expand(value: str | None) -> str | None:
    return None if value is None else os.path.expandvars(os.path.expanduser(value))
