"""A collector's pulls under ``runtime.collection: pull``: which notices the master (a tree's
parents too) answers with a ``PULL`` (the way is chosen in ``gradcode.runfile.collection``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gradcode.codes.base import GradientCode
from gradcode.codes.completion import CompletionRule
from gradcode.codes.tree import MASTER
from gradcode.topology import topology_of


class Pulling:
    """Which notices a collector (the master, a tree parent) answers with a ``PULL``.

    ``start()`` every iteration; ``wants(key)`` says whether to ask for the announced message
    (and counts it when it does). ``widen()`` (the rule held but the decoder refused the set,
    e.g. a numerical failure): every notice is wanted for the rest of the iteration, as if
    pushed. Subclasses say what the rule still needs (``_needs``, ``_reset``).
    """

    wide = False

    def start(self) -> None:
        self.wide = False
        self._reset()

    def widen(self) -> None:
        self.wide = True

    def wants(self, key: Any) -> bool:
        return self.wide or self._needs(key)

    def _reset(self) -> None:
        raise NotImplementedError

    def _needs(self, key: Any) -> bool:
        raise NotImplementedError


class Puller(Pulling):
    """By a ``CompletionRule``: the first ``needed`` notices of every group of ``rule``, no
    others and none of keys in no group."""

    def __init__(self, rule: CompletionRule) -> None:
        self.rule = rule
        self.group_of: dict[Any, int] = {
            key: g for g, group in enumerate(rule.groups) for key in group
        }
        self._reset()

    def _reset(self) -> None:
        self.pulled = [0] * len(self.rule.groups)

    def _needs(self, key: Any) -> bool:
        group = self.group_of.get(key)
        if group is None or self.pulled[group] >= self.rule.needed[group]:
            return False
        self.pulled[group] += 1
        return True


def collector_puller(code: GradientCode, node: int = MASTER) -> Pulling:
    """The puller of collector ``node`` (the master: ``MASTER``; a tree's parents), asked by
    the keys it receives: by its declared rule (``Topology.collector_rule``: a flat code's
    ``completion_rule``, a tree parent's ``children_rule``), else a ``DecodablePuller`` by
    its test of whether what it pulled suffices."""
    rule, decodable = topology_of(code).collector_rule(code, node)
    return Puller(rule) if rule is not None else DecodablePuller(decodable)


class DecodablePuller(Pulling):
    """A rule not declared as groups: ``wants(key)`` while the keys pulled so far are not
    ``decodable`` (what a collector taking notices in their order needs, ``decodable_prefix``).
    """

    def __init__(self, decodable: Callable[[list[Any]], bool]) -> None:
        self.decodable = decodable
        self._reset()

    def _reset(self) -> None:
        self.pulled: list[Any] = []
        self.enough = False  # ``decodable(pulled)``, asked once per key pulled

    def _needs(self, key: Any) -> bool:
        if self.enough or key in self.pulled:
            return False
        self.pulled.append(key)
        self.enough = self.decodable(self.pulled)
        return True


class Pulls:
    """A collector's notices and pulls in one iteration (``runtime.collection: pull``).

    ``notice(result, key, began)`` takes a notice of a ready message and says whether it was
    pulled (``ask(source, iteration, key)`` sends the ``PULL``); ``widen()`` pulls every
    notice from now on, those announced and not pulled too (the decoder refused what the rule
    asked for, or a worker died: it may have been pulled). ``notices`` is the iteration
    record's."""

    def __init__(self, puller: Pulling, ask: Callable[[int, int, int], None]) -> None:
        self.puller, self.ask = puller, ask
        self.notices: list[dict[str, Any]] = []
        #: this iteration's notices not pulled, with where to ask for them
        self._unpulled: list[tuple[dict[str, Any], tuple[int, int, int]]] = []

    def start(self) -> None:
        self.puller.start()
        self.notices, self._unpulled = [], []

    def notice(self, result: Any, key: Any, began: float) -> None:
        """A worker announced a ready message: ask for it if the code still needs one of its
        group (``result``: the notice, a ``gradcode.train.transport.Result``)."""
        pulled = self.puller.wants(key)
        notice = {
            "key": key,
            "worker": int(result.field("worker")),
            "arrival": result.arrived - began,
            "started": result.field("started") - began,
            "compute": result.field("compute"),
            "injected_compute": result.field("injected_compute"),
            "pulled": pulled,
        }
        self.notices.append(notice)
        where = (result.source, result.iteration, result.key)
        if pulled:
            self.ask(*where)
        else:
            self._unpulled.append((notice, where))

    def widen(self) -> None:
        if self.puller.wide:
            return
        self.puller.widen()
        for notice, where in self._unpulled:
            notice["pulled"] = True
            self.ask(*where)
        self._unpulled = []
