"""A master and workers: every worker's results go straight to the master, which decodes."""

from __future__ import annotations

from typing import ClassVar

from gradcode.codes.base import GradientCode
from gradcode.codes.completion import decodable_prefix
from gradcode.topology.base import T, Topology, TopologyVisitor


class MasterWorkers(Topology):
    name: ClassVar[str] = "flat"
    accepts_spares: ClassVar[bool] = True
    direct: ClassVar[bool] = True

    def accept(self, visitor: TopologyVisitor[T], code: GradientCode) -> T:
        return visitor.flat(code)

    def pull_gain(self, code: GradientCode) -> tuple[bool, str]:
        keys = code.all_message_keys()
        rule = code.completion_rule()
        if rule is not None:
            needed = sum(rule.needed)
        else:
            # without groups the first keys are as good a sample as any for ``auto``
            count = decodable_prefix(keys, code.is_decodable)
            needed = len(keys) if count is None else count
        if needed >= len(keys):
            return False, f"the decoder uses all {len(keys)} results"
        return True, f"the decoder uses {needed} of {len(keys)} results"
