"""A master and workers: every worker's results go straight to the master, which decodes."""

from __future__ import annotations

from typing import ClassVar

from gradcode.codes.base import GradientCode
from gradcode.topology.base import T, Topology, TopologyVisitor, needed


class MasterWorkers(Topology):
    name: ClassVar[str] = "flat"
    accepts_spares: ClassVar[bool] = True
    direct: ClassVar[bool] = True

    def accept(self, visitor: TopologyVisitor[T], code: GradientCode) -> T:
        return visitor.flat(code)

    def pull_gain(self, code: GradientCode) -> tuple[bool, str]:
        keys = code.all_message_keys()
        used = needed(keys, code.completion_rule(), code.is_decodable)
        if used >= len(keys):
            return False, f"the decoder uses all {len(keys)} results"
        return True, f"the decoder uses {used} of {len(keys)} results"
