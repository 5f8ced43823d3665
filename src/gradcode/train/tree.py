"""A tree code's tree (CodedReduce's) as MPI sub-communicators: one per parent, the parent and
its children.

Rank ``v + 1`` is tree node ``v``, rank 0 the master (``MASTER``, the root). Every parent ``P``
(the master included) gets a communicator holding ``P`` at rank 0 and its ``n`` children at
ranks ``1..n`` in ``children(P)`` order. A node belongs to two of them (as a child, and as a
parent unless it is a leaf), so they are made by two ``Split`` calls over ``COMM_WORLD``: the
first for parents at even depth, the second for parents at odd depth; in each, a rank is in at
most one group. Models go down and results go up inside these communicators only; the
per-parent waiting rule and reduction are the code's (``children_decodable``, ``encode_node``,
``decode_root``: the ``TreeCode`` interface). A scattered model (``runtime.distribution``
``scatter``) does not follow the tree: its pieces travel among all ranks on a duplicate of
``COMM_WORLD`` (``Links.pieces``).
"""

from __future__ import annotations

from mpi4py import MPI

from gradcode.codes.tree import MASTER, TreeCode
from gradcode.train.runtime import Links


def tree_links(world: MPI.Comm, code: TreeCode) -> Links:
    """This rank's ``Links`` in the tree of ``code`` (collective over ``world``)."""
    rank = world.Get_rank()
    node = MASTER if rank == 0 else rank - 1
    depth = code.depth(node)
    has_children = node == MASTER or not code.is_leaf(node)
    comms: dict[int, MPI.Comm] = {}
    for parity in (0, 1):
        color, key = MPI.UNDEFINED, 0
        if has_children and depth % 2 == parity:
            color, key = node + 1, 0  # colors must be >= 0: the master (-1) gets 0
        elif node != MASTER and (depth - 1) % 2 == parity:
            parent = code.parent(node)
            color, key = parent + 1, list(code.children(parent)).index(node) + 1
        comms[parity] = world.Split(color, key)
    links = Links(world, pieces=world.Dup())
    if node != MASTER:
        links.up_comm, links.up_rank = comms[(depth - 1) % 2], 0
    if has_children:
        links.down_comm = comms[depth % 2]
        links.children = list(code.children(node))
    return links
