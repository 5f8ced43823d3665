"""What differs between the shapes a run can take, asked of one object per shape.

A code declares its shape in ``capabilities.topology`` (a name, data of the code);
``gradcode.topology.topology_of(code)`` gives the ``Topology`` object of that name, and every
layer outside ``gradcode.codes`` asks the object, never the name:

- the run's ranks and who does what (``nodes``, ``combines``, ``scheme_params``);
- how results come up: whether a collector may pull them, and what a pull spares
  (``pull_refusal``, ``pull_gain``, ``collector_rule``);
- how the model goes down: whether it may be scattered, and what copies cost
  (``scatter_refusal``, ``copies_seconds``);
- what a failure or a spare means (``accepts_spares``, ``needs_every_worker``);
- how the timing models simulate it, what its link floor is, how its logs are read back, how
  the rank program runs it: per layer, a ``TopologyVisitor`` whose method for this shape the
  object calls with the code in the type that shape guarantees (``accept``);
- how ``recommend`` treats it (``direct``: closed forms and per-message simulation assume every
  result goes straight to the master).

A new topology is one new module: a ``Topology`` subclass registered in
``gradcode.topology.TOPOLOGIES``, its name added to ``gradcode.codes.base.TOPOLOGIES``, and a
method on ``TopologyVisitor`` that the layers running it override (a visitor that does not
refuses the code in one line). ``gradcode.topology.conformance`` checks the contract.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, Generic, TypeVar

from gradcode.codes.base import GradientCode
from gradcode.codes.completion import CompletionRule, decodable_prefix
from gradcode.codes.ring import RingCode
from gradcode.codes.tree import TreeCode

T = TypeVar("T")


def needed(
    keys: Sequence[Any], rule: CompletionRule | None, decodable: Callable[[Sequence[Any]], bool]
) -> int:
    """How many of ``keys`` a collector uses: its declared rule's count, or without one the
    fewest, first in order, it decodes from (the first keys are as good a sample as any for
    ``pull_gain``)."""
    if rule is not None:
        return sum(rule.needed)
    count = decodable_prefix(keys, decodable)
    return len(keys) if count is None else count


class TopologyVisitor(ABC, Generic[T]):
    """One layer's way of handling each topology (``Topology.accept`` picks the method).

    A method left as it is refuses: ``ValueError`` with ``refusal``'s line, so a layer that
    cannot handle a shape says so instead of guessing.
    """

    def flat(self, code: GradientCode) -> T:
        """A master and workers: every result goes straight to the master."""
        raise ValueError(self.refusal(code, "flat"))

    def tree(self, code: TreeCode) -> T:
        """A tree: parents reduce their children's results on the way up."""
        raise ValueError(self.refusal(code, "tree"))

    def ring(self, code: RingCode) -> T:
        """A ring: the workers all-reduce, no master collects."""
        raise ValueError(self.refusal(code, "ring"))

    def refusal(self, code: Any, topology: str) -> str:
        """The one line a refused code gets (subclasses say what they are)."""
        return f"{type(self).__name__}: cannot handle {code.name}, a {topology} code"


class Topology(ABC):
    """One shape of run (see the module docstring); stateless, one instance per shape."""

    #: the name codes declare (``Capabilities.topology``) and runs record (``summary.json``)
    name: ClassVar[str]
    #: how messages name the ranks after the master
    nodes: ClassVar[str] = "workers"
    #: a spare rank can take a dead worker's place (its peers need learn of no new rank)
    accepts_spares: ClassVar[bool] = False
    #: the run cannot finish without every worker (no straggler is ever left out)
    needs_every_worker: ClassVar[bool] = False
    #: every result goes straight from its worker to the master: closed forms, per-message
    #: simulations and link estimates from one run's copies assume it
    direct: ClassVar[bool] = False
    #: a collector (the master, a parent) receives the results: their bytes cross its port
    collects_results: ClassVar[bool] = True

    def __repr__(self) -> str:
        return f"<topology {self.name}>"

    def __str__(self) -> str:
        return self.name

    # -- the code -------------------------------------------------------------------------
    def ranks(self, code: GradientCode) -> int:
        """MPI ranks a run of ``code`` needs (spares aside): rank 0 (the master; a ring's
        coordinator, which logs and checkpoints) and one rank per worker or tree node."""
        return code.n + 1

    def check(self, code: GradientCode) -> None:
        """``ValueError`` unless ``code`` offers what this shape runs it by."""
        if code.capabilities.topology != self.name:
            raise ValueError(
                f"{code.name} declares topology {code.capabilities.topology!r}, not {self.name!r}"
            )

    @abstractmethod
    def accept(self, visitor: TopologyVisitor[T], code: GradientCode) -> T:
        """``visitor``'s method for this shape, called with ``code`` typed for it."""

    def tree(self, code: GradientCode) -> TreeCode | None:
        """The tree the results go up, where they go up one (``None``: no tree)."""
        return None

    def ring(self, code: GradientCode) -> RingCode | None:
        """The ring the workers all-reduce over, where they do (``None``: no ring)."""
        return None

    def scheme_params(self, code: GradientCode) -> dict[str, Any]:
        """The parameters a run records for ``code`` (runtime choices that are not the
        scheme's own default included)."""
        return dict(code.params())

    def combines(self, code: GradientCode, worker: int) -> bool:
        """Whether ``worker`` combines other workers' messages (a tree's parents)."""
        return False

    def handoffs(self, code: GradientCode) -> int:
        """Ranks woken one after the other on an iteration's critical path, each of which
        first waits for a core on a busy machine (``gradcode.fidelity``): here a worker woken
        by the model and again when its computation is done, and the master by the result."""
        return 3

    # -- results up ------------------------------------------------------------------------
    def pull_refusal(self, code: GradientCode, *, tolerant: bool) -> str | None:
        """Why a collector cannot pull the results of ``code`` here (``None``: it can)."""
        return None

    @abstractmethod
    def pull_gain(self, code: GradientCode) -> tuple[bool, str]:
        """Whether pulling spares the collectors' ports something, and the reason."""

    def collector_rule(
        self, code: GradientCode, node: int
    ) -> tuple[CompletionRule | None, Callable[[Sequence[Any]], bool]]:
        """What collector ``node`` (the master: ``MASTER``) waits for: its declared rule over
        the keys it receives, and its test of whether a set of them suffices."""
        return code.completion_rule(), code.is_decodable

    def collector_keys(self, code: GradientCode, node: int) -> tuple[Any, ...]:
        """The keys collector ``node`` receives, in order (the master: every message key)."""
        return tuple(code.all_message_keys())

    def incoming(self, code: GradientCode, rank: int) -> int:
        """Messages world rank ``rank`` receives in one iteration."""
        if rank != 0:
            return 0
        return sum(len(tuple(code.message_keys(worker))) for worker in range(code.n))

    # -- the model down --------------------------------------------------------------------
    def scatter_refusal(self, *, tolerant: bool) -> str | None:
        """Why the model cannot be scattered here (``None``: it can)."""
        return None

    def copies_seconds(
        self, code: GradientCode, size: float, master_rate: float, worker_rate: float
    ) -> float:
        """When the last worker holds a whole copy of the ``size``-byte model, sent the way
        this shape sends copies, on links of these rates (bytes per second)."""
        return code.n * size / master_rate
