"""Numerical stability study: maximum relative decode error over straggler patterns versus n.

Each *family* fixes how the straggler count and the other parameters grow with ``n``, so that
the curves compare like with like: ``s = max(1, n // 4)`` stragglers, and for the codes with
message reduction ``m = 2`` (Ye-Abbe also with ``m = n // 4``, where its Vandermonde decoding
degrades first). Errors are measured by the verification harness (decoded gradient
against an independent sum of random partials); the condition number is the worst one the
decoder met.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gradcode.codes.registry import build
from gradcode.codes.verify import verify


def _stragglers(n: int) -> int:
    return max(1, n // 4)


def _cyclic_placement(n: int, r: int) -> list[list[int]]:
    return [[(i + j) % n for j in range(r)] for i in range(n)]


@dataclass(frozen=True)
class Family:
    """A scheme with parameters as a function of ``n``."""

    label: str
    scheme: str
    params: Callable[[int], dict[str, Any]]


FAMILIES: tuple[Family, ...] = (
    Family("crc", "crc", lambda n: {"n": n, "s": _stragglers(n)}),
    *(
        Family(
            f"ye-abbe ({points}, m={label})",
            "ye-abbe",
            lambda n, points=points, m_of=m_of: {
                "n": n,
                "d": _stragglers(n) + m_of(n),
                "s": _stragglers(n),
                "m": m_of(n),
                "points": points,
            },
        )
        for points in ("paper", "chebyshev")
        for label, m_of in (("2", lambda n: 2), ("n/4", lambda n: max(1, n // 4)))
    ),
    Family(
        "heterogeneous",
        "heterogeneous",
        lambda n: {
            "placement": _cyclic_placement(n, _stragglers(n) + 2),
            "s": _stragglers(n),
            "a": 0,
        },
    ),
    Family("binary", "binary", lambda n: {"n": n, "s": _stragglers(n)}),
)


def stability_rows(
    ns: Iterable[int],
    families: Iterable[Family] = FAMILIES,
    *,
    patterns: int = 30,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
) -> Iterator[dict[str, Any]]:
    """One row per (family, n): ``max_relative_error`` and ``worst_condition_number``."""
    families = tuple(families)
    for n in ns:
        for family in families:
            code = build(family.scheme, **family.params(n))
            report = verify(code, exhaustive=False, limit=patterns, seed=seed, length=64)
            if progress is not None:
                progress(
                    f"{family.label} n={n}: max relative error {report.max_relative_error:.2e}"
                )
            condition = report.worst_condition_number
            yield {
                "family": family.label,
                "scheme": family.scheme,
                "n": n,
                "s": code.s,
                "m": code.m,
                "patterns": report.patterns_checked,
                "max_relative_error": report.max_relative_error,
                "worst_condition_number": "" if math.isnan(condition) else condition,
            }


def write_stability_csv(path: str | Path, rows: Iterable[dict[str, Any]]) -> None:
    """Write ``rows`` to ``path`` atomically (no partial file on failure)."""
    path = Path(path)
    rows = list(rows)
    if not rows:
        raise ValueError("stability study produced no rows")
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    tmp.replace(path)
