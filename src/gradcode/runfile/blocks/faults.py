"""The ``faults:`` block: workers that fail, not only straggle (killed, silent, or on a lost
node), whether the run tolerates it, and the spare ranks that take a dead worker's place."""

from __future__ import annotations

from dataclasses import dataclass

from gradcode.runfile.section import ConfigError, Section
from gradcode.runfile.words import NODE_LOSS


@dataclass(frozen=True)
class FaultEvent:
    """Worker ``worker`` fails at iteration ``iteration`` (killed, or silent from then on)."""

    worker: int
    iteration: int


@dataclass(frozen=True)
class NodeLoss:
    """The node of worker ``worker`` is lost for good at iteration ``iteration``: every
    process on it killed (``how`` "kill") or its link down (``how`` "link"). Only the emulated
    cluster can do it (``gradcode cluster lose --rank``; the workflow's rule train_lost)."""

    worker: int
    iteration: int
    how: str


@dataclass(frozen=True)
class FaultsConfig:
    tolerate: bool = True
    kill: tuple[FaultEvent, ...] = ()
    silent: tuple[FaultEvent, ...] = ()
    spares: int = 0
    lose_node: NodeLoss | None = None

    def lost_workers(self) -> list[int]:
        """Workers that stop answering for good: killed (but for the first ``spares`` kills,
        whose places spare ranks take), silent, or on the lost node, sorted."""
        return self._with(self.kill[self.spares :])  # kill is in iteration order

    def failing_workers(self) -> list[int]:
        """Every worker whose failure the run causes: killed, silent or on the lost node."""
        return self._with(self.kill)

    def _with(self, killed: tuple[FaultEvent, ...]) -> list[int]:
        """The workers of ``killed``, the silent ones and the lost node's, sorted."""
        workers = {event.worker for event in (*killed, *self.silent)}
        if self.lose_node is not None:
            workers.add(self.lose_node.worker)
        return sorted(workers)

    def silent_from(self, worker: int) -> int | None:
        """The iteration from which ``worker`` stops answering (``None``: never)."""
        found = [event.iteration for event in self.silent if event.worker == worker]
        return min(found) if found else None


def parse(top: Section) -> FaultsConfig | None:
    """The ``faults`` block of ``top`` (None: no faults, the run needs no tolerant MPI)."""
    if not top.has("faults"):
        return None
    section = top.section("faults", ("tolerate", "kill", "silent", "spares", "lose_node"))
    kill = _fault_events(section, "kill")
    silent = _fault_events(section, "silent")
    both = sorted({e.worker for e in kill} & {e.worker for e in silent})
    if both:
        raise ConfigError(f"faults.silent: worker {both[0]} is also in faults.kill")
    tolerate = section.boolean("tolerate", True)
    if kill and not tolerate:
        raise ConfigError("faults.kill: needs faults.tolerate (a killed rank ends the job)")
    spares = section.integer("spares", 0, minimum=0)
    if spares and not tolerate:
        raise ConfigError("faults.spares: needs faults.tolerate (only a survivor can replace)")
    lose_node = _node_loss(section)
    if lose_node is not None:
        if not tolerate:
            raise ConfigError("faults.lose_node: needs faults.tolerate (a lost rank ends the job)")
        if lose_node.worker in {e.worker for e in (*kill, *silent)}:
            raise ConfigError(
                f"faults.lose_node: worker {lose_node.worker} is also in faults.kill or "
                "faults.silent"
            )
        if spares:
            # a spare would be handed the lost worker's partitions by the order of kills, which
            # a node loss (timed by the cluster, not by gradcode train inject) is outside of
            raise ConfigError("faults.lose_node: not with faults.spares (spares replace kills)")
    return FaultsConfig(
        tolerate=tolerate, kill=kill, silent=silent, spares=spares, lose_node=lose_node
    )


def _node_loss(section: Section) -> NodeLoss | None:
    value = section.raw("lose_node", None)
    if value is None:
        return None
    entry = Section(value, section.key("lose_node"), ("worker", "iteration", "how"))
    worker = entry.integer("worker", minimum=0)
    iteration = entry.integer("iteration", minimum=1)
    how = entry.string("how", choices=NODE_LOSS)
    return NodeLoss(worker, iteration, how)


def _fault_events(section: Section, name: str) -> tuple[FaultEvent, ...]:
    value = section.raw(name, [])
    if not isinstance(value, list):
        raise ConfigError(f"{section.key(name)}: must be a list of {{worker, iteration}}")
    events = []
    for index, item in enumerate(value):
        entry = Section(item, f"{section.key(name)}[{index}]", ("worker", "iteration"))
        events.append(FaultEvent(entry.integer("worker"), entry.integer("iteration")))
    workers = [event.worker for event in events]
    if len(set(workers)) != len(workers):
        raise ConfigError(f"{section.key(name)}: lists a worker twice")
    return tuple(sorted(events, key=lambda e: (e.iteration, e.worker)))
