"""The rule that says whether a run's links (or its injected delays) decided its times or the
machine emulating them did, from what the run cost the machine (``record.machine_measures``).

A run is the machine's when, over its timed iterations, any of these held:

- ``critical``: the ranks woken one after another on an iteration's critical path (the
  topology's ``handoffs``: 3 for a master and its workers, twice a tree's height and one,
  a ring's 2 (n - 1) steps and two) waited for a core, at the run's mean run-queue delay per
  wake-up, ``CRITICAL_LIMIT`` of the iteration's time or more: the machine's scheduling is
  in the time measured, beyond what the links' model can agree with;
- ``busiest``: one rank was on a core ``BUSY_LIMIT`` of the time or more: its own processing
  (polling, forwarding, decoding, a network's gradients) is what the iteration takes;
- ``cpu``: the run's ranks together kept ``CPU_LIMIT`` of the machine's cores busy or more:
  work that a real cluster spreads over a core per node (an all-to-all's messages, many
  ranks' polling) queues here for a few cores, whichever rank's turn it delays.
- ``waited``: a rank was runnable but waiting for a core ``WAIT_LIMIT`` of the time or more
  (its threads' run-queue delay over the run's time);
- ``stretched``: the iteration's real computation (its undilated share: the longest
  gradient, decoding, the update) waited for a core ``CRITICAL_LIMIT`` of the iteration or
  more, at the ranks' median stretch of their work (real over CPU seconds,
  ``record.work_measures``): processes other than the run's can hold the cores, which the
  run's own CPU share does not see (Fig. 13's UMW at N = 42 beside other jobs: its work took
  104 times its CPU time, 0.2 of the cores its own).

The machine's CPU pressure and the run's mean queue are recorded beside them, not judged: a
busy machine whose cores free up when a rank wakes delays nothing. The limits were set by
runs whose answer dilation gives (``docs/measurements/fidelity.md``: a run whose times do not
move when every link and delay is made K times slower was decided by its links).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

CRITICAL_LIMIT = 0.05
BUSY_LIMIT = 0.5
CPU_LIMIT = 0.4
#: a rank runnable but waiting for a core this share of the run: the machine's scheduling,
#: not the rank's own work or its links, held it (real-time busy loops beside an idle run:
#: its ranks waited 0.6 of the time while their wake-ups, many and short, averaged 2 ms)
WAIT_LIMIT = 0.5

#: the rule in one line, as the record states it
RULE = (
    f"the machine decided when the ranks on an iteration's critical path waited for a core "
    f"{CRITICAL_LIMIT:.0%} of the iteration or more, or a rank was on a core {BUSY_LIMIT:.0%} "
    f"of the time or more, or the run's ranks kept {CPU_LIMIT:.0%} of the cores busy or more, "
    f"or its real computation waited for a core {CRITICAL_LIMIT:.0%} of the iteration or more, "
    f"or a rank waited for a core {WAIT_LIMIT:.0%} of the time or more"
)


def verdict(
    machine: Mapping[str, Any],
    critical: Mapping[str, Any] | None,
    model: str,
    stretched: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """``{"decided_by": model or "machine", "reasons": [...], "rule": RULE}`` from the
    measures of ``record.machine_measures``, the critical path's delay (``record``'s
    ``critical``) and the real computation's wait (``record``'s ``stretched``); a measure
    the kernel did not give is not held against the run; ``model``: ``links`` or ``injected
    delays``."""
    reasons = []
    if critical is not None and critical["share"] >= CRITICAL_LIMIT:
        reasons.append(
            f"{critical['handoffs']} ranks on the critical path waited for a core "
            f"{critical['share']:.0%} of the iteration"
        )
    busiest = machine.get("busiest_rank_cpu")
    if busiest is not None and busiest >= BUSY_LIMIT:
        rank = machine.get("busiest_rank")
        reasons.append(f"rank {rank} was on a core {busiest:.0%} of the time")
    cpu = machine.get("cpu")
    if cpu is not None and cpu >= CPU_LIMIT:
        reasons.append(f"the run's ranks kept {cpu:.0%} of the {machine.get('cores')} cores busy")
    waited = machine.get("rank_wait_max")
    if waited is not None and waited >= WAIT_LIMIT:
        reasons.append(f"a rank waited for a core {waited:.0%} of the time")
    if stretched is not None and stretched["share"] >= CRITICAL_LIMIT:
        reasons.append(
            f"its real computation waited for a core {stretched['share']:.0%} of the iteration "
            f"(it took {stretched['stretch']:.1f} times its CPU time)"
        )
    return {"decided_by": "machine" if reasons else model, "reasons": reasons, "rule": RULE}
