"""Timing models of the papers: when does the master hold the gradient?

- ``master_worker.MasterWorkerModel`` (``"master-worker"``): paper 000 Section 5 and paper 002
  Section IV, with per-worker or per-type heterogeneity (papers 003 and 004);
- ``single_port.SinglePortModel`` (``"single-port"``): paper 001 (Lee et al.'s computation model,
  single-port transfers of ``tc``), for master-worker codes, CodedReduce trees and
  Ring-AllReduce (the ``ring-allreduce`` code);
- ``exact``: closed-form expectations of order statistics, to test the Monte Carlo.

``TIMING_MODELS`` maps the names used in simulation specs to the classes; ``model_from_spec`` builds
one from its name and parameter mapping. See ``model`` for the interface.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gradcode.errors import UnknownNameError
from gradcode.timing.master_worker import MasterWorkerModel
from gradcode.timing.model import Outcome, TimingModel
from gradcode.timing.single_port import SinglePortModel

TIMING_MODELS: dict[str, type[TimingModel]] = {
    MasterWorkerModel.name: MasterWorkerModel,
    SinglePortModel.name: SinglePortModel,
}


def model_from_spec(name: str, params: Mapping[str, Any]) -> TimingModel:
    """The model ``name`` with parameters ``params``; ``ValueError`` naming the bad key."""
    if name not in TIMING_MODELS:
        raise UnknownNameError("model", name, TIMING_MODELS)
    return TIMING_MODELS[name].from_params(params)


__all__ = [
    "TIMING_MODELS",
    "MasterWorkerModel",
    "Outcome",
    "SinglePortModel",
    "TimingModel",
    "model_from_spec",
]
