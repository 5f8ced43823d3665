"""Caught liars: what the master does with the workers a decoder names, and when it must stop.

A code that corrects adversaries names the liars it corrected (``DecodeResult.adversaries``).
Two things follow from that, both on the master (``gradcode.train.master``):

**The checks** (every run whose code names liars). A decoding is vouched for only within the
code's bound, at most ``a`` liars among the messages decoded. Past it the master must not step
along the result, and the run ends as a *decoding failure* (``DecodingFailed``: one line, the
iteration, ``summary.json``'s ``stopped``; exit status ``EXIT_DECODING_FAILED``), never with a
silently wrong model:

- the decoder refused every set of messages it could be given: all the live workers'
  messages of the iteration are in hand and it still raises ``NotDecodableError`` (each code
  says what it detects: no majority in a repetition group, no ``a`` liars that explain the
  syndromes of a cyclic or polynomial code);
- it named more than ``a`` workers (a repetition vote can find each group right and still
  more than ``a`` liars in all: the bound the result was decoded under is broken);
- it named a worker that did not lie in that iteration (this run's emulation knows who lies:
  ``adversaries.workers``, ``adversaries.unforeseen`` and their schedule). With at most ``a``
  liars every code here names exactly the liars, so an honest worker named proves that more
  than ``a`` colluding liars deceived it: ``a + 1`` agreeing liars outvoting a repetition
  group's honest members, or moving a cyclic or polynomial code's word onto another
  gradient's. A real deployment has no such knowledge; the emulation uses it to show where
  the codes' own detection ends.

What no check can catch: colluding liars, more than ``a``, that move the word onto another
gradient's codeword while naming only liars (or nobody). Nothing in the messages tells it
apart from an honest word; this is the codes' minimum distance, not a gap of a decoder.

**The policy** ``adversaries.caught`` (``keep``, the default: a caught liar answers on and is
corrected again each time it lies). Under ``drop`` a worker named in iteration ``t`` is a
failed worker from ``t + 1`` on, by the failure machinery's own rule
(``gradcode.train.faults.failures``): no more models to it (with ``scatter`` its chunk is the
master's to send, as a dead worker's), none of its messages used or waited for, and the code
decodes from the others while ``is_decodable`` holds without it; when it no longer does, the
run stops like one whose workers died (``CannotContinue``, exit status 3). With
``faults.spares`` a spare takes its place (``gradcode.train.faults.spares``), honest: the liar
is the process, not the worker index. The rank dropped stays alive and idle until the end,
when it is stopped on ``world``. Each drop is in the log record of the iteration that caught
the worker (``dropped``: worker, rank, iteration, reason "named as a liar by the decoder"),
in ``dropped_workers`` of every record after, on stderr, and in ``summary.json``'s
``dropped``. A resumed run starts with nobody dropped (the policy is not in the checkpoint's
fingerprint, as failures are not): a liar still lying is caught and dropped again.
"""

from __future__ import annotations

import sys
from dataclasses import asdict, dataclass
from typing import Any

from gradcode.attacks import AttackPlan

#: the job's exit status when a decoding failed (1: a bug, 2: bad input, 3: failures)
EXIT_DECODING_FAILED = 4

#: why a worker was dropped (the log's ``dropped[].reason``)
LIAR_REASON = "named as a liar by the decoder"


class DecodingFailed(RuntimeError):
    """The messages of ``iteration`` could not be decoded consistently (module docstring):
    the run stops without stepping along them."""

    exit_status = EXIT_DECODING_FAILED

    def __init__(self, iteration: int, reason: str, refusals: list[str] | None = None) -> None:
        self.iteration, self.reason = iteration, reason
        self.refusals = list(refusals or [])
        super().__init__(reason)


@dataclass
class Drop:
    """One caught liar taken out of the run."""

    worker: int
    rank: int
    iteration: int  # the iteration whose decoding named it; it is gone from the next on
    reason: str = LIAR_REASON

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


class Caught:
    """The master's view of caught liars: the checks and the drop policy (module docstring)."""

    def __init__(self, a: int, attacks: AttackPlan, policy: str) -> None:
        self.a, self.attacks, self.policy = a, attacks, policy
        self.dropped: dict[int, Drop] = {}  # by worker
        self._fresh: list[Drop] = []

    def check(self, t: int, named: list[int], *, proven: bool = False) -> None:
        """``DecodingFailed`` when the workers ``named`` in iteration ``t`` exceed what the
        code vouches for: more than ``a``, or one that did not lie (unless ``proven``: their
        own messages were refused, ``gradcode.train.refusals``)."""
        if len(named) > self.a:
            raise DecodingFailed(
                t,
                f"the decoder named workers {named} as liars, more than the code corrects "
                f"(a = {self.a}): its result is not vouched for",
            )
        honest = [] if proven else [w for w in named if not self.attacks.lies(w, t)]
        if honest:
            raise DecodingFailed(
                t,
                f"the decoder named worker {honest[0]} as a liar, which did not lie: more "
                f"liars than the code corrects (a = {self.a}) deceived it",
            )

    def drop(self, t: int, named: list[int], rank_of: dict[int, int]) -> list[Drop]:
        """Under ``drop``: the workers ``named`` in iteration ``t`` leave the run (``rank_of``:
        the rank serving each worker now); the new drops."""
        if self.policy != "drop":
            return []
        made = []
        for worker in named:
            rank = rank_of[worker]
            if worker in self.dropped and self.dropped[worker].rank == rank:
                continue  # a message of the iteration it was caught in, decoded late
            record = Drop(worker, rank, t)
            self.dropped[worker] = record
            made.append(record)
            print(
                f"gradcode.train: iteration {t}: worker {worker} (rank {rank}) dropped: "
                f"{LIAR_REASON} (adversaries.caught: drop)",
                file=sys.stderr,
                flush=True,
            )
        self._fresh += made
        return made

    def ranks(self) -> set[int]:
        """World ranks dropped: their messages are ignored, nothing more is sent to them."""
        return {drop.rank for drop in self.dropped.values()}

    def workers(self) -> list[int]:
        return sorted(self.dropped)

    def fields(self) -> dict[str, Any]:
        """The iteration record's ``dropped`` (new this iteration) and ``dropped_workers``."""
        if self.policy != "drop":
            return {}
        fresh, self._fresh = self._fresh, []
        return {"dropped_workers": self.workers()} | (
            {"dropped": [drop.as_dict() for drop in fresh]} if fresh else {}
        )

    def records(self) -> list[dict[str, Any]]:
        return [self.dropped[worker].as_dict() for worker in sorted(self.dropped)]
