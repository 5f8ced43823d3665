"""GC-MMC's parameter sets: the schemes of the paper's Fig. 1 and the representative family
``GCMMC.parameter_grid`` runs the exhaustive checks on (order vectors make the full space
unbounded)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

#: cluster sizes up to which ``parameter_grid`` lists every (r, order) of the correlated design
FULL_GRID_CLUSTER = 6
#: largest cluster size for which ``parameter_grid`` lists three-order uncorrelated designs
THREE_ORDERS_CLUSTER = 10


def fig1_params() -> dict[str, dict[str, Any]]:
    """The GC-type schemes of the paper's Fig. 1 (K = 40 workers, r = 10), by label."""
    return {
        "GC": {"n": 40, "r": 10, "clusters": 1, "design": "correlated", "order": 10},
        "UC-MMC": {"n": 40, "r": 10, "clusters": 1, "design": "correlated", "order": 1},
        "GC-MMC-1": {"n": 40, "r": 10, "clusters": 4, "design": "correlated", "order": 6},
        "GC-MMC-2": {
            "n": 40,
            "r": 10,
            "clusters": 4,
            "design": "uncorrelated",
            "orders": [6, 8, 10],
        },
    }


def cluster_family(size: int) -> Iterator[dict[str, Any]]:
    """The per-cluster-size part of ``GCMMC.parameter_grid``."""

    def half(x: int) -> int:
        return -(-x // 2)

    if size <= FULL_GRID_CLUSTER:
        correlated = [(r, o) for r in range(1, size + 1) for o in range(1, r + 1)]
        loads = list(range(2, size + 1))
    elif size <= 12:
        correlated = [(r, o) for r in sorted({2, half(size)}) for o in sorted({1, half(r), r})]
        loads = sorted({half(size), size})
    else:
        r = -(-size // 4)
        correlated = [(r, o) for o in sorted({half(r), r})]
        loads = sorted({half(size), size})
    for r, o in correlated:
        yield {"r": r, "design": "correlated", "order": o}
    families = []
    for r in loads:
        for orders in ([r - 1, r], [half(r), r], [half(r), r - 1, r]):
            if len(orders) == 3 and size > THREE_ORDERS_CLUSTER:
                continue
            if len(set(orders)) == len(orders) and min(orders) >= 1:
                families.append(("uncorrelated", r, orders))
    for orders in ([size], [size - 1, size], [half(size), size]):
        if len(set(orders)) == len(orders) and min(orders) >= 1:
            families.append(("hybrid", size, orders))
    for design, r, orders in dict.fromkeys((d, r, tuple(o)) for d, r, o in families):
        yield {"r": r, "design": design, "orders": list(orders)}
