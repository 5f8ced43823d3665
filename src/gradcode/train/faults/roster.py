"""Who serves each of the master's children, and who will not answer: the master's roster.

A child is reached on its ``down_comm`` rank and known by its world rank (flat: both ``j + 1``
for worker ``j`` until a spare takes its place, ``gradcode.train.faults.spares``). A worker is
*lost* for iteration ``t`` when it will not answer it: a persistent straggler, a silent one
from its iteration on, a failed worker or a dropped liar (``adversaries.caught``,
``gradcode.train.faults.caught``) that no spare replaced. Whether the master learns who lies
(and so builds ``Caught``) is the plan's word (``gradcode.runfile.plan.names_liars``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gradcode.runfile.plan import names_liars
from gradcode.train.faults.caught import Caught, Drop
from gradcode.train.faults.spares import Replacements
from gradcode.train.runtime import Links, RankContext


class Roster:
    """The master's children (see the module docstring): ``child_ranks[j]`` is the
    ``(down_comm rank, world rank)`` of child ``j``, changed when a spare takes its place."""

    def __init__(
        self,
        ctx: RankContext,
        links: Links,
        share: Callable[[int], dict[int, Any]] | None = None,
    ) -> None:
        plan = ctx.plan
        self.config = plan.config
        self.workers = plan.workers
        self.failures = ctx.failures if ctx.tolerant else None
        self.child_ranks = [(j + 1, child + 1) for j, child in enumerate(links.children)]
        self.spares: Replacements | None = None
        if plan.spares:
            assert self.failures is not None and share is not None
            self.spares = Replacements(
                ctx.world, self.failures, plan.workers, plan.spares, share, self.failures.began
            )
        #: the checks of the liars a decoder names, and ``adversaries.caught``
        self.caught = (
            Caught(plan.code.a, self.config.adversaries.plan(), self.config.adversaries.caught)
            if names_liars(plan)
            else None
        )

    def lost(self, t: int) -> list[int]:
        """Workers that will not answer iteration ``t``: failed, persistent, silent, dropped
        (``adversaries.caught``)."""
        config = self.config
        lost = set(config.stragglers.persistent)
        spares = self.spares
        gone = set(self.failures.workers()) if self.failures is not None else set()
        if self.caught is not None:
            gone |= set(self.caught.workers())
        lost |= {w for w in gone if not (spares and spares.replaced(w))}
        if config.faults is not None:
            lost |= {e.worker for e in config.faults.silent if e.iteration <= t}
        return sorted(lost)

    def replaced(self, worker: int) -> bool:
        """Whether a spare serves ``worker`` now (another process: an honest one)."""
        return self.spares is not None and self.spares.replaced(worker)

    def alive(self, rank: int) -> bool:
        """Whether ``rank`` is to be sent models: not dead, not a dropped liar."""
        if self.caught is not None and rank in self.caught.ranks():
            return False
        return self.failures is None or not self.failures.dead(rank)

    def ignored(self, source: int) -> bool:
        """A message (or refusal) on ``source``'s channel is a dropped liar's: never used."""
        return self.caught is not None and source in self.caught.ranks()

    def live_ranks(self) -> list[int]:
        """The workers' own ranks (worker ``j`` at ``j + 1``) not known dead."""
        return [r for r in range(1, self.workers + 1) if self.alive(r)]

    def spare_orphans(self) -> list[int]:
        """Spares never assigned (they listen on ``world`` only) and dropped liars a spare
        replaced (no longer among the children)."""
        assert self.spares is not None
        replaced = []
        if self.caught is not None:
            replaced = [
                drop.rank
                for drop in self.caught.dropped.values()
                if self.child_ranks[drop.worker][1] != drop.rank
            ]
        return self.spares.idle() + replaced

    def drop(self, t: int, named: list[int]) -> list[Drop]:
        """Under ``drop``: the workers named in iteration ``t`` leave the run from ``t + 1``
        on, as failed workers (a spare, where there is one, takes each one's place)."""
        assert self.caught is not None
        rank_of = {worker: world for worker, (_, world) in enumerate(self.child_ranks)}
        made = self.caught.drop(t, named, rank_of)
        if self.spares is not None:
            for drop in made:
                replacement = self.spares.replace_dropped(drop.worker, drop.rank, t)
                if replacement is not None:  # the next model goes to the spare
                    rank = replacement.spare_rank
                    self.child_ranks[drop.worker] = (rank, rank)
        return made

    def replace_dead(self, t: int) -> list[int]:
        """Spares take the places of the dead workers: the ranks of those that did."""
        assert self.spares is not None
        ranks = []
        for made in self.spares.replace_dead(t):
            rank = made.spare_rank  # flat: its ``down_comm`` rank is its world rank
            self.child_ranks[made.worker] = (rank, rank)
            ranks.append(rank)
        return ranks

    def why_lost(self, t: int, code_name: str, params: Any) -> str:
        """Why iteration ``t`` cannot be decoded: the workers lost, the dropped liars named."""
        dropped = self.caught.workers() if self.caught is not None else []
        why = f" (workers {dropped} dropped, named as liars by the decoder)" if dropped else ""
        return f"{code_name} {params} cannot decode without workers {self.lost(t)}{why}"

    def fields(self) -> dict[str, Any]:
        """The iteration record's ``failed``, ``failures``, ``replaced``, ``replacements``
        (with ``faults.tolerate``) and the caught liars' fields."""
        fields: dict[str, Any] = {}
        if self.failures is not None:
            fresh = self.failures.take_fresh()
            fields["failed"] = self.failures.workers()
            if fresh:
                fields["failures"] = [failure.as_dict() for failure in fresh]
            if self.spares is not None:
                fields["replaced"] = self.spares.serving()
                made = self.spares.take_fresh()
                if made:
                    fields["replacements"] = made
        return fields | (self.caught.fields() if self.caught is not None else {})
