"""A ring: no master collects; the workers all-reduce their partial gradients
(``gradcode.codes.RingCode``), and rank 0 only logs and checkpoints."""

from __future__ import annotations

from typing import Any, ClassVar

from gradcode.codes.base import GradientCode
from gradcode.codes.ring import RingCode
from gradcode.topology.base import T, Topology, TopologyVisitor


class Ring(Topology):
    name: ClassVar[str] = "ring"
    needs_every_worker: ClassVar[bool] = True
    collects_results: ClassVar[bool] = False

    def check(self, code: GradientCode) -> None:
        super().check(code)
        if not isinstance(code, RingCode):
            raise ValueError(f"{code.name} declares topology 'ring' but is not a RingCode")

    def ring(self, code: GradientCode) -> RingCode:
        self.check(code)
        assert isinstance(code, RingCode)
        return code

    def accept(self, visitor: TopologyVisitor[T], code: GradientCode) -> T:
        return visitor.ring(self.ring(code))

    def handoffs(self, code: GradientCode) -> int:
        """A worker's computation, ``2 (n - 1)`` chunk steps each waking the next worker, and
        the coordinator's report."""
        return 2 * (code.n - 1) + 2

    def scheme_params(self, code: GradientCode) -> dict[str, Any]:
        return dict(code.params()) | {"implementation": self.ring(code).implementation}

    def pull_refusal(self, code: GradientCode, *, tolerant: bool) -> str | None:
        return f"{code.name} is a ring code (its results are not collected by a master)"

    def pull_gain(self, code: GradientCode) -> tuple[bool, str]:
        return False, "a ring's results are not collected"

    def incoming(self, code: GradientCode, rank: int) -> int:
        # every worker reports the reduced vector to rank 0
        return code.n if rank == 0 else 0

    def scatter_refusal(self, *, tolerant: bool) -> str | None:
        return "a ring code's model goes to every worker"
