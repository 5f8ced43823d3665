"""An aggregator's tolerance, checked at every aggregation against the values it actually got.

The plan checks it once (``gradcode.runfile.plan``): the code hands the aggregator
``aggregation_count()`` values, the planned liars corrupt ``aggregation_corrupted(liars)`` of
them, and that must be within ``tolerates``. At run time fewer values can come: workers dead
or dropped as caught liars, a DETOX or ByzShield group whose vote failed, messages refused as
malformed or non-finite where they enter the master. With fewer values Krum's and Bulyan's
``f`` may no longer fit (``n >= 2f + 3``, ``4f + 3``) and the trimmed mean trims fewer
(``floor(beta n)``): the guarantee the run was planned under is gone. So every aggregation
asks ``byzantine_refusal(count, corrupted)`` with the values in hand and the planned liars
behind them (those that lie in this iteration), and below the bound:

- ``aggregator.below_tolerance: stop`` (the default): the aggregation is refused as a
  decoding the master cannot vouch for (``NotDecodableError``); the master waits for more
  results as after any refusal, and with every live worker's in hand the run stops as a
  decoding failure (exit 4, one line, ``summary.json``'s ``stopped``);
- ``continue``: the iteration is aggregated anyway and its record says why it is below
  (``below_tolerance``: one line), so a degraded run is never silent.

Liars the plan does not count (``adversaries.unforeseen``) are not counted here either: they
are the attacker a run did not foresee. An aggregator that cannot take the count at all
(``refusal``: Krum below ``2f + 3``) is refused under either policy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from gradcode.aggregators import Aggregator
from gradcode.codes import GradientCode, NotDecodableError
from gradcode.runfile.config import RunConfig


class Tolerance:
    """The check of one run: its ``aggregator``, ``code``, the planned ``liars`` (with the
    iterations they lie in, ``lies(worker, t)``) and the ``policy``."""

    def __init__(
        self,
        aggregator: Aggregator,
        code: GradientCode,
        liars: Iterable[int],
        lies: Callable[[int, int], bool],
        policy: str,
    ) -> None:
        self.aggregator, self.code = aggregator, code
        self.liars, self.lies, self.policy = frozenset(liars), lies, policy

    def check(self, t: int, rows: Sequence[Iterable[int]]) -> str | None:
        """Iteration ``t``'s aggregation of one value per entry of ``rows`` (the workers behind
        it: a partial gradient's sender, the members agreeing with a vote): ``None`` within
        the tolerance; below it, the one-line reason under ``continue``, ``NotDecodableError``
        under ``stop`` (and whenever the count cannot be aggregated). A value is corrupted
        when a planned liar lying in ``t`` is behind it (a vote its liars own: honest
        members never agree with a forgery)."""
        count = len(rows)
        behind = [{w for w in row if w in self.liars and self.lies(w, t)} for row in rows]
        corrupted = sum(1 for workers in behind if workers)
        lying = sorted(set().union(*behind))
        problem = self.aggregator.byzantine_refusal(count, corrupted)
        if problem is None:
            return None
        planned = self.code.aggregation_count()
        reason = (
            f"below tolerance: {problem} ({self.code.name} handed it {count} of {planned} "
            f"values, {corrupted} of them from workers {lying})"
        )
        if self.policy == "continue" and self.aggregator.refusal(count) is None:
            return reason
        raise NotDecodableError(f"{reason}; aggregator.below_tolerance: {self.policy}", needed=None)


def run_tolerance(
    config: RunConfig,
    code: GradientCode,
    aggregator: Aggregator | None,
    lies: Callable[[int, int], bool],
) -> Tolerance | None:
    """The check of a run with ``config`` (``None`` without an aggregator): its planned
    liars (``adversaries.workers``, not the unforeseen) and ``aggregator.below_tolerance``."""
    if aggregator is None or config.aggregator is None:
        return None
    policy = config.aggregator.below_tolerance
    return Tolerance(aggregator, code, config.adversaries.workers, lies, policy)
