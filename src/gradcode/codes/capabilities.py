"""``Capabilities``: what a code declares it can do, read by the runtime, the simulator and the
command line instead of asking which scheme a code is (see ``gradcode.codes.base``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

TOPOLOGIES = ("flat", "tree", "ring")
MESSAGE_KINDS = ("vector", "matrix")


@dataclass(frozen=True)
class Capabilities:
    """What a code can do, declared once, read by the runtime, the simulator and the CLI.

    ``topology``
        ``"flat"``: a master and ``n`` workers, worker ``i`` sends ``message_keys(i)`` to the
        master, which decodes. ``"tree"``: the code is a ``gradcode.codes.tree.TreeCode``;
        nodes reduce their children's messages on the way up. ``"ring"``: no master; the
        workers all-reduce their partial gradients over a ring, on the schedule the code's
        ``rounds()``, ``completion(compute, tc)`` and ``messages()`` give (Ring-AllReduce).
    ``codes_data``
        Model kinds (``gradcode.models``) for which the code is exact when it codes the *data*
        rather than the gradients (LCC: ``("linear",)``). Empty for gradient codes. A code
        that codes the data implements ``encode_data``; its worker's message is the model's
        gradient on the worker's coded data.
    ``corrects_adversaries``
        ``decode_result`` locates up to ``a`` corrupted messages and names them in
        ``DecodeResult.adversaries``.
    ``estimates_error``
        ``decode_result`` fills ``DecodeResult.error_estimate`` (approximate codes).
    ``message``
        ``"vector"``: a message is a vector of ``message_length(l)`` numbers; ``"matrix"``: a
        matrix, flattened to that many numbers on the wire.
    ``aggregable``
        ``aggregation_inputs`` hands the master one value per group of partitions in hand (the
        workers' own partial gradients, or a vote per replica group) whose sum over all groups
        is the gradient, so a robust aggregator (``gradcode.aggregators``) can replace the
        decoder's sum; ``aggregation_count`` and ``aggregation_corrupted`` say how many values
        and how many of them given liars can corrupt. Only ``flat`` codes.
    """

    topology: str = "flat"
    codes_data: tuple[str, ...] = ()
    corrects_adversaries: bool = False
    estimates_error: bool = False
    message: str = "vector"
    aggregable: bool = False

    def __post_init__(self) -> None:
        if self.topology not in TOPOLOGIES:
            raise ValueError(f"capabilities: topology must be one of {TOPOLOGIES}")
        if self.message not in MESSAGE_KINDS:
            raise ValueError(f"capabilities: message must be one of {MESSAGE_KINDS}")
        if self.aggregable and self.topology != "flat":
            raise ValueError("capabilities: only a flat code can be aggregable")

    def as_dict(self) -> dict[str, Any]:
        return {
            "topology": self.topology,
            "codes_data": list(self.codes_data),
            "corrects_adversaries": self.corrects_adversaries,
            "estimates_error": self.estimates_error,
            "message": self.message,
            "aggregable": self.aggregable,
        }
