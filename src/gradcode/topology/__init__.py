"""One object per topology: what differs between a master with workers, a tree and a ring.

``topology_of(code)`` is the object of the code's declared shape; see ``base`` for what it
answers and how a new topology is added.
"""

from __future__ import annotations

from typing import Any

from gradcode.codes.base import TOPOLOGIES as DECLARED
from gradcode.codes.base import Capabilities, GradientCode
from gradcode.topology.base import Topology, TopologyVisitor
from gradcode.topology.flat import MasterWorkers
from gradcode.topology.ring import Ring
from gradcode.topology.tree import Tree

#: name -> the one object of that shape (the names codes may declare)
TOPOLOGIES: dict[str, Topology] = {t.name: t for t in (MasterWorkers(), Tree(), Ring())}
assert set(TOPOLOGIES) == set(DECLARED), "gradcode.codes.base.TOPOLOGIES and these differ"

FLAT = TOPOLOGIES["flat"]


def topology_named(name: str) -> Topology:
    """The topology of ``name`` (as runs record it); ``ValueError`` naming the known ones."""
    try:
        return TOPOLOGIES[name]
    except KeyError:
        known = ", ".join(TOPOLOGIES)
        raise ValueError(f"unknown topology {name!r} (known: {known})") from None


def topology_of(code: GradientCode | Capabilities | type[GradientCode] | Any) -> Topology:
    """The topology ``code`` declares (a code, its class or its ``Capabilities``)."""
    capabilities = code if isinstance(code, Capabilities) else code.capabilities
    return topology_named(capabilities.topology)


__all__ = [
    "FLAT",
    "TOPOLOGIES",
    "Topology",
    "TopologyVisitor",
    "topology_named",
    "topology_of",
]
