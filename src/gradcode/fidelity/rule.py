"""The rule that says whether a run's links (or its injected delays) decided its times or the
machine emulating them did, from what the run cost the machine (``record.machine_measures``).

A run is the machine's when, over its timed iterations, any of these held:

- ``queue``: the run's threads waited for a core, on average, ``QUEUE_LIMIT`` or more of them
  at a time (the sum of their run-queue delays over the run's time): what a rank does between
  its messages waits, and the wait is in the iteration;
- ``busiest``: one rank was on a core ``BUSY_LIMIT`` of the time or more: its own processing
  (polling, forwarding, decoding, a network's gradients) is what the iteration takes;
- ``pressure``: some task of the machine (the run's or another's) waited for a core
  ``PRESSURE_LIMIT`` of the time or more: the run shared its cores.

The limits were set by runs whose answer is known (``docs/measurements/fidelity.md``: links at
N = 10 with copies, the machine at N = 156 scattered and beside busy processes).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

QUEUE_LIMIT = 0.25
BUSY_LIMIT = 0.5
PRESSURE_LIMIT = 0.5

#: the rule in one line, as the record states it
RULE = (
    f"the machine decided when the run's threads waited for a core {QUEUE_LIMIT:g} at a time "
    f"or more on average, or a rank was on a core {BUSY_LIMIT:.0%} of the time or more, or some "
    f"task of the machine waited for a core {PRESSURE_LIMIT:.0%} of the time or more"
)


def verdict(machine: Mapping[str, Any], model: str) -> dict[str, Any]:
    """``{"decided_by": model or "machine", "reasons": [...]}`` from the measures of
    ``record.machine_measures`` (a measure the kernel did not give is not held against the
    run; ``model``: ``links`` or ``injected delays``)."""
    reasons = []
    queue = machine.get("queue")
    if queue is not None and queue >= QUEUE_LIMIT:
        reasons.append(f"the run's threads waited for a core {queue:.2f} at a time on average")
    busiest = machine.get("busiest_rank_cpu")
    if busiest is not None and busiest >= BUSY_LIMIT:
        rank = machine.get("busiest_rank")
        reasons.append(f"rank {rank} was on a core {busiest:.0%} of the time")
    pressure = machine.get("cpu_pressure_some")
    if pressure is not None and pressure >= PRESSURE_LIMIT:
        reasons.append(f"some task of the machine waited for a core {pressure:.0%} of the time")
    return {"decided_by": "machine" if reasons else model, "reasons": reasons, "rule": RULE}
